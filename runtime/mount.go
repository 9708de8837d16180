package runtime

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// A mount must not be a way out: wazero's own directory mounts resolve
// every guest path with the host's open(2), which follows symlinks wherever
// they point, so a symlink inside a granted directory (or one the plugin
// creates in a read-write mount: path_symlink("../../../etc", "x")) reached
// any file the server could read. mountFS confines each mount to its
// directory with an os.Root, which resolves symlinks and ".." inside the
// root and refuses whatever leaves it.

// mountFS returns the file system the guest sees for mt.
//
// A read-only mount is the os.Root's fs.FS behind wazero's read-only
// adapter: every open is resolved by the root, so nothing outside can be
// reached, however the directory changes.
//
// A read-write mount needs wazero's own files (for writes, seeks,
// truncation), which open by path; it is a confinedFS: each operation first
// resolves its path through the os.Root and fails with EPERM if that
// leaves the mount, and the plugin may not create symlinks. A race with
// another process that swaps a checked directory for a symlink between the
// check and the open remains possible; plugins themselves cannot create
// the symlink such a race needs.
func mountFS(mt Mount) (experimentalsys.FS, error) {
	root, err := os.OpenRoot(mt.HostPath)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mt.GuestPath, err)
	}
	if mt.ReadOnly {
		return &sysfs.ReadFS{FS: &sysfs.AdaptFS{FS: root.FS()}}, nil
	}
	// os.Root's escape error is unexported: take it from an escape.
	_, err = root.Stat("..")
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil, fmt.Errorf("mount %s: cannot tell escapes from %s: %v", mt.GuestPath, mt.HostPath, err)
	}
	return &confinedFS{FS: sysfs.DirFS(mt.HostPath), root: root, escape: pe.Err}, nil
}

// confinedFS is a read-write directory mount whose operations are checked
// against an os.Root first (see mountFS).
type confinedFS struct {
	experimentalsys.FS
	root   *os.Root
	escape error // what root returns for a path that leaves it
}

// check resolves p inside the root, following a final symlink when follow
// is set (else only the directories leading to p), and returns EPERM if the
// resolution leaves the mount. Other failures are left to the operation
// itself, which reports them with the right errno.
func (c *confinedFS) check(p string, follow bool) experimentalsys.Errno {
	if p == "" || p == "/" {
		p = "."
	}
	if !follow {
		p = path.Dir(p)
	}
	if _, err := c.root.Stat(p); err != nil && errors.Is(err, c.escape) {
		return experimentalsys.EPERM
	}
	return 0
}

// OpenFile checks p, following a final symlink unless O_NOFOLLOW is set.
func (c *confinedFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if e := c.check(p, flag&experimentalsys.O_NOFOLLOW == 0); e != 0 {
		return nil, e
	}
	return c.FS.OpenFile(p, flag, perm)
}

// Lstat checks the directories leading to p.
func (c *confinedFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := c.check(p, false); e != 0 {
		return sys.Stat_t{}, e
	}
	return c.FS.Lstat(p)
}

// Stat checks p, following a final symlink.
func (c *confinedFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	if e := c.check(p, true); e != 0 {
		return sys.Stat_t{}, e
	}
	return c.FS.Stat(p)
}

// Mkdir checks the directories leading to p.
func (c *confinedFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := c.check(p, false); e != 0 {
		return e
	}
	return c.FS.Mkdir(p, perm)
}

// Chmod checks p, following a final symlink (chmod follows it).
func (c *confinedFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if e := c.check(p, true); e != 0 {
		return e
	}
	return c.FS.Chmod(p, perm)
}

// Rename checks the directories leading to both paths.
func (c *confinedFS) Rename(from, to string) experimentalsys.Errno {
	if e := c.check(from, false); e != 0 {
		return e
	}
	if e := c.check(to, false); e != 0 {
		return e
	}
	return c.FS.Rename(from, to)
}

// Rmdir checks the directories leading to p.
func (c *confinedFS) Rmdir(p string) experimentalsys.Errno {
	if e := c.check(p, false); e != 0 {
		return e
	}
	return c.FS.Rmdir(p)
}

// Unlink checks the directories leading to p.
func (c *confinedFS) Unlink(p string) experimentalsys.Errno {
	if e := c.check(p, false); e != 0 {
		return e
	}
	return c.FS.Unlink(p)
}

// Link checks the directories leading to both paths (link(2) does not
// follow a final symlink).
func (c *confinedFS) Link(oldPath, newPath string) experimentalsys.Errno {
	if e := c.check(oldPath, false); e != 0 {
		return e
	}
	if e := c.check(newPath, false); e != 0 {
		return e
	}
	return c.FS.Link(oldPath, newPath)
}

// Symlink is refused: a plugin-made symlink is what a race to get out of
// the mount would need.
func (c *confinedFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

// Readlink checks the directories leading to p.
func (c *confinedFS) Readlink(p string) (string, experimentalsys.Errno) {
	if e := c.check(p, false); e != 0 {
		return "", e
	}
	return c.FS.Readlink(p)
}

// Utimens checks p, following a final symlink.
func (c *confinedFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if e := c.check(p, true); e != 0 {
		return e
	}
	return c.FS.Utimens(p, atim, mtim)
}
