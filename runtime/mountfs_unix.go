//go:build unix

package runtime

import (
	"io/fs"
	"os"
	"strings"
	"syscall"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// sysOflag is the part of flag os.OpenFile has no name for.
func sysOflag(flag experimentalsys.Oflag) int {
	f := 0
	if flag&experimentalsys.O_DIRECTORY != 0 {
		f |= syscall.O_DIRECTORY
	}
	if flag&experimentalsys.O_NONBLOCK != 0 {
		f |= syscall.O_NONBLOCK
	}
	return f
}

// parent opens the directory dir through the root, following symlinks
// inside it, for an operation on one of its entries.
func (r *rootFS) parent(dir string) (*os.File, experimentalsys.Errno) {
	d, err := r.root.OpenFile(dir, os.O_RDONLY|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, r.errno(err)
	}
	return d, 0
}

// openNoFollow opens p without following a final symlink: openat with
// O_NOFOLLOW on the last component, relative to its parent.
func (r *rootFS) openNoFollow(p string, flag int, perm fs.FileMode) (*os.File, experimentalsys.Errno) {
	dir, base, slash, errno := splitPath(p)
	if errno != 0 {
		return nil, errno
	}
	if base == "." {
		f, err := r.root.OpenFile(".", flag, perm)
		return f, r.errno(err)
	}
	if slash {
		flag |= syscall.O_DIRECTORY
	}
	d, errno := r.parent(dir)
	if errno != 0 {
		return nil, errno
	}
	defer d.Close()
	var fd int
	err := ignoringEINTR(func() (err error) {
		fd, err = unix.Openat(int(d.Fd()), base, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
		return err
	})
	if err != nil {
		return nil, experimentalsys.UnwrapOSError(err)
	}
	return os.NewFile(uintptr(fd), base), 0
}

// removeAt removes the entry p (a directory if dir, else anything else)
// with unlinkat relative to its parent, which never follows a symlink.
func (r *rootFS) removeAt(p string, dir bool) experimentalsys.Errno {
	pdir, base, slash, errno := splitPath(p)
	if errno != 0 {
		return errno
	}
	switch {
	case base == "." && dir:
		return experimentalsys.EINVAL // rmdir(".")
	case base == ".":
		return experimentalsys.EISDIR
	case slash && !dir:
		// "name/" names a directory: ENOTDIR if it is not one.
		if _, err := r.root.Stat(p); err != nil {
			return r.errno(err)
		}
		return experimentalsys.EISDIR
	}
	d, errno := r.parent(pdir)
	if errno != 0 {
		return errno
	}
	defer d.Close()
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	errno = experimentalsys.UnwrapOSError(ignoringEINTR(func() error { return unix.Unlinkat(int(d.Fd()), base, flags) }))
	if errno == experimentalsys.EPERM && !dir {
		errno = experimentalsys.EISDIR // darwin's unlink of a directory
	}
	return errno
}

// renameAt renames from to to with renameat relative to their parents,
// which follows neither last component.
func (r *rootFS) renameAt(from, to string) experimentalsys.Errno {
	fdir, fbase, fslash, errno := splitPath(from)
	if errno != 0 {
		return errno
	}
	tdir, tbase, tslash, errno := splitPath(to)
	if errno != 0 {
		return errno
	}
	if fbase == "." || tbase == "." {
		return experimentalsys.EINVAL
	}
	if fslash || tslash {
		// A trailing slash says the source is a directory.
		fi, err := r.root.Lstat(strings.TrimRight(from, "/"))
		if err != nil {
			return r.errno(err)
		}
		if !fi.IsDir() {
			return experimentalsys.ENOTDIR
		}
	}
	fd, errno := r.parent(fdir)
	if errno != 0 {
		return errno
	}
	defer fd.Close()
	td, errno := r.parent(tdir)
	if errno != 0 {
		return errno
	}
	defer td.Close()
	return experimentalsys.UnwrapOSError(ignoringEINTR(func() error {
		return unix.Renameat(int(fd.Fd()), fbase, int(td.Fd()), tbase)
	}))
}

// setNonblock sets or clears O_NONBLOCK on f's descriptor.
func setNonblock(f *os.File, enable bool) experimentalsys.Errno {
	rc, err := f.SyscallConn()
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), enable) }); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	return experimentalsys.UnwrapOSError(serr)
}

// ignoringEINTR retries fn while it fails with EINTR.
func ignoringEINTR(fn func() error) error {
	for {
		if err := fn(); err != syscall.EINTR {
			return err
		}
	}
}
