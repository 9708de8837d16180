package component

import (
	"bytes"
	"errors"
	"fmt"
)

// The kinds of a core import, as the binary spells them.
const (
	importFunc   = 0x00
	importTable  = 0x01
	importMemory = 0x02
	importGlobal = 0x03
	importTag    = 0x04
)

// coreImport is one import of a core module.
type coreImport struct {
	Module, Field string
	Kind          byte
}

// modReader reads a core module binary, with every length checked.
type modReader struct {
	b   []byte
	pos int
}

var errTruncated = errors.New("core module truncated")

func (r *modReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, errTruncated
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// uleb reads an unsigned LEB128 of at most bits bits.
func (r *modReader) uleb(bits uint) (uint64, error) {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= bits+7 {
			return 0, errors.New("core module: LEB128 too long")
		}
		c, err := r.byte()
		if err != nil {
			return 0, err
		}
		x |= uint64(c&0x7f) << shift
		if c&0x80 == 0 {
			return x, nil
		}
	}
}

func (r *modReader) u32() (uint32, error) {
	x, err := r.uleb(32)
	if err != nil {
		return 0, err
	}
	if x > 0xffffffff {
		return 0, errors.New("core module: u32 out of range")
	}
	return uint32(x), nil
}

func (r *modReader) bytes(n uint32) ([]byte, error) {
	if uint64(n) > uint64(len(r.b)-r.pos) {
		return nil, errTruncated
	}
	s := r.b[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return s, nil
}

func (r *modReader) name() (string, error) {
	n, err := r.u32()
	if err != nil {
		return "", err
	}
	b, err := r.bytes(n)
	return string(b), err
}

// limits skips a table's or memory's limits.
func (r *modReader) limits() error {
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 0x07 {
		return fmt.Errorf("core module: limits flags %#x", flags)
	}
	bits := uint(32)
	if flags&0x04 != 0 {
		bits = 64
	}
	if _, err := r.uleb(bits); err != nil {
		return err
	}
	if flags&0x01 != 0 {
		_, err = r.uleb(bits)
	}
	return err
}

// skipDesc skips the description of an import of the given kind.
func (r *modReader) skipDesc(kind byte) error {
	switch kind {
	case importFunc:
		_, err := r.u32()
		return err
	case importTable:
		t, err := r.byte()
		if err != nil {
			return err
		}
		if t != 0x70 && t != 0x6f {
			return fmt.Errorf("core module: table of reference type %#x", t)
		}
		return r.limits()
	case importMemory:
		return r.limits()
	case importGlobal:
		t, err := r.byte()
		if err != nil {
			return err
		}
		switch t {
		case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		default:
			return fmt.Errorf("core module: global of type %#x", t)
		}
		_, err = r.byte()
		return err
	case importTag:
		if _, err := r.byte(); err != nil {
			return err
		}
		_, err := r.u32()
		return err
	}
	return fmt.Errorf("core module: import kind %#x", kind)
}

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// rewriteImports returns the core module b with each import's module and
// field names replaced by what rename returns for it, and the imports as
// they were. Everything else is copied as it is; the engine validates the
// result when it compiles it.
func rewriteImports(b []byte, rename func(imp coreImport) (string, string, error)) ([]byte, []coreImport, error) {
	if !bytes.HasPrefix(b, wasmHeader) {
		return nil, nil, errors.New("not a core module (bad header)")
	}
	r := &modReader{b: b, pos: len(wasmHeader)}
	out := append([]byte{}, wasmHeader...)
	var imports []coreImport
	for r.pos < len(b) {
		id, err := r.byte()
		if err != nil {
			return nil, nil, err
		}
		size, err := r.u32()
		if err != nil {
			return nil, nil, err
		}
		body, err := r.bytes(size)
		if err != nil {
			return nil, nil, err
		}
		if id != 2 {
			out = append(out, id)
			out = appendU32(out, size)
			out = append(out, body...)
			continue
		}
		if imports != nil {
			return nil, nil, errors.New("core module: two import sections")
		}
		sec, imps, err := rewriteImportSection(body, rename)
		if err != nil {
			return nil, nil, err
		}
		imports = imps
		out = append(out, 2)
		out = appendU32(out, uint32(len(sec)))
		out = append(out, sec...)
	}
	return out, imports, nil
}

func rewriteImportSection(body []byte, rename func(coreImport) (string, string, error)) ([]byte, []coreImport, error) {
	r := &modReader{b: body}
	n, err := r.u32()
	if err != nil {
		return nil, nil, err
	}
	if uint64(n) > uint64(len(body)) {
		return nil, nil, errors.New("core module: import count past the section")
	}
	out := appendU32(nil, n)
	imports := make([]coreImport, 0, n)
	for range n {
		mod, err := r.name()
		if err != nil {
			return nil, nil, err
		}
		field, err := r.name()
		if err != nil {
			return nil, nil, err
		}
		start := r.pos
		kind, err := r.byte()
		if err != nil {
			return nil, nil, err
		}
		if err := r.skipDesc(kind); err != nil {
			return nil, nil, err
		}
		imp := coreImport{Module: mod, Field: field, Kind: kind}
		imports = append(imports, imp)
		nm, nf, err := rename(imp)
		if err != nil {
			return nil, nil, err
		}
		out = appendName(out, nm)
		out = appendName(out, nf)
		out = append(out, body[start:r.pos]...)
	}
	if r.pos != len(body) {
		return nil, nil, errors.New("core module: bytes after the imports")
	}
	return out, imports, nil
}

func appendU32(b []byte, x uint32) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

func appendName(b []byte, s string) []byte {
	b = appendU32(b, uint32(len(s)))
	return append(b, s...)
}
