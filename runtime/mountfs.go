package runtime

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// rootFS is a mount (see mount.go): wazero's experimental/sys.FS on one
// os.Root. Paths are relative to the mount, as wazero gives them; every
// operation resolves its path through the root at the moment of use:
//
//   - what follows a final symlink (open, stat, chmod, utimens) is the
//     root's own method, which resolves each component with openat and
//     O_NOFOLLOW, reads symlinks itself and refuses any that leave;
//   - what must not follow it (open with O_NOFOLLOW, unlink, rmdir,
//     rename) opens the parent directory through the root and then acts
//     on the last component relative to that descriptor, never following
//     it (mountfs_unix.go);
//   - lstat and readlink are the root's, which do not follow the last
//     component.
//
// A path that leaves the mount fails with EPERM. Link and symlink are
// refused (EPERM): a plugin-made symlink is a way to point out, and hard
// links are not needed to use a directory. When readOnly, everything that
// would change the tree fails with EROFS.
//
// rootFS is shared by every instance of a pool: os.Root is safe for
// concurrent use and rootFS has no other state.
type rootFS struct {
	experimentalsys.UnimplementedFS
	root     *os.Root
	readOnly bool
	escape   error // what root returns for a path that leaves it
}

// errno maps an error of the root to the guest's errno: EPERM for an
// escape, else the system's.
func (r *rootFS) errno(err error) experimentalsys.Errno {
	if err == nil {
		return 0
	}
	if errors.Is(err, r.escape) {
		return experimentalsys.EPERM
	}
	return experimentalsys.UnwrapOSError(err)
}

// rootName returns p as os.Root takes it: "" and "/" name the mount.
func rootName(p string) string {
	if p == "" || p == "/" {
		return "."
	}
	return p
}

// splitPath splits p into its parent directory and last component, both
// relative to the mount, and reports whether p ended in a slash. It
// refuses with EPERM a path that is absolute or leaves the mount
// lexically. base is "." only when p names the mount itself; it never
// holds a slash and is never "..", so that acting on it relative to the
// parent's descriptor cannot go anywhere else.
func splitPath(p string) (dir, base string, slash bool, errno experimentalsys.Errno) {
	t := strings.TrimRight(p, "/")
	slash = len(t) < len(p)
	if t == "" {
		if slash {
			return "", "", false, experimentalsys.EPERM // "/"
		}
		t = "."
	}
	if path.IsAbs(t) {
		return "", "", false, experimentalsys.EPERM
	}
	c := path.Clean(t)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", "", false, experimentalsys.EPERM
	}
	dir, base = path.Split(c)
	if dir == "" {
		dir = "."
	} else {
		dir = strings.TrimSuffix(dir, "/")
	}
	return dir, base, slash, 0
}

// writes reports whether flag would change the tree.
func writes(flag experimentalsys.Oflag) bool {
	mode := flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR)
	return mode != experimentalsys.O_RDONLY || flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC|experimentalsys.O_APPEND) != 0
}

// osFlag converts flag to os.OpenFile's, without O_NOFOLLOW (which
// open handles).
func osFlag(flag experimentalsys.Oflag) int {
	var f int
	switch flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR) {
	case experimentalsys.O_WRONLY:
		f = os.O_WRONLY
	case experimentalsys.O_RDWR:
		f = os.O_RDWR
	default:
		f = os.O_RDONLY
	}
	for _, m := range []struct {
		from experimentalsys.Oflag
		to   int
	}{
		{experimentalsys.O_APPEND, os.O_APPEND},
		{experimentalsys.O_CREAT, os.O_CREATE},
		{experimentalsys.O_EXCL, os.O_EXCL},
		{experimentalsys.O_SYNC, os.O_SYNC},
		{experimentalsys.O_DSYNC, os.O_SYNC}, // stronger, and everywhere
		{experimentalsys.O_RSYNC, os.O_SYNC},
		{experimentalsys.O_TRUNC, os.O_TRUNC},
	} {
		if flag&m.from != 0 {
			f |= m.to
		}
	}
	return f | sysOflag(flag)
}

// open opens p with flag through the root.
func (r *rootFS) open(p string, flag experimentalsys.Oflag, perm fs.FileMode) (*os.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		return r.openNoFollow(p, osFlag(flag), perm)
	}
	f, err := r.root.OpenFile(rootName(p), osFlag(flag), perm)
	if err != nil {
		return nil, r.errno(err)
	}
	return f, 0
}

// OpenFile implements experimentalsys.FS.
func (r *rootFS) OpenFile(p string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if r.readOnly && writes(flag) {
		if flag&experimentalsys.O_DIRECTORY != 0 {
			return nil, experimentalsys.EISDIR
		}
		return nil, experimentalsys.EROFS
	}
	f, errno := r.open(p, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	return &rootFile{fs: r, name: p, flag: flag, file: f}, 0
}

// Lstat implements experimentalsys.FS.
func (r *rootFS) Lstat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Lstat(rootName(p))
	if err != nil {
		return sys.Stat_t{}, r.errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Stat implements experimentalsys.FS.
func (r *rootFS) Stat(p string) (sys.Stat_t, experimentalsys.Errno) {
	fi, err := r.root.Stat(rootName(p))
	if err != nil {
		return sys.Stat_t{}, r.errno(err)
	}
	return sys.NewStat_t(fi), 0
}

// Mkdir implements experimentalsys.FS.
func (r *rootFS) Mkdir(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	errno := r.errno(r.root.Mkdir(rootName(p), perm))
	if errno == experimentalsys.ENOTDIR {
		errno = experimentalsys.ENOENT // as wazero's own directory mounts
	}
	return errno
}

// Chmod implements experimentalsys.FS.
func (r *rootFS) Chmod(p string, perm fs.FileMode) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return r.errno(r.root.Chmod(rootName(p), perm))
}

// Rename implements experimentalsys.FS.
func (r *rootFS) Rename(from, to string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return r.renameAt(from, to)
}

// Rmdir implements experimentalsys.FS.
func (r *rootFS) Rmdir(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return r.removeAt(p, true)
}

// Unlink implements experimentalsys.FS.
func (r *rootFS) Unlink(p string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return r.removeAt(p, false)
}

// Link implements experimentalsys.FS: refused.
func (r *rootFS) Link(_, _ string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.EPERM
}

// Symlink implements experimentalsys.FS: refused.
func (r *rootFS) Symlink(_, _ string) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	return experimentalsys.EPERM
}

// Readlink implements experimentalsys.FS.
func (r *rootFS) Readlink(p string) (string, experimentalsys.Errno) {
	dst, err := r.root.Readlink(rootName(p))
	if err != nil {
		return "", r.errno(err)
	}
	return dst, 0
}

// Utimens implements experimentalsys.FS. os.Root.Chtimes follows a final
// symlink inside the root (the race it documents stays inside too).
func (r *rootFS) Utimens(p string, atim, mtim int64) experimentalsys.Errno {
	if r.readOnly {
		return experimentalsys.EROFS
	}
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	return r.errno(r.root.Chtimes(rootName(p), nanoTime(atim), nanoTime(mtim)))
}

// nanoTime converts a guest timestamp to what os.Root.Chtimes takes: the
// zero time leaves it unchanged.
func nanoTime(ns int64) time.Time {
	if ns == experimentalsys.UTIME_OMIT {
		return time.Time{}
	}
	return time.Unix(0, ns)
}

// rootFile is a file or directory opened through a rootFS: every
// operation acts on its descriptor. Directories are read and rewound
// through the descriptor too (wazero's own files reopen them by path).
type rootFile struct {
	fs     *rootFS
	name   string // as opened, relative to the mount (for SetAppend)
	flag   experimentalsys.Oflag
	file   *os.File
	closed bool
	st     *statCache
}

// statCache is what cannot change while a file is open.
type statCache struct {
	dev   uint64
	ino   sys.Inode
	isDir bool
}

var _ experimentalsys.PollableFile = (*rootFile)(nil)

func (f *rootFile) cached() (*statCache, experimentalsys.Errno) {
	if f.st == nil {
		if _, errno := f.Stat(); errno != 0 {
			return nil, errno
		}
	}
	return f.st, 0
}

// fail turns the errno of a failed operation on a file into the one the
// guest expects: EBADF once closed, EISDIR for a directory.
func (f *rootFile) fail(errno experimentalsys.Errno) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if st, e := f.cached(); e == 0 && st.isDir {
		return experimentalsys.EISDIR
	}
	return errno
}

// transfer is Read, Pread, Write and Pwrite: op on buf, nothing for an
// empty one, its error as fail has it.
func (f *rootFile) transfer(buf []byte, op func([]byte) (int, error)) (int, experimentalsys.Errno) {
	if len(buf) == 0 {
		return 0, 0
	}
	n, err := op(buf)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return n, f.fail(errno)
	}
	return n, 0
}

// Dev implements experimentalsys.File.
func (f *rootFile) Dev() (uint64, experimentalsys.Errno) {
	st, errno := f.cached()
	if errno != 0 {
		return 0, errno
	}
	return st.dev, 0
}

// Ino implements experimentalsys.File.
func (f *rootFile) Ino() (sys.Inode, experimentalsys.Errno) {
	st, errno := f.cached()
	if errno != 0 {
		return 0, errno
	}
	return st.ino, 0
}

// IsDir implements experimentalsys.File.
func (f *rootFile) IsDir() (bool, experimentalsys.Errno) {
	st, errno := f.cached()
	if errno != 0 {
		return false, errno
	}
	return st.isDir, 0
}

// IsAppend implements experimentalsys.File.
func (f *rootFile) IsAppend() bool { return f.flag&experimentalsys.O_APPEND != 0 }

// SetAppend implements experimentalsys.File. The append mode of an open
// file cannot change, so the file is reopened through the root (not by
// host path) and kept only if it is still the same file.
func (f *rootFile) SetAppend(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if enable == f.IsAppend() {
		return 0
	}
	if enable && f.fs.readOnly {
		return experimentalsys.EROFS
	}
	st, errno := f.cached()
	if errno != 0 {
		return errno
	}
	if st.isDir {
		return experimentalsys.EISDIR
	}
	flag := f.flag &^ (experimentalsys.O_CREAT | experimentalsys.O_TRUNC | experimentalsys.O_EXCL | experimentalsys.O_APPEND)
	if enable {
		flag |= experimentalsys.O_APPEND
	}
	off, err := f.file.Seek(0, io.SeekCurrent)
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	nf, errno := f.fs.open(f.name, flag, 0)
	if errno != 0 {
		return errno
	}
	old, err1 := f.file.Stat()
	now, err2 := nf.Stat()
	if err1 != nil || err2 != nil || !os.SameFile(old, now) {
		_ = nf.Close()
		return experimentalsys.ENOENT
	}
	if _, err := nf.Seek(off, io.SeekStart); err != nil {
		_ = nf.Close()
		return experimentalsys.UnwrapOSError(err)
	}
	_ = f.file.Close()
	f.file, f.flag = nf, flag
	return 0
}

// IsNonblock implements experimentalsys.PollableFile.
func (f *rootFile) IsNonblock() bool { return f.flag&experimentalsys.O_NONBLOCK != 0 }

// SetNonblock implements experimentalsys.PollableFile.
func (f *rootFile) SetNonblock(enable bool) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if errno := setNonblock(f.file, enable); errno != 0 {
		return f.fail(errno)
	}
	if enable {
		f.flag |= experimentalsys.O_NONBLOCK
	} else {
		f.flag &^= experimentalsys.O_NONBLOCK
	}
	return 0
}

// Poll implements experimentalsys.Pollable: files and directories are
// always ready (wazero polls only stdin).
func (f *rootFile) Poll(experimentalsys.Pflag, int32) (bool, experimentalsys.Errno) {
	if f.closed {
		return false, experimentalsys.EBADF
	}
	return true, 0
}

// Stat implements experimentalsys.File.
func (f *rootFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if f.closed {
		return sys.Stat_t{}, experimentalsys.EBADF
	}
	fi, err := f.file.Stat()
	if err != nil {
		return sys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	st := sys.NewStat_t(fi)
	f.st = &statCache{dev: st.Dev, ino: st.Ino, isDir: fi.IsDir()}
	return st, 0
}

// Read implements experimentalsys.File.
func (f *rootFile) Read(buf []byte) (int, experimentalsys.Errno) {
	return f.transfer(buf, f.file.Read)
}

// Pread implements experimentalsys.File.
func (f *rootFile) Pread(buf []byte, off int64) (int, experimentalsys.Errno) {
	return f.transfer(buf, func(b []byte) (int, error) { return f.file.ReadAt(b, off) })
}

// fileOffset is int64 under another name, so that vet's stdmethods does not
// take rootFile.Seek for a wrong io.Seeker: experimentalsys.File's Seek
// returns an Errno.
type fileOffset = int64

// Seek implements experimentalsys.File. Seeking a directory to its start
// rewinds it, so that the next Readdir lists it afresh.
func (f *rootFile) Seek(offset fileOffset, whence int) (int64, experimentalsys.Errno) {
	if uint(whence) > io.SeekEnd {
		return 0, experimentalsys.EINVAL
	}
	if f.closed {
		return 0, experimentalsys.EBADF
	}
	n, err := f.file.Seek(offset, whence)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		return 0, errno
	}
	return n, 0
}

// Readdir implements experimentalsys.File. os.File.Readdir stats each
// entry relative to the directory's descriptor (fstatat).
func (f *rootFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	if f.closed {
		return nil, experimentalsys.EBADF
	}
	if st, errno := f.cached(); errno != 0 {
		return nil, errno
	} else if !st.isDir {
		return nil, experimentalsys.EBADF
	}
	fis, err := f.file.Readdir(n)
	if errno := experimentalsys.UnwrapOSError(err); errno != 0 {
		if errno == experimentalsys.EINVAL || errno == experimentalsys.ENOTDIR {
			errno = experimentalsys.EBADF
		}
		return nil, errno
	}
	dirents := make([]experimentalsys.Dirent, 0, len(fis))
	for _, fi := range fis {
		dirents = append(dirents, experimentalsys.Dirent{Name: fi.Name(), Ino: sys.NewStat_t(fi).Ino, Type: fi.Mode().Type()})
	}
	return dirents, 0
}

// Write implements experimentalsys.File.
func (f *rootFile) Write(buf []byte) (int, experimentalsys.Errno) {
	return f.transfer(buf, f.file.Write)
}

// Pwrite implements experimentalsys.File.
func (f *rootFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	return f.transfer(buf, func(b []byte) (int, error) { return f.file.WriteAt(b, off) })
}

// Truncate implements experimentalsys.File.
func (f *rootFile) Truncate(size int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.fs.readOnly {
		return experimentalsys.EROFS
	}
	if size < 0 {
		return experimentalsys.EINVAL
	}
	if errno := experimentalsys.UnwrapOSError(f.file.Truncate(size)); errno != 0 {
		return f.fail(errno)
	}
	return 0
}

// Sync implements experimentalsys.File.
func (f *rootFile) Sync() experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	return experimentalsys.UnwrapOSError(f.file.Sync())
}

// Datasync implements experimentalsys.File with a full sync.
func (f *rootFile) Datasync() experimentalsys.Errno { return f.Sync() }

// Utimens implements experimentalsys.File.
func (f *rootFile) Utimens(atim, mtim int64) experimentalsys.Errno {
	if f.closed {
		return experimentalsys.EBADF
	}
	if f.fs.readOnly {
		return experimentalsys.EROFS
	}
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	return futimens(f.file, atim, mtim)
}

// Close implements experimentalsys.File.
func (f *rootFile) Close() experimentalsys.Errno {
	if f.closed {
		return 0
	}
	f.closed = true
	return experimentalsys.UnwrapOSError(f.file.Close())
}
