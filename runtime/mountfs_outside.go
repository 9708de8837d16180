package runtime

import (
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// outsideFS is what a guest finds outside every mount: it is mounted at
// "/" after the plugin's own mounts (unless one of them is "/"), so that a
// guest libc that looks for the preopened directory holding an absolute
// path always finds one. Without it Go and wasi-libc pass descriptor -1
// for a path outside every mount and the guest reports "Bad file number"
// (EBADF); with it such a path does not exist (ENOENT) and creating
// anything fails with permission denied (EACCES), as on a read-only tree
// the plugin may not write. The directories on the way to a mount (/ for
// /data, /a for /a/b) exist, read-only, and list the next component of
// each mount below them, so that a guest can find its mounts by walking
// from /. The mounts themselves are separate preopens (the guest libc
// picks the longest matching one), so outsideFS never sees their paths.
type outsideFS struct {
	experimentalsys.UnimplementedFS
	// dirs maps each directory on the way to a mount, relative to "/"
	// ("." for "/" itself), to its sorted entries.
	dirs map[string][]string
}

// newOutsideFS returns the tree outside the mounts at guest paths.
func newOutsideFS(guestPaths []string) *outsideFS {
	o := &outsideFS{dirs: map[string][]string{".": nil}}
	for _, gp := range guestPaths {
		rel := strings.TrimPrefix(path.Clean(gp), "/")
		for rel != "" && rel != "." {
			dir, base := path.Split(rel)
			dir = strings.TrimSuffix(dir, "/")
			if dir == "" {
				dir = "."
			}
			if !slices.Contains(o.dirs[dir], base) {
				o.dirs[dir] = append(o.dirs[dir], base)
			}
			rel = dir
		}
	}
	for _, ents := range o.dirs {
		slices.Sort(ents)
	}
	return o
}

// lookup cleans p (relative to "/", as wazero gives it) and reports
// whether it names one of the directories on the way to a mount.
func (o *outsideFS) lookup(p string) (string, bool) {
	c := path.Clean("/" + p)[1:]
	if c == "" {
		c = "."
	}
	_, ok := o.dirs[c]
	return c, ok
}

// create is the errno for making p: EEXIST for a directory on the way to
// a mount, EACCES in one, else ENOENT (its parent does not exist).
func (o *outsideFS) create(p string) experimentalsys.Errno {
	c, ok := o.lookup(p)
	if ok {
		return experimentalsys.EEXIST
	}
	if _, ok := o.dirs[path.Dir(c)]; ok {
		return experimentalsys.EACCES
	}
	return experimentalsys.ENOENT
}

// change is the errno for changing or removing p: EACCES for a directory
// on the way to a mount, else ENOENT.
func (o *outsideFS) change(p string) experimentalsys.Errno {
	if _, ok := o.lookup(p); ok {
		return experimentalsys.EACCES
	}
	return experimentalsys.ENOENT
}

// OpenFile implements experimentalsys.FS.
func (o *outsideFS) OpenFile(p string, flag experimentalsys.Oflag, _ fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	c, ok := o.lookup(p)
	switch {
	case !ok && flag&experimentalsys.O_CREAT != 0:
		return nil, o.create(p)
	case !ok:
		return nil, experimentalsys.ENOENT
	case flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL:
		return nil, experimentalsys.EEXIST
	case writes(flag):
		return nil, experimentalsys.EISDIR
	}
	return &outsideDir{name: c, entries: o.dirs[c]}, 0
}

// Stat implements experimentalsys.FS.
func (o *outsideFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	c, ok := o.lookup(p)
	if !ok {
		return sys.Stat_t{}, experimentalsys.ENOENT
	}
	return outsideStat(c), 0
}

// Lstat implements experimentalsys.FS.
func (o *outsideFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) { return o.Stat(p) }

// Mkdir implements experimentalsys.FS.
func (o *outsideFS) Mkdir(p string, _ fs.FileMode) experimentalsys.Errno { return o.create(p) }

// Symlink implements experimentalsys.FS.
func (o *outsideFS) Symlink(_, p string) experimentalsys.Errno { return o.create(p) }

// Link implements experimentalsys.FS.
func (o *outsideFS) Link(from, to string) experimentalsys.Errno {
	if _, ok := o.lookup(from); !ok {
		return experimentalsys.ENOENT
	}
	return o.create(to)
}

// Rename implements experimentalsys.FS.
func (o *outsideFS) Rename(from, _ string) experimentalsys.Errno { return o.change(from) }

// Rmdir implements experimentalsys.FS.
func (o *outsideFS) Rmdir(p string) experimentalsys.Errno { return o.change(p) }

// Unlink implements experimentalsys.FS.
func (o *outsideFS) Unlink(p string) experimentalsys.Errno { return o.change(p) }

// Chmod implements experimentalsys.FS.
func (o *outsideFS) Chmod(p string, _ fs.FileMode) experimentalsys.Errno { return o.change(p) }

// Utimens implements experimentalsys.FS.
func (o *outsideFS) Utimens(p string, _, _ int64) experimentalsys.Errno { return o.change(p) }

// Readlink implements experimentalsys.FS.
func (o *outsideFS) Readlink(p string) (string, experimentalsys.Errno) {
	if _, ok := o.lookup(p); ok {
		return "", experimentalsys.EINVAL // not a symlink
	}
	return "", experimentalsys.ENOENT
}

// outsideStat is the stat of a directory on the way to a mount: read-only,
// its inode made from its name so that each has its own.
func outsideStat(name string) sys.Stat_t {
	var ino uint64 = 14695981039346656037 // FNV-1a of the name
	for i := range len(name) {
		ino = (ino ^ uint64(name[i])) * 1099511628211
	}
	return sys.Stat_t{Ino: ino, Mode: fs.ModeDir | 0o555, Nlink: 1, Mtim: time.Unix(0, 0).UnixNano()}
}

// outsideDir is an open directory of outsideFS.
type outsideDir struct {
	experimentalsys.UnimplementedFile
	name    string
	entries []string
	next    int // entries already read
	closed  bool
}

// IsDir implements experimentalsys.File.
func (d *outsideDir) IsDir() (bool, experimentalsys.Errno) { return true, 0 }

// Ino implements experimentalsys.File.
func (d *outsideDir) Ino() (sys.Inode, experimentalsys.Errno) { return outsideStat(d.name).Ino, 0 }

// Stat implements experimentalsys.File.
func (d *outsideDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if d.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	return outsideStat(d.name), 0
}

// Seek implements experimentalsys.File: only a rewind (to list afresh).
func (d *outsideDir) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if d.closed {
		return 0, experimentalsys.EBADF
	}
	if offset != 0 || whence != 0 {
		return 0, experimentalsys.EISDIR
	}
	d.next = 0
	return 0, 0
}

// Readdir implements experimentalsys.File.
func (d *outsideDir) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if d.closed {
		return nil, experimentalsys.EBADF
	}
	rest := d.entries[d.next:]
	if n > 0 && n < len(rest) {
		rest = rest[:n]
	}
	d.next += len(rest)
	out := make([]experimentalsys.Dirent, 0, len(rest))
	for _, e := range rest {
		out = append(out, experimentalsys.Dirent{Name: e, Ino: outsideStat(path.Join(d.name, e)).Ino, Type: fs.ModeDir})
	}
	return out, 0
}

// Read implements experimentalsys.File.
func (d *outsideDir) Read([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

// Pread implements experimentalsys.File.
func (d *outsideDir) Pread([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EISDIR
}

// Write implements experimentalsys.File.
func (d *outsideDir) Write([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

// Pwrite implements experimentalsys.File.
func (d *outsideDir) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EISDIR
}

// Truncate implements experimentalsys.File.
func (d *outsideDir) Truncate(int64) experimentalsys.Errno { return experimentalsys.EISDIR }

// Sync implements experimentalsys.File.
func (d *outsideDir) Sync() experimentalsys.Errno { return 0 }

// Datasync implements experimentalsys.File.
func (d *outsideDir) Datasync() experimentalsys.Errno { return 0 }

// Utimens implements experimentalsys.File.
func (d *outsideDir) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EACCES }

// Close implements experimentalsys.File.
func (d *outsideDir) Close() experimentalsys.Errno {
	d.closed = true
	return 0
}
