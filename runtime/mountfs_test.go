package runtime

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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

// mountracePool returns a pool of testdata/hostile/mountrace.wasm with mt.
func mountracePool(t *testing.T, l Limits, mt ...Mount) *Pool {
	t.Helper()
	raw, err := os.ReadFile("../testdata/hostile/mountrace.wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := testEngine.Compile(context.Background(), "mountrace", raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	p, err := m.NewPool(l, Sandbox{Mounts: mt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// toolText calls tool on p and returns the text of its result.
func toolText(t *testing.T, p *Pool, tool string) string {
	t.Helper()
	_, out, err := p.Call(context.Background(), []byte(`{"method":"tools/call","params":{"name":"`+tool+`"}}`), nil)
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
			p := mountracePool(t, Limits{Instances: 2}, Mount{HostPath: w.mount, GuestPath: "/data"})
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
			read := func() (data, readErr, writeErr string) {
				t.Helper()
				_, out, err := p.Call(context.Background(), []byte(`{"method":"readfile","params":"/data/ok.txt"}`), nil)
				if err != nil {
					t.Fatal(err)
				}
				var r struct{ Data, ReadErr, WriteErr string }
				if err := json.Unmarshal(out, &r); err != nil {
					t.Fatalf("%s: %v", out, err)
				}
				return r.Data, r.ReadErr, r.WriteErr
			}
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
	p := mountracePool(t, Limits{}, Mount{HostPath: w.mount, GuestPath: "/data", ReadOnly: true})
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
