package component

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// reader reads the binary format's primitives from a byte slice, never
// past its end: every read checks the length first and reports a
// truncated input as an error.
type reader struct {
	b   []byte
	off int // offset of b[0] in the whole binary, for messages
	pos int
}

var errEOF = errors.New("unexpected end of section")

func (r *reader) errf(format string, args ...any) error {
	return &Error{Offset: r.off + r.pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *reader) unsupported(feature string) error {
	return &Error{Offset: r.off + r.pos, Msg: feature + " is not supported (WASI 0.3 / component-model async)", Err: ErrUnsupported}
}

func (r *reader) left() int { return len(r.b) - r.pos }

func (r *reader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.errf("%v", errEOF)
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *reader) peek() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.errf("%v", errEOF)
	}
	return r.b[r.pos], nil
}

func (r *reader) bytes(n int) ([]byte, error) {
	if n < 0 || n > r.left() {
		return nil, r.errf("length %d past the end of the section (%d bytes left)", n, r.left())
	}
	p := r.b[r.pos : r.pos+n]
	r.pos += n
	return p, nil
}

// u32 reads an unsigned LEB128 of at most 32 bits.
func (r *reader) u32() (uint32, error) {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift == 28 && c&0x70 != 0 {
			return 0, r.errf("integer too large for u32")
		}
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, r.errf("integer representation too long")
}

// u64 reads an unsigned LEB128 of at most 64 bits.
func (r *reader) u64() (uint64, error) {
	var v uint64
	for shift := 0; shift < 70; shift += 7 {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		if shift == 63 && c&0x7e != 0 {
			return 0, r.errf("integer too large for u64")
		}
		v |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
	return 0, r.errf("integer representation too long")
}

// s33 reads a signed LEB128 of at most 33 bits.
func (r *reader) s33() (int64, error) {
	var v int64
	shift := 0
	for {
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		v |= int64(c&0x7f) << shift
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			break
		}
		if shift >= 35 {
			return 0, r.errf("integer representation too long")
		}
	}
	if v < -(1<<32) || v >= 1<<32 {
		return 0, r.errf("integer too large for s33")
	}
	return v, nil
}

// count reads a vector length, refusing one that cannot fit in what is
// left of the section (every element takes at least one byte).
func (r *reader) count() (int, error) {
	n, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(n) > int64(r.left()) {
		return 0, r.errf("vector of %d elements longer than the %d bytes left", n, r.left())
	}
	return int(n), nil
}

// name reads a length-prefixed UTF-8 string.
func (r *reader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	if int64(n) > int64(r.left()) {
		return "", r.errf("name of %d bytes longer than the %d bytes left", n, r.left())
	}
	if n > maxName {
		return "", r.errf("name of %d bytes over the limit of %d", n, maxName)
	}
	p, _ := r.bytes(int(n))
	if !utf8.Valid(p) {
		return "", r.errf("name is not valid UTF-8")
	}
	return string(p), nil
}

// index reads a u32 index and checks it against the size of its space.
func (r *reader) index(what string, size int) (int, error) {
	v, err := r.u32()
	if err != nil {
		return 0, err
	}
	if int64(v) >= int64(size) {
		return 0, r.errf("%s index %d out of range (%d defined)", what, v, size)
	}
	return int(v), nil
}

// Error is a decoding error: what was wrong and where.
type Error struct {
	Offset int    // byte offset in the component binary
	Msg    string // what was wrong
	Err    error  // ErrUnsupported for a feature this decoder refuses, else nil
}

func (e *Error) Error() string {
	return fmt.Sprintf("component: offset %#x: %s", e.Offset, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrUnsupported marks a well-formed component that uses a feature outside
// the Component Model MVP this package implements: async (stream, future,
// error-context, async functions and canon built-ins), value imports and
// exports, start functions, fixed-length lists, GC core types. The error's
// message names the feature.
var ErrUnsupported = errors.New("unsupported component feature")
