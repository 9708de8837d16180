package wasip2

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// mount is a preopen as the State holds it: the root, and the error
// the root gives for a path that leaves it.
type mount struct {
	Mount
	escape error
}

func newMount(m Mount) *mount {
	mt := &mount{Mount: m}
	if m.Root != nil {
		// os.Root's escape error is unexported: take it from an escape.
		var pe *fs.PathError
		if _, err := m.Root.Stat(".."); errors.As(err, &pe) {
			mt.escape = pe.Err
		}
	}
	return mt
}

// descriptor is a wasi:filesystem descriptor: a directory of a mount
// (rel is its path from the mount's root, "." for the root) or a file
// open in one.
type descriptor struct {
	m     *mount
	rel   string
	f     *os.File // nil for a directory
	read  bool
	write bool
}

func (d *descriptor) close() {
	if d.f != nil {
		_ = d.f.Close()
	}
}

func (d *descriptor) flags() []string {
	var fl []string
	if d.read {
		fl = append(fl, "read")
	}
	if d.write && d.f != nil {
		fl = append(fl, "write")
	}
	if d.f == nil && !d.m.ReadOnly {
		fl = append(fl, "mutate-directory")
	}
	return fl
}

// fsErr is a wasi:filesystem error-code.
type fsErr string

func (e fsErr) Error() string { return "wasi:filesystem " + string(e) }

// code maps an error of the root or a file to an error-code.
func (m *mount) code(err error) fsErr {
	var e fsErr
	if errors.As(err, &e) {
		return e
	}
	if m != nil && m.escape != nil && errors.Is(err, m.escape) {
		return "not-permitted"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		if c, ok := errnoCodes[errno]; ok {
			return c
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no-entry"
	case errors.Is(err, fs.ErrExist):
		return "exist"
	case errors.Is(err, fs.ErrPermission):
		return "access"
	case errors.Is(err, fs.ErrClosed):
		return "bad-descriptor"
	}
	return "io"
}

var errnoCodes = map[syscall.Errno]fsErr{
	syscall.EACCES: "access", syscall.EPERM: "not-permitted", syscall.ENOENT: "no-entry",
	syscall.EEXIST: "exist", syscall.ENOTDIR: "not-directory", syscall.EISDIR: "is-directory",
	syscall.ENOTEMPTY: "not-empty", syscall.ELOOP: "loop", syscall.ENAMETOOLONG: "name-too-long",
	syscall.EINVAL: "invalid", syscall.EXDEV: "cross-device", syscall.EBADF: "bad-descriptor",
	syscall.ENOSPC: "insufficient-space", syscall.EROFS: "read-only", syscall.EMLINK: "too-many-links",
	syscall.EFBIG: "file-too-large", syscall.ESPIPE: "invalid-seek", syscall.EBUSY: "busy",
	syscall.EAGAIN: "would-block", syscall.EINTR: "interrupted", syscall.EIO: "io",
}

// at resolves guest path p relative to directory d: a path from the
// mount's root, which the root itself keeps inside (".." and symlinks
// included). An absolute path, or a NUL, is not-permitted.
func (d *descriptor) at(p string) (string, error) {
	if d.f != nil {
		return "", fsErr("not-directory")
	}
	if strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return "", fsErr("not-permitted")
	}
	if p == "" {
		return "", fsErr("no-entry")
	}
	return path.Join(d.rel, p), nil
}

// mutating refuses a change on a read-only mount.
func (d *descriptor) mutating() error {
	if d.m.ReadOnly {
		return fsErr("read-only")
	}
	return nil
}

func fileType(mode fs.FileMode) string {
	switch {
	case mode.IsDir():
		return "directory"
	case mode.IsRegular():
		return "regular-file"
	case mode&fs.ModeSymlink != 0:
		return "symbolic-link"
	case mode&fs.ModeNamedPipe != 0:
		return "fifo"
	case mode&fs.ModeSocket != 0:
		return "socket"
	case mode&fs.ModeCharDevice != 0:
		return "character-device"
	case mode&fs.ModeDevice != 0:
		return "block-device"
	}
	return "unknown"
}

// stat returns a descriptor-stat record.
func stat(fi fs.FileInfo) map[string]any {
	atime, ctime, nlink := statExtra(fi)
	opt := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return cm.Some{Value: datetime(t)}
	}
	return map[string]any{
		"type": fileType(fi.Mode()), "link-count": nlink, "size": uint64(max(fi.Size(), 0)),
		"data-access-timestamp": opt(atime), "data-modification-timestamp": opt(fi.ModTime()),
		"status-change-timestamp": opt(ctime),
	}
}

func (d *descriptor) info() (fs.FileInfo, error) {
	if d.f != nil {
		return d.f.Stat()
	}
	return d.m.Root.Stat(d.rel)
}

// metadataHash is a metadata-hash-value: the same for the same file,
// as long as it is not changed.
func metadataHash(fi fs.FileInfo) map[string]any {
	h := fnv.New128a()
	dev, ino := fileID(fi)
	fmt.Fprint(h, dev, ino, fi.Size(), fi.ModTime().UnixNano(), fi.Mode())
	s := h.Sum(nil)
	u := func(b []byte) uint64 {
		var x uint64
		for _, c := range b {
			x = x<<8 | uint64(c)
		}
		return x
	}
	return map[string]any{"lower": u(s[8:]), "upper": u(s[:8])}
}

// flagSet returns the names of a flags argument.
func flagSet(args []any, i int) (map[string]bool, error) {
	v, err := arg(args, i)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	switch x := v.(type) {
	case []string:
		for _, n := range x {
			set[n] = true
		}
	case []any:
		for _, n := range x {
			s, ok := n.(string)
			if !ok {
				return nil, fmt.Errorf("wasip2: argument %d: a flag is a %T", i, n)
			}
			set[s] = true
		}
	default:
		return nil, fmt.Errorf("wasip2: argument %d is a %T, not flags", i, v)
	}
	return set, nil
}

// newTimestamp resolves a new-timestamp argument: the time to set, or
// zero for no change.
func (st *State) newTimestamp(args []any, i int) (time.Time, error) {
	v, err := arg(args, i)
	if err != nil {
		return time.Time{}, err
	}
	c, ok := v.(cm.Case)
	if !ok {
		return time.Time{}, fmt.Errorf("wasip2: argument %d is a %T, not a new-timestamp", i, v)
	}
	switch c.Name {
	case "no-change":
		return time.Time{}, nil
	case "now":
		return st.opts.Now(), nil
	case "timestamp":
		dt, ok := c.Value.(map[string]any)
		sec, ok1 := dt["seconds"].(uint64)
		ns, ok2 := dt["nanoseconds"].(uint64)
		if !ok || !ok1 || !ok2 || sec > 1<<62 || ns >= 1e9 {
			return time.Time{}, fsErr("invalid")
		}
		return time.Unix(int64(sec), int64(ns)), nil
	}
	return time.Time{}, fmt.Errorf("wasip2: new-timestamp case %q", c.Name)
}

// fileReader is the input-stream of read-via-stream.
type fileReader struct {
	d   *descriptor
	off int64
}

func (r *fileReader) read(n int) ([]byte, *streamErr) {
	if n == 0 {
		return nil, nil
	}
	b := make([]byte, n)
	k, err := r.d.f.ReadAt(b, r.off)
	r.off += int64(k)
	if k == 0 && err == io.EOF {
		return nil, errClosed
	}
	if k == 0 && err != nil {
		return nil, failed(r.d.m.code(err))
	}
	return b[:k], nil
}

func (r *fileReader) blockingRead(_ context.Context, n int) ([]byte, *streamErr) { return r.read(n) }

// fileWriter is the output-stream of write-via-stream (at off) and
// append-via-stream.
type fileWriter struct {
	d      *descriptor
	off    int64
	append bool
}

func (w *fileWriter) write(b []byte) *streamErr {
	if w.append {
		fi, err := w.d.f.Stat()
		if err != nil {
			return failed(w.d.m.code(err))
		}
		w.off = fi.Size()
	}
	k, err := w.d.f.WriteAt(b, w.off)
	w.off += int64(k)
	if err != nil {
		return failed(w.d.m.code(err))
	}
	return nil
}

func (w *fileWriter) flush() *streamErr { return nil }

// dirStream is a directory-entry-stream.
type dirStream struct {
	f    *os.File
	m    *mount
	done bool
}

func (s *dirStream) close() { _ = s.f.Close() }

func fsResult(st *State, m *mount, v any, err error) (any, error) {
	if err == nil {
		return ok(v), nil
	}
	var trap interface{ trap() }
	if errors.As(err, &trap) {
		return nil, err
	}
	return fail(string(m.code(err))), nil
}

// fsFuncs is wasi:filesystem. Every descriptor method returns its
// error-code as a value; a bad handle is a trap.
func fsFuncs() map[string]impl {
	const t = "wasi:filesystem/types#[method]descriptor."
	// method makes a descriptor method from f, which returns the ok
	// value or an error (a trapError for a trap, else an error-code).
	method := func(f func(ctx context.Context, st *State, d *descriptor, args []any) (any, error)) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			d, err := self[*descriptor](st, args)
			if err != nil {
				return nil, err
			}
			v, err := f(ctx, st, d, args)
			return fsResult(st, d.m, v, err)
		}
	}
	pathArg := func(d *descriptor, args []any, i int) (string, error) {
		p, err := stringArg(args, i)
		if err != nil {
			return "", trapError{err}
		}
		return d.at(p)
	}
	file := func(d *descriptor) error {
		if d.f == nil {
			return fsErr("is-directory")
		}
		return nil
	}
	statAt := func(d *descriptor, args []any) (fs.FileInfo, error) {
		fl, err := flagSet(args, 1)
		if err != nil {
			return nil, trapError{err}
		}
		p, err := pathArg(d, args, 2)
		if err != nil {
			return nil, err
		}
		if fl["symlink-follow"] {
			return d.m.Root.Stat(p)
		}
		return d.m.Root.Lstat(p)
	}
	funcs := map[string]impl{
		t + "read-via-stream": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			off, err := u64Arg(args, 1)
			if err != nil {
				return nil, trapError{err}
			}
			if err := file(d); err != nil {
				return nil, err
			}
			if !d.read {
				return nil, fsErr("bad-descriptor")
			}
			return st.addRes(&inStream{r: &fileReader{d: d, off: int64(min(off, 1<<62))}})
		}),
		t + "write-via-stream": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			off, err := u64Arg(args, 1)
			if err != nil {
				return nil, trapError{err}
			}
			if err := file(d); err != nil {
				return nil, err
			}
			if !d.write {
				return nil, fsErr("bad-descriptor")
			}
			return st.addRes(&outStream{w: &fileWriter{d: d, off: int64(min(off, 1<<62))}})
		}),
		t + "append-via-stream": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			if err := file(d); err != nil {
				return nil, err
			}
			if !d.write {
				return nil, fsErr("bad-descriptor")
			}
			return st.addRes(&outStream{w: &fileWriter{d: d, append: true}})
		}),
		t + "advise": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return nil, file(d)
		}),
		t + "sync-data": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			if d.f == nil || !d.write {
				return nil, nil
			}
			return nil, d.f.Sync()
		}),
		t + "get-flags": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return d.flags(), nil
		}),
		t + "get-type": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			fi, err := d.info()
			if err != nil {
				return nil, err
			}
			return fileType(fi.Mode()), nil
		}),
		t + "set-size": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			n, err := u64Arg(args, 1)
			if err != nil {
				return nil, trapError{err}
			}
			if err := file(d); err != nil {
				return nil, err
			}
			if err := d.mutating(); err != nil {
				return nil, err
			}
			if !d.write {
				return nil, fsErr("bad-descriptor")
			}
			if n > 1<<62 {
				return nil, fsErr("file-too-large")
			}
			return nil, d.f.Truncate(int64(n))
		}),
		t + "set-times": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return nil, st.setTimes(d, d.rel, args, 1)
		}),
		t + "read": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			n, err := u64Arg(args, 1)
			if err != nil {
				return nil, trapError{err}
			}
			off, err := u64Arg(args, 2)
			if err != nil {
				return nil, trapError{err}
			}
			if err := file(d); err != nil {
				return nil, err
			}
			if !d.read {
				return nil, fsErr("bad-descriptor")
			}
			b := make([]byte, st.readLen(n))
			k, err := d.f.ReadAt(b, int64(min(off, 1<<62)))
			if err != nil && err != io.EOF {
				return nil, err
			}
			return []any{b[:k], err == io.EOF}, nil
		}),
		t + "write": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			b, err := bytesArg(args, 1)
			if err != nil {
				return nil, trapError{err}
			}
			off, err := u64Arg(args, 2)
			if err != nil {
				return nil, trapError{err}
			}
			if err := file(d); err != nil {
				return nil, err
			}
			if !d.write {
				return nil, fsErr("bad-descriptor")
			}
			if off > 1<<62 {
				return nil, fsErr("file-too-large")
			}
			k, err := d.f.WriteAt(b, int64(off))
			if err != nil {
				return nil, err
			}
			return uint64(k), nil
		}),
		t + "read-directory": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			if d.f != nil {
				return nil, fsErr("not-directory")
			}
			f, err := d.m.Root.Open(d.rel)
			if err != nil {
				return nil, err
			}
			r, err := st.add(&dirStream{f: f, m: d.m})
			if err != nil {
				_ = f.Close()
				return nil, trapError{err}
			}
			return r, nil
		}),
		t + "sync": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			if d.f == nil || !d.write {
				return nil, nil
			}
			return nil, d.f.Sync()
		}),
		t + "create-directory-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			p, err := pathArg(d, args, 1)
			if err != nil {
				return nil, err
			}
			if err := d.mutating(); err != nil {
				return nil, err
			}
			return nil, d.m.Root.Mkdir(p, 0o777)
		}),
		t + "stat": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			fi, err := d.info()
			if err != nil {
				return nil, err
			}
			return stat(fi), nil
		}),
		t + "stat-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			fi, err := statAt(d, args)
			if err != nil {
				return nil, err
			}
			return stat(fi), nil
		}),
		t + "set-times-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			p, err := pathArg(d, args, 2)
			if err != nil {
				return nil, err
			}
			return nil, st.setTimes(d, p, args, 3)
		}),
		t + "link-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return nil, fsErr("not-permitted") // a hard link is not needed to use a directory
		}),
		t + "symlink-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return nil, fsErr("not-permitted") // a plugin-made symlink is a way to point out
		}),
		t + "open-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			return st.openAt(d, args)
		}),
		t + "readlink-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			p, err := pathArg(d, args, 1)
			if err != nil {
				return nil, err
			}
			return d.m.Root.Readlink(p)
		}),
		t + "remove-directory-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			p, err := pathArg(d, args, 1)
			if err != nil {
				return nil, err
			}
			if err := d.mutating(); err != nil {
				return nil, err
			}
			fi, err := d.m.Root.Lstat(p)
			if err != nil {
				return nil, err
			}
			if !fi.IsDir() {
				return nil, fsErr("not-directory")
			}
			if p == d.rel || p == "." {
				return nil, fsErr("busy")
			}
			return nil, d.m.Root.Remove(p)
		}),
		t + "rename-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			from, err := pathArg(d, args, 1)
			if err != nil {
				return nil, err
			}
			r, err := repArg(args, 2)
			if err != nil {
				return nil, trapError{err}
			}
			nd, err := get[*descriptor](st, r)
			if err != nil {
				return nil, trapError{err}
			}
			to, err := pathArg(nd, args, 3)
			if err != nil {
				return nil, err
			}
			if nd.m != d.m {
				return nil, fsErr("cross-device")
			}
			if err := d.mutating(); err != nil {
				return nil, err
			}
			return nil, d.m.Root.Rename(from, to)
		}),
		t + "unlink-file-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			p, err := pathArg(d, args, 1)
			if err != nil {
				return nil, err
			}
			if err := d.mutating(); err != nil {
				return nil, err
			}
			fi, err := d.m.Root.Lstat(p)
			if err != nil {
				return nil, err
			}
			if fi.IsDir() {
				return nil, fsErr("is-directory")
			}
			return nil, d.m.Root.Remove(p)
		}),
		t + "metadata-hash": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			fi, err := d.info()
			if err != nil {
				return nil, err
			}
			return metadataHash(fi), nil
		}),
		t + "metadata-hash-at": method(func(ctx context.Context, st *State, d *descriptor, args []any) (any, error) {
			fi, err := statAt(d, args)
			if err != nil {
				return nil, err
			}
			return metadataHash(fi), nil
		}),
	}
	funcs[t+"is-same-object"] = func(ctx context.Context, st *State, args []any) (any, error) {
		d, err := self[*descriptor](st, args)
		if err != nil {
			return nil, err
		}
		r, err := repArg(args, 1)
		if err != nil {
			return nil, err
		}
		o, err := get[*descriptor](st, r)
		if err != nil {
			return nil, err
		}
		a, err1 := d.info()
		b, err2 := o.info()
		return err1 == nil && err2 == nil && os.SameFile(a, b), nil
	}
	funcs["wasi:filesystem/types#[method]directory-entry-stream.read-directory-entry"] = func(ctx context.Context, st *State, args []any) (any, error) {
		s, err := self[*dirStream](st, args)
		if err != nil {
			return nil, err
		}
		if s.done {
			return ok(nil), nil
		}
		ents, err := s.f.ReadDir(1)
		if err == io.EOF || err == nil && len(ents) == 0 {
			s.done = true
			return ok(nil), nil
		}
		if err != nil {
			return fail(string(s.m.code(err))), nil
		}
		return ok(cm.Some{Value: map[string]any{"type": fileType(ents[0].Type()), "name": ents[0].Name()}}), nil
	}
	funcs["wasi:filesystem/types#filesystem-error-code"] = func(ctx context.Context, st *State, args []any) (any, error) {
		e, err := self[*ioError](st, args)
		if err != nil {
			return nil, err
		}
		if e.code == "" {
			return nil, nil
		}
		return cm.Some{Value: string(e.code)}, nil
	}
	funcs["wasi:filesystem/preopens#get-directories"] = func(ctx context.Context, st *State, args []any) (any, error) {
		out := []any{}
		for _, m := range st.mounts {
			r, err := st.add(&descriptor{m: m, rel: ".", read: true, write: !m.ReadOnly})
			if err != nil {
				return nil, err
			}
			out = append(out, []any{r, m.Guest})
		}
		return out, nil
	}
	return funcs
}

// trapError is an error of a descriptor method that is a trap (a bad
// argument), not an error-code.
type trapError struct{ error }

func (trapError) trap() {}

func (e trapError) Unwrap() error { return e.error }

// setTimes is set-times and set-times-at: args[i] and args[i+1] are the
// access and modification timestamps.
func (st *State) setTimes(d *descriptor, p string, args []any, i int) error {
	atime, err := st.newTimestamp(args, i)
	if err != nil {
		return asTrap(err)
	}
	mtime, err := st.newTimestamp(args, i+1)
	if err != nil {
		return asTrap(err)
	}
	if err := d.mutating(); err != nil {
		return err
	}
	return d.m.Root.Chtimes(p, atime, mtime)
}

// asTrap makes err a trap unless it is an error-code.
func asTrap(err error) error {
	var e fsErr
	if errors.As(err, &e) {
		return err
	}
	return trapError{err}
}

// openAt is descriptor.open-at(path-flags, path, open-flags, flags).
func (st *State) openAt(d *descriptor, args []any) (any, error) {
	pf, err := flagSet(args, 1)
	if err != nil {
		return nil, trapError{err}
	}
	ps, err := stringArg(args, 2)
	if err != nil {
		return nil, trapError{err}
	}
	of, err := flagSet(args, 3)
	if err != nil {
		return nil, trapError{err}
	}
	df, err := flagSet(args, 4)
	if err != nil {
		return nil, trapError{err}
	}
	p, err := d.at(ps)
	if err != nil {
		return nil, err
	}
	wantWrite := df["write"]
	if (wantWrite || of["create"] || of["truncate"] || df["mutate-directory"]) && d.m.ReadOnly {
		return nil, fsErr("read-only")
	}
	if !pf["symlink-follow"] {
		if fi, err := d.m.Root.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fsErr("loop")
		}
	}
	if of["directory"] {
		if of["create"] || of["truncate"] || wantWrite {
			return nil, fsErr("invalid")
		}
		fi, err := d.m.Root.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fsErr("not-directory")
		}
		return st.addDescriptor(&descriptor{m: d.m, rel: path.Clean(p), read: true})
	}
	flag := os.O_RDONLY
	switch {
	case wantWrite && df["read"]:
		flag = os.O_RDWR
	case wantWrite:
		flag = os.O_WRONLY
	}
	if of["create"] {
		flag |= os.O_CREATE
	}
	if of["exclusive"] {
		flag |= os.O_EXCL
	}
	if of["truncate"] {
		flag |= os.O_TRUNC
	}
	f, err := d.m.Root.OpenFile(p, flag, 0o666)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	if fi.IsDir() {
		_ = f.Close()
		if wantWrite {
			return nil, fsErr("is-directory")
		}
		return st.addDescriptor(&descriptor{m: d.m, rel: path.Clean(p), read: true})
	}
	nd := &descriptor{m: d.m, rel: path.Clean(p), f: f, read: df["read"] || !wantWrite, write: wantWrite}
	return st.addDescriptor(nd)
}

// addRes is add for a descriptor method: its failure is a trap.
func (st *State) addRes(r any) (any, error) {
	rep, err := st.add(r)
	if err != nil {
		return nil, trapError{err}
	}
	return rep, nil
}

func (st *State) addDescriptor(d *descriptor) (any, error) {
	r, err := st.add(d)
	if err != nil {
		d.close()
		return nil, trapError{err}
	}
	return r, nil
}
