package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// raceWorld is a mount next to a directory it must never reach:
//
//	dir/outside/secret.txt   "TOP SECRET"
//	dir/mount/ok.txt         "fine"
//	dir/mount/sub/in.txt     "inside"
//	dir/mount/dirlink        -> ../outside (placed by the host)
type raceWorld struct {
	dir, mount, outside string
}

func newRaceWorld(t *testing.T) raceWorld {
	t.Helper()
	dir := t.TempDir()
	w := raceWorld{dir: dir, mount: filepath.Join(dir, "mount"), outside: filepath.Join(dir, "outside")}
	for _, err := range []error{
		os.MkdirAll(filepath.Join(w.mount, "sub"), 0o755),
		os.MkdirAll(w.outside, 0o755),
		os.WriteFile(filepath.Join(w.outside, "secret.txt"), []byte("TOP SECRET"), 0o644),
		os.WriteFile(filepath.Join(w.mount, "ok.txt"), []byte("fine"), 0o644),
		os.WriteFile(filepath.Join(w.mount, "sub", "in.txt"), []byte("inside"), 0o644),
		os.Symlink("../outside", filepath.Join(w.mount, "dirlink")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// escaped reports what reached outside: a file created there.
func (w raceWorld) escaped(t *testing.T) string {
	t.Helper()
	ents, err := os.ReadDir(w.outside)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if e.Name() != "secret.txt" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "created outside the mount: " + strings.Join(names, ", ")
}

// toolText calls tool on p and returns the text of its result.
func toolText(t *testing.T, p *Pool, tool string) string {
	t.Helper()
	_, out, err := p.Call(context.Background(), []byte(`{"method":"tools/call","params":{"name":"`+tool+`"}}`), nil, nil)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	var r struct {
		Content []struct{ Text string }
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Content) != 1 {
		t.Fatalf("%s: %s: %v", tool, out, err)
	}
	return r.Content[0].Text
}

// probeResult is mountrace's probe answer.
type probeResult struct{ opens, reads, stats, made int }

func parseProbe(t *testing.T, s string) probeResult {
	t.Helper()
	var r probeResult
	if _, err := fmt.Sscanf(s, "opens %d read %d stats %d made %d", &r.opens, &r.reads, &r.stats, &r.made); err != nil {
		t.Fatalf("probe answered %q: %v", s, err)
	}
	return r
}

// TestMountRace races the mount's path resolution: while one side swaps
// the directory sub for a symlink out of the mount and back, as fast as it
// can, the plugin opens, reads, stats and creates files under sub/ (300
// times a call, up to 60 calls). Nothing it does may reach outside: sub
// never holds secret.txt, so an open or stat of sub/secret.txt that
// succeeds went through the symlink, and a created.txt outside is an
// escape. The swapper is the host (another process could do the same) or a
// second call of the same plugin (renames are allowed; the symlink is the
// host's).
func TestMountRace(t *testing.T) {
	const maxCalls = 60
	for _, swapper := range []string{"host", "plugin"} {
		t.Run(swapper, func(t *testing.T) {
			w := newRaceWorld(t)
			p := hostilePool(t, "mountrace", Limits{Instances: 2}, Mount{HostPath: w.mount, GuestPath: "/data"})
			var (
				stop    atomic.Bool
				swaps   atomic.Int64
				wg      sync.WaitGroup
				swapOut string
			)
			wg.Add(1)
			go func() {
				defer wg.Done()
				if swapper == "plugin" {
					// One call of 20,000 rounds; probes run while it does.
					defer stop.Store(true)
					swapOut = toolText(t, p, "swap")
					return
				}
				sub, tmp, link := filepath.Join(w.mount, "sub"), filepath.Join(w.mount, "swaptmp"), filepath.Join(w.mount, "dirlink")
				for !stop.Load() {
					for _, mv := range [][2]string{{sub, tmp}, {link, sub}, {sub, link}, {tmp, sub}} {
						if err := os.Rename(mv[0], mv[1]); err != nil {
							t.Error(err)
							return
						}
					}
					swaps.Add(1)
				}
			}()
			var total probeResult
			calls := 0
			for ; calls < maxCalls && !(swapper == "plugin" && stop.Load()); calls++ {
				r := parseProbe(t, toolText(t, p, "probe"))
				total.opens += r.opens
				total.reads += r.reads
				total.stats += r.stats
				total.made += r.made
				if r.opens+r.stats > 0 {
					calls++
					break // escaped: no need to go on
				}
			}
			stop.Store(true)
			wg.Wait()
			t.Logf("%d probe calls; %d host swaps; plugin swapper %q; totals %+v", calls, swaps.Load(), swapOut, total)
			if swapper == "plugin" && !strings.HasPrefix(swapOut, "swapped 20000 failed 0") {
				t.Errorf("the plugin's swap: %q, want 20000 rounds without a failure", swapOut)
			}
			if total.opens > 0 || total.reads > 0 || total.stats > 0 {
				t.Errorf("the plugin opened sub/secret.txt %d times (read the secret %d times) and stat'ed it %d times: it was outside the mount",
					total.opens, total.reads, total.stats)
			}
			if e := w.escaped(t); e != "" {
				t.Error(e)
			}
			if total.made == 0 {
				t.Error("the plugin never created sub/created.txt inside the mount: the probe tested nothing")
			}
		})
	}
}

// TestMountReplacedAfterLoad: a mount is the directory granted when the
// plugin loaded. Replacing it on the host afterwards (renaming it away and
// putting a symlink out, or another directory, in its place) changes
// nothing the plugin sees: it still reads and writes the original
// directory, wherever it moved, and never the replacement.
func TestMountReplacedAfterLoad(t *testing.T) {
	for _, tc := range []struct {
		name     string
		readOnly bool
		link     bool // replace with a symlink to outside, else a new directory
	}{
		{"rw by symlink", false, true},
		{"rw by directory", false, false},
		{"ro by symlink", true, true},
		{"ro by directory", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newRaceWorld(t)
			p := newPool(t, goPlugin, Limits{Instances: 1}, Sandbox{Mounts: []Mount{{HostPath: w.mount, GuestPath: "/data", ReadOnly: tc.readOnly}}})
			read := func() (data, readErr, writeErr string) { return readFile(t, p, "/data/ok.txt") }
			if data, readErr, _ := read(); data != "fine" {
				t.Fatalf("before: %q (%s)", data, readErr)
			}
			moved := w.mount + ".orig"
			replacement := w.outside
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(os.WriteFile(filepath.Join(w.outside, "ok.txt"), []byte("OUTSIDE"), 0o644))
			must(os.Rename(w.mount, moved))
			if tc.link {
				must(os.Symlink(w.outside, w.mount))
			} else {
				replacement = w.mount
				must(os.Mkdir(w.mount, 0o755))
				must(os.WriteFile(filepath.Join(w.mount, "ok.txt"), []byte("OUTSIDE"), 0o644))
			}
			// Twice: the instance of the first call, then a fresh one.
			for i := range 2 {
				data, readErr, writeErr := read()
				if data != "fine" {
					t.Errorf("call %d after the replacement read %q (%s), want the original directory's \"fine\"", i, data, readErr)
				}
				if _, err := os.Stat(filepath.Join(replacement, "ok.txt.new")); err == nil {
					t.Errorf("call %d wrote into the replacement", i)
				}
				_, err := os.Stat(filepath.Join(moved, "ok.txt.new"))
				if tc.readOnly && (err == nil || writeErr == "") {
					t.Errorf("call %d wrote through a read-only mount (%v)", i, err)
				}
				if !tc.readOnly && err != nil {
					t.Errorf("call %d: the original directory was not written: %v (%s)", i, err, writeErr)
				}
				if inst := p.takeIdle(); i == 0 && inst != nil {
					p.closeModule(inst.mod)
				}
			}
		})
	}
}

// TestMountReadOnlyWrites: every write-ish WASI call under a read-only
// mount fails with EROFS (69), and writing through a descriptor opened
// for reading with EBADF (8); nothing changes on disk.
func TestMountReadOnlyWrites(t *testing.T) {
	w := newRaceWorld(t)
	before := treeOf(t, w.dir)
	p := hostilePool(t, "mountrace", Limits{}, Mount{HostPath: w.mount, GuestPath: "/data", ReadOnly: true})
	got := toolText(t, p, "writes")
	want := "create 69 write 69 mkdir 69 unlink 69 rmdir 69 rename 69 times 69 link 69 symlink 69 truncate 69 fdwrite 8"
	if got != want {
		t.Errorf("writes under a read-only mount:\n got %s\nwant %s", got, want)
	}
	if after := treeOf(t, w.dir); after != before {
		t.Errorf("the tree changed:\n%s\nto\n%s", before, after)
	}
}

// treeOf lists every path under dir with its size and mode.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// fsWorld is a raceWorld with more ways in and out of the mount, and the
// mount as a read-write and a read-only rootFS:
//
//	dir/secret.txt
//	mount/empty/               an empty directory
//	mount/in -> sub            stays inside
//	mount/up -> ..             out
//	mount/out -> ../outside    out (raceWorld's dirlink, under another name)
//	mount/abs -> dir/outside   out, absolute
//	mount/file_out -> ../secret.txt
//	mount/dangling -> nowhere  inside, dangling
//	mount/dangling_out -> ../outside/new.txt
//	mount/loop -> loop
type fsWorld struct {
	raceWorld
	rw, ro experimentalsys.FS
}

func newFSWorld(t testing.TB) fsWorld {
	t.Helper()
	dir := t.TempDir()
	w := fsWorld{raceWorld: raceWorld{dir: dir, mount: filepath.Join(dir, "mount"), outside: filepath.Join(dir, "outside")}}
	m := w.mount
	for _, err := range []error{
		os.MkdirAll(filepath.Join(m, "sub"), 0o755),
		os.MkdirAll(filepath.Join(m, "empty"), 0o755),
		os.MkdirAll(w.outside, 0o755),
		os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("TOP SECRET"), 0o644),
		os.WriteFile(filepath.Join(w.outside, "secret.txt"), []byte("TOP SECRET"), 0o644),
		os.WriteFile(filepath.Join(m, "ok.txt"), []byte("fine"), 0o644),
		os.WriteFile(filepath.Join(m, "sub", "in.txt"), []byte("inside"), 0o644),
		os.Symlink("sub", filepath.Join(m, "in")),
		os.Symlink("..", filepath.Join(m, "up")),
		os.Symlink("../outside", filepath.Join(m, "out")),
		os.Symlink(w.outside, filepath.Join(m, "abs")),
		os.Symlink("../secret.txt", filepath.Join(m, "file_out")),
		os.Symlink("nowhere", filepath.Join(m, "dangling")),
		os.Symlink("../outside/new.txt", filepath.Join(m, "dangling_out")),
		os.Symlink("loop", filepath.Join(m, "loop")),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if w.rw, err = mountFS(Mount{HostPath: m, GuestPath: "/rw"}); err != nil {
		t.Fatal(err)
	}
	if w.ro, err = mountFS(Mount{HostPath: m, GuestPath: "/ro", ReadOnly: true}); err != nil {
		t.Fatal(err)
	}
	return w
}

// outsideTree lists everything under dir but the mount: what no mount
// operation may change.
func (w fsWorld) outsideTree(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	err := filepath.Walk(w.dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p == w.mount {
			return filepath.SkipDir
		}
		data := ""
		if fi.Mode().IsRegular() {
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			data = string(raw)
		}
		fmt.Fprintf(&b, "%s %v %d %d %q\n", p, fi.Mode(), fi.Size(), fi.ModTime().UnixNano(), data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func openRead(fsys experimentalsys.FS, p string, flag experimentalsys.Oflag) experimentalsys.Errno {
	f, errno := fsys.OpenFile(p, experimentalsys.O_RDONLY|flag, 0)
	if errno == 0 {
		f.Close()
	}
	return errno
}

func create(fsys experimentalsys.FS, p string, flag experimentalsys.Oflag) experimentalsys.Errno {
	f, errno := fsys.OpenFile(p, experimentalsys.O_RDWR|experimentalsys.O_CREAT|flag, 0o644)
	if errno == 0 {
		f.Close()
	}
	return errno
}

func statErrno(fsys experimentalsys.FS, p string) experimentalsys.Errno {
	_, errno := fsys.Stat(p)
	return errno
}

// TestRootFSPaths: each path operation of a mount, on a fresh world, read-
// write and read-only: what resolves inside works with POSIX errors, what
// leaves is EPERM, what writes under a read-only mount is EROFS, and
// nothing outside changes.
func TestRootFSPaths(t *testing.T) {
	const (
		ok      = experimentalsys.Errno(0)
		eperm   = experimentalsys.EPERM
		erofs   = experimentalsys.EROFS
		enoent  = experimentalsys.ENOENT
		eloop   = experimentalsys.ELOOP
		eisdir  = experimentalsys.EISDIR
		enotdir = experimentalsys.ENOTDIR
	)
	type fsop func(experimentalsys.FS) experimentalsys.Errno
	stat := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return statErrno(f, p) }
	}
	lstat := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { _, e := f.Lstat(p); return e }
	}
	open := func(p string, fl experimentalsys.Oflag) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return openRead(f, p, fl) }
	}
	mk := func(p string, fl experimentalsys.Oflag) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return create(f, p, fl) }
	}
	mkdir := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return f.Mkdir(p, 0o755) }
	}
	unlink := func(p string) fsop { return func(f experimentalsys.FS) experimentalsys.Errno { return f.Unlink(p) } }
	rmdir := func(p string) fsop { return func(f experimentalsys.FS) experimentalsys.Errno { return f.Rmdir(p) } }
	rename := func(a, b string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return f.Rename(a, b) }
	}
	readlink := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { _, e := f.Readlink(p); return e }
	}
	utimens := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return f.Utimens(p, 1e9, 2e9) }
	}
	chmod := func(p string) fsop {
		return func(f experimentalsys.FS) experimentalsys.Errno { return f.Chmod(p, 0o600) }
	}
	nofollow := experimentalsys.O_NOFOLLOW
	tests := []struct {
		name   string
		op     fsop
		rw, ro experimentalsys.Errno
	}{
		{"stat a file", stat("ok.txt"), ok, ok},
		{"stat the mount", stat(""), ok, ok},
		{"stat ..", stat("../secret.txt"), eperm, eperm},
		{"stat absolute", stat("/etc/passwd"), eperm, eperm},
		{"stat through a symlink out", stat("out/secret.txt"), eperm, eperm},
		{"stat an absolute symlink", stat("abs"), eperm, eperm},
		{"stat a symlink to ..", stat("up/secret.txt"), eperm, eperm},
		{"stat through a symlink inside", stat("in/in.txt"), ok, ok},
		{"stat a symlink loop", stat("loop"), eloop, eloop},
		{"stat sub/../..", stat("sub/../../secret.txt"), eperm, eperm},
		{"lstat a symlink out", lstat("out"), ok, ok},
		{"lstat through a symlink out", lstat("out/secret.txt"), eperm, eperm},
		{"open a file", open("ok.txt", 0), ok, ok},
		{"open through a symlink out", open("out/secret.txt", 0), eperm, eperm},
		{"open a file symlink out", open("file_out", 0), eperm, eperm},
		{"open no-follow a symlink", open("in", nofollow), eloop, eloop},
		{"open no-follow a file", open("sub/in.txt", nofollow), ok, ok},
		{"open no-follow through a symlink inside", open("in/in.txt", nofollow), ok, ok},
		{"open no-follow through a symlink out", open("out/secret.txt", nofollow), eperm, eperm},
		{"open no-follow ..", open("../secret.txt", nofollow), eperm, eperm},
		{"open no-follow a file with a slash", open("ok.txt/", nofollow), enotdir, enotdir},
		{"create", mk("sub/new.txt", 0), ok, erofs},
		{"create through a symlink out", mk("out/new.txt", 0), eperm, erofs},
		{"create through a dangling symlink inside", mk("dangling", 0), ok, erofs},
		{"create through a dangling symlink out", mk("dangling_out", 0), eperm, erofs},
		{"create no-follow a dangling symlink", mk("dangling", nofollow), eloop, erofs},
		{"mkdir", mkdir("newdir"), ok, erofs},
		{"mkdir existing", mkdir("sub"), experimentalsys.EEXIST, erofs},
		{"mkdir under a file", mkdir("ok.txt/x"), enoent, erofs},
		{"mkdir through a symlink out", mkdir("out/x"), eperm, erofs},
		{"mkdir ..", mkdir("../x"), eperm, erofs},
		{"unlink", unlink("ok.txt"), ok, erofs},
		{"unlink a directory", unlink("sub"), eisdir, erofs},
		{"unlink a directory with a slash", unlink("sub/"), eisdir, erofs},
		{"unlink a file with a slash", unlink("ok.txt/"), enotdir, erofs},
		{"unlink a symlink out (the link)", unlink("out"), ok, erofs},
		{"unlink through a symlink out", unlink("out/secret.txt"), eperm, erofs},
		{"unlink ..", unlink("../secret.txt"), eperm, erofs},
		{"unlink the mount", unlink(""), eisdir, erofs},
		{"rmdir", rmdir("empty"), ok, erofs},
		{"rmdir not empty", rmdir("sub"), experimentalsys.ENOTEMPTY, erofs},
		{"rmdir a file", rmdir("ok.txt"), enotdir, erofs},
		{"rmdir a symlink to a directory", rmdir("in"), enotdir, erofs},
		{"rmdir a symlink out", rmdir("out"), enotdir, erofs},
		{"rmdir through a symlink out", rmdir("up/outside"), eperm, erofs},
		{"rmdir the mount", rmdir("."), experimentalsys.EINVAL, erofs},
		{"rename", rename("ok.txt", "moved.txt"), ok, erofs},
		{"rename a symlink out (the link)", rename("out", "sub/out"), ok, erofs},
		{"rename into a symlink out", rename("ok.txt", "out/x"), eperm, erofs},
		{"rename out of a symlink out", rename("out/secret.txt", "stolen"), eperm, erofs},
		{"rename ..", rename("ok.txt", "../x"), eperm, erofs},
		{"rename a file with a slash", rename("ok.txt/", "x"), enotdir, erofs},
		{"link", func(f experimentalsys.FS) experimentalsys.Errno { return f.Link("ok.txt", "hard") }, eperm, erofs},
		{"symlink", func(f experimentalsys.FS) experimentalsys.Errno { return f.Symlink("ok.txt", "sym") }, eperm, erofs},
		{"readlink", readlink("out"), ok, ok},
		{"readlink a file", readlink("ok.txt"), experimentalsys.EINVAL, experimentalsys.EINVAL},
		{"readlink through a symlink out", readlink("up/mount/out"), eperm, eperm},
		{"utimens", utimens("ok.txt"), ok, erofs},
		{"utimens through a symlink inside", utimens("in/in.txt"), ok, erofs},
		{"utimens through a symlink out", utimens("out/secret.txt"), eperm, erofs},
		{"utimens a file symlink out", utimens("file_out"), eperm, erofs},
		{"chmod", chmod("ok.txt"), ok, erofs},
		{"chmod a file symlink out", chmod("file_out"), eperm, erofs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, ro := range []bool{false, true} {
				w := newFSWorld(t)
				before := w.outsideTree(t)
				fsys, want := w.rw, tc.rw
				if ro {
					fsys, want = w.ro, tc.ro
				}
				if got := tc.op(fsys); got != want {
					t.Errorf("read-only %v: %v, want %v", ro, errnoName(got), errnoName(want))
				}
				if after := w.outsideTree(t); after != before {
					t.Errorf("read-only %v: outside the mount changed:\n%s\nto\n%s", ro, before, after)
				}
			}
		})
	}
}

func errnoName(e experimentalsys.Errno) string {
	if e == 0 {
		return "0"
	}
	return fmt.Sprintf("%d (%v)", e, e)
}

// TestRootFSFile: a mount's files work through their descriptors: reads,
// writes, seeks, truncation, append, times, stat and directory listings,
// including a directory whose path is swapped for a symlink out while it
// is open (it is rewound, not reopened by path).
func TestRootFSFile(t *testing.T) {
	w := newFSWorld(t)
	must := func(what string, errno experimentalsys.Errno) {
		t.Helper()
		if errno != 0 {
			t.Fatalf("%s: %v", what, errnoName(errno))
		}
	}
	f, errno := w.rw.OpenFile("sub/new.txt", experimentalsys.O_RDWR|experimentalsys.O_CREAT, 0o644)
	must("create", errno)
	_, errno = f.Write([]byte("hello"))
	must("write", errno)
	_, errno = f.Pwrite([]byte("J"), 0)
	must("pwrite", errno)
	buf := make([]byte, 8)
	n, errno := f.Pread(buf, 0)
	must("pread", errno)
	if string(buf[:n]) != "Jello" {
		t.Errorf("pread %q, want Jello", buf[:n])
	}
	off, errno := f.Seek(1, io.SeekStart)
	must("seek", errno)
	n, errno = f.Read(buf)
	must("read", errno)
	if off != 1 || string(buf[:n]) != "ello" {
		t.Errorf("seek %d, read %q, want 1 and ello", off, buf[:n])
	}
	must("truncate", f.Truncate(2))
	must("append on", f.SetAppend(true))
	if !f.IsAppend() {
		t.Error("IsAppend false after SetAppend(true)")
	}
	_, errno = f.Write([]byte("xy"))
	must("append", errno)
	must("utimens", f.Utimens(1e9, 2e9))
	st, errno := f.Stat()
	must("stat", errno)
	host, err := os.Stat(filepath.Join(w.mount, "sub", "new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(filepath.Join(w.mount, "sub", "new.txt")); string(data) != "Jexy" {
		t.Errorf("file holds %q, want Jexy", data)
	}
	if ino, _ := f.Ino(); st.Size != 4 || st.Mtim != 2e9 || !host.ModTime().Equal(time.Unix(2, 0)) || ino != sys.NewStat_t(host).Ino {
		t.Errorf("stat %+v (ino %d), host %v %v", st, ino, host.ModTime(), sys.NewStat_t(host).Ino)
	}
	if _, errno := f.Readdir(-1); errno != experimentalsys.EBADF {
		t.Errorf("readdir of a file: %v, want EBADF", errnoName(errno))
	}
	must("sync", f.Sync())
	must("datasync", f.Datasync())
	must("close", f.Close())
	if _, errno := f.Write([]byte("x")); errno != experimentalsys.EBADF {
		t.Errorf("write after close: %v, want EBADF", errnoName(errno))
	}

	// A directory: listed, rewound, and kept when its path is swapped.
	d, errno := w.rw.OpenFile("sub", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
	must("open sub", errno)
	names := func() string {
		t.Helper()
		_, errno := d.Seek(0, io.SeekStart)
		must("rewind", errno)
		ents, errno := d.Readdir(-1)
		must("readdir", errno)
		var s []string
		for _, e := range ents {
			s = append(s, e.Name)
		}
		slices.Sort(s)
		return strings.Join(s, " ")
	}
	if got := names(); got != "in.txt new.txt" {
		t.Errorf("sub lists %q", got)
	}
	if err := os.WriteFile(filepath.Join(w.mount, "sub", "later.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "in.txt later.txt new.txt" {
		t.Errorf("sub after a new file lists %q", got)
	}
	if err := os.Rename(filepath.Join(w.mount, "sub"), filepath.Join(w.mount, "sub2")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../outside", filepath.Join(w.mount, "sub")); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "in.txt later.txt new.txt" {
		t.Errorf("sub after its path became a symlink out lists %q, want the directory that was opened", got)
	}
	if _, errno := d.Read(buf); errno != experimentalsys.EISDIR {
		t.Errorf("read of a directory: %v, want EISDIR", errnoName(errno))
	}
	must("close dir", d.Close())

	// A file of a read-only mount.
	r, errno := w.ro.OpenFile("ok.txt", experimentalsys.O_RDONLY, 0)
	must("open ro", errno)
	for _, c := range []struct {
		what string
		got  experimentalsys.Errno
		want experimentalsys.Errno
	}{
		{"truncate", r.Truncate(0), experimentalsys.EROFS},
		{"utimens", r.Utimens(1e9, 1e9), experimentalsys.EROFS},
		{"append", r.SetAppend(true), experimentalsys.EROFS},
		{"write", func() experimentalsys.Errno { _, e := r.Write([]byte("x")); return e }(), experimentalsys.EBADF},
		{"pwrite", func() experimentalsys.Errno { _, e := r.Pwrite([]byte("x"), 0); return e }(), experimentalsys.EBADF},
	} {
		if c.got != c.want {
			t.Errorf("read-only %s: %v, want %v", c.what, errnoName(c.got), errnoName(c.want))
		}
	}
	r.Close()
	if data, _ := os.ReadFile(filepath.Join(w.mount, "ok.txt")); string(data) != "fine" {
		t.Errorf("read-only file changed: %q", data)
	}
}

// FuzzMountPath: whatever paths a guest gives a mount's operations (with
// .., symlinks in and out, absolute paths, slashes, NULs), nothing outside
// the mount changes, and nothing opened, stat'ed or listed is outside.
func FuzzMountPath(f *testing.F) {
	for _, s := range []struct {
		op     uint8
		p1, p2 string
	}{
		{0, "ok.txt", ""}, {0, "../secret.txt", ""}, {2, "out/secret.txt", ""}, {2, "in/../../secret.txt", ""},
		{0, "/etc/passwd", ""}, {3, "up/outside/secret.txt", ""}, {2, "abs/secret.txt", ""}, {5, "up", ""},
		{5, "out/", ""}, {4, "dangling_out", ""}, {4, "out/x", ""}, {6, "up/x", ""}, {7, "file_out", ""},
		{8, "up/outside", ""}, {9, "ok.txt", "up/stolen"}, {9, "up/secret.txt", "mine"}, {10, "out", ""},
		{11, "file_out", ""}, {12, "up/secret.txt", ""}, {2, "sub/./in.txt/", ""}, {0, "a//b", ""},
		{2, "loop/x", ""}, {2, "\x00", ""}, {5, "", ""}, {5, ".", ""}, {0, "sub/../../mount/ok.txt", ""},
	} {
		f.Add(s.op, s.p1, s.p2)
	}
	f.Fuzz(func(t *testing.T, op uint8, p1, p2 string) {
		w := newFSWorld(t)
		before := w.outsideTree(t)
		// The files a mount must never reach, by device and inode.
		type fileID struct{ dev, ino uint64 }
		forbidden := map[fileID]string{}
		for _, p := range []string{w.dir, filepath.Join(w.dir, "secret.txt"), w.outside, filepath.Join(w.outside, "secret.txt"), "/", "/etc", "/etc/passwd"} {
			if fi, err := os.Stat(p); err == nil {
				st := sys.NewStat_t(fi)
				forbidden[fileID{st.Dev, st.Ino}] = p
			}
		}
		check := func(what string, dev uint64, ino sys.Inode) {
			if p, bad := forbidden[fileID{dev, ino}]; bad {
				t.Errorf("%s(%q) reached %s", what, p1, p)
			}
		}
		for _, fsys := range []experimentalsys.FS{w.rw, w.ro} {
			switch op % 13 {
			case 0:
				if st, errno := fsys.Stat(p1); errno == 0 {
					check("stat", st.Dev, st.Ino)
				}
			case 1:
				if st, errno := fsys.Lstat(p1); errno == 0 {
					check("lstat", st.Dev, st.Ino)
				}
			case 2, 3, 4, 5:
				flag := map[uint8]experimentalsys.Oflag{
					2: experimentalsys.O_RDONLY,
					3: experimentalsys.O_RDONLY | experimentalsys.O_NOFOLLOW,
					4: experimentalsys.O_RDWR | experimentalsys.O_CREAT,
					5: experimentalsys.O_RDONLY | experimentalsys.O_DIRECTORY,
				}[op%13]
				file, errno := fsys.OpenFile(p1, flag, 0o644)
				if errno != 0 {
					break
				}
				dev, _ := file.Dev()
				ino, _ := file.Ino()
				check("open", dev, ino)
				if op%13 == 4 {
					_, _ = file.Write([]byte("x"))
				}
				if ents, errno := file.Readdir(-1); errno == 0 {
					for _, e := range ents {
						check("readdir", dev, e.Ino)
						if e.Name == "secret.txt" || e.Name == "mount" {
							t.Errorf("readdir(%q) listed %s: outside the mount", p1, e.Name)
						}
					}
				}
				file.Close()
			case 6:
				fsys.Mkdir(p1, 0o755)
			case 7:
				fsys.Unlink(p1)
			case 8:
				fsys.Rmdir(p1)
			case 9:
				fsys.Rename(p1, p2)
			case 10:
				fsys.Readlink(p1)
			case 11:
				fsys.Utimens(p1, 1e9, 1e9)
			case 12:
				fsys.Chmod(p1, 0o600)
			}
		}
		if after := w.outsideTree(t); after != before {
			t.Errorf("op %d on %q, %q changed outside the mount:\n%s\nto\n%s", op%13, p1, p2, before, after)
		}
		if dir, base, _, errno := splitPath(p1); errno == 0 {
			if strings.Contains(base, "/") || base == ".." || base == "" || dir == ".." || strings.HasPrefix(dir, "../") || path.IsAbs(dir) {
				t.Errorf("splitPath(%q) = %q, %q", p1, dir, base)
			}
		}
	})
}

// BenchmarkMountOpen: what resolving through the root costs against
// wazero's DirFS, which opens by host path (and escapes): open and close
// a file two directories down, and stat it.
func BenchmarkMountOpen(b *testing.B) {
	w := newFSWorld(b)
	if err := os.MkdirAll(filepath.Join(w.mount, "sub", "deep"), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.mount, "sub", "deep", "f.txt"), []byte("x"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		fs   experimentalsys.FS
	}{{"root", w.rw}, {"dirfs", sysfs.DirFS(w.mount)}} {
		b.Run(c.name+"/open", func(b *testing.B) {
			for b.Loop() {
				f, errno := c.fs.OpenFile("sub/deep/f.txt", experimentalsys.O_RDONLY, 0)
				if errno != 0 {
					b.Fatal(errno)
				}
				f.Close()
			}
		})
		b.Run(c.name+"/stat", func(b *testing.B) {
			for b.Loop() {
				if _, errno := c.fs.Stat("sub/deep/f.txt"); errno != 0 {
					b.Fatal(errno)
				}
			}
		})
	}
}
