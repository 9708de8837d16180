//go:build !unix

package runtime

import (
	"io/fs"
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// Without openat and unlinkat, operations that must not follow a final
// symlink check it with the root's Lstat first. A swap between the check
// and the operation can only make it act on another entry inside the
// mount: the root still resolves every path.

func sysOflag(experimentalsys.Oflag) int { return 0 }

func (r *rootFS) openNoFollow(p string, flag int, perm fs.FileMode) (*os.File, experimentalsys.Errno) {
	if fi, err := r.root.Lstat(rootName(p)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, experimentalsys.ELOOP
	}
	f, err := r.root.OpenFile(rootName(p), flag, perm)
	if err != nil {
		return nil, r.errno(err)
	}
	return f, 0
}

func (r *rootFS) removeAt(p string, dir bool) experimentalsys.Errno {
	if _, _, _, errno := splitPath(p); errno != 0 {
		return errno
	}
	fi, err := r.root.Lstat(rootName(p))
	if err != nil {
		return r.errno(err)
	}
	if fi.IsDir() != dir {
		if dir {
			return experimentalsys.ENOTDIR
		}
		return experimentalsys.EISDIR
	}
	return r.errno(r.root.Remove(rootName(p)))
}

func (r *rootFS) renameAt(from, to string) experimentalsys.Errno {
	return r.errno(r.root.Rename(rootName(from), rootName(to)))
}

func setNonblock(*os.File, bool) experimentalsys.Errno { return 0 }
