package canon

import (
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/component"
)

// ErrTrap is wrapped by every error that the canonical ABI defines as a
// trap: an out-of-bounds or misaligned pointer, an invalid discriminant,
// char or string, a bad handle, a realloc that misbehaves. The runtime
// treats it like a core trap (the call fails and the instance is
// replaced).
var ErrTrap = errors.New("canonical ABI trap")

// trapf returns an error wrapping ErrTrap.
func trapf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrTrap}, args...)...)
}

// CoreType is a core value type of a flattened signature. Its values are
// the binary encodings, the same as wazero's api.ValueType.
type CoreType byte

// The core value types.
const (
	I32 CoreType = 0x7f
	I64 CoreType = 0x7e
	F32 CoreType = 0x7d
	F64 CoreType = 0x7c
)

// String returns the type's text-format name.
func (c CoreType) String() string {
	switch c {
	case I32:
		return "i32"
	case I64:
		return "i64"
	case F32:
		return "f32"
	case F64:
		return "f64"
	}
	return fmt.Sprintf("coretype(%#x)", byte(c))
}

// The spec's limits on flat signatures: beyond them, parameters and
// results are passed in memory.
const (
	MaxFlatParams  = 16
	MaxFlatResults = 1
)

const (
	maxDepth    = 100     // nesting of one value type (the decoder allows 64)
	maxTypeSize = 1 << 31 // bytes of one value's flat memory layout
	maxNodes    = 1 << 18 // distinct type nodes one Func may reach
)

// layout is what the ABI needs to know of one value type: its memory
// size and alignment, its flattening and, for compound types, the layouts
// of its members. Layouts are computed once per type node (types are
// shared DAGs, never cycles once decoded) and cached in a layouts map.
type layout struct {
	t     *component.Type
	kind  component.Kind
	size  uint32
	align uint32
	// flat is the type's flattening; over is set (and flat truncated)
	// when it has more than MaxFlatParams values, since such a type is
	// only ever passed in memory.
	flat []CoreType
	over bool

	elem *layout // list

	// fields are the members of a record or tuple, offs their offsets.
	fields []*layout
	offs   []uint32

	// cases are the payloads of a variant-like type (variant, enum,
	// option, result), nil for a case without one; disc is the
	// discriminant's size and payload the payload's offset.
	cases   []*layout
	ncases  int
	disc    uint32
	payload uint32

	nflags int
	// names indexes the case names of a variant or enum and the labels
	// of a flags type.
	names map[string]uint32
	res   *component.ResourceType
}

// layouts caches the layouts of the type nodes reached from one function
// type.
type layouts map[*component.Type]*layout

func alignTo(n, a uint64) uint64 { return (n + a - 1) / a * a }

func (ls layouts) of(t *component.Type) (*layout, error) { return ls.get(t, 0) }

func (ls layouts) get(t *component.Type, depth int) (*layout, error) {
	if t == nil {
		return nil, errors.New("canon: missing type")
	}
	if l, ok := ls[t]; ok {
		if l == nil {
			return nil, errors.New("canon: recursive type")
		}
		return l, nil
	}
	if depth > maxDepth {
		return nil, fmt.Errorf("canon: type nested deeper than %d", maxDepth)
	}
	if len(ls) >= maxNodes {
		return nil, fmt.Errorf("canon: more than %d type nodes", maxNodes)
	}
	ls[t] = nil // in progress: a cycle in a hand-built type is refused
	l, err := ls.compute(t, depth)
	if err != nil {
		delete(ls, t)
		return nil, err
	}
	ls[t] = l
	return l, nil
}

func prim(size uint32, c CoreType) (uint32, []CoreType) { return size, []CoreType{c} }

func (ls layouts) compute(t *component.Type, depth int) (*layout, error) {
	l := &layout{t: t, kind: t.Kind}
	switch t.Kind {
	case component.Bool, component.S8, component.U8:
		l.size, l.flat = prim(1, I32)
	case component.S16, component.U16:
		l.size, l.flat = prim(2, I32)
	case component.S32, component.U32, component.Char:
		l.size, l.flat = prim(4, I32)
	case component.S64, component.U64:
		l.size, l.flat = prim(8, I64)
	case component.F32:
		l.size, l.flat = prim(4, F32)
	case component.F64:
		l.size, l.flat = prim(8, F64)
	case component.Own, component.Borrow:
		l.size, l.flat = prim(4, I32)
		l.res = t.Res
		if l.res == nil {
			return nil, fmt.Errorf("canon: %s handle without a resource type", t.Kind)
		}
	case component.String:
		l.size, l.align, l.flat = 8, 4, []CoreType{I32, I32}
	case component.List:
		e, err := ls.get(t.Elem, depth+1)
		if err != nil {
			return nil, err
		}
		l.elem = e
		l.size, l.align, l.flat = 8, 4, []CoreType{I32, I32}
	case component.Record, component.Tuple:
		var off uint64
		l.align = 1
		for _, f := range t.Fields {
			fl, err := ls.get(f.Type, depth+1)
			if err != nil {
				return nil, err
			}
			off = alignTo(off, uint64(fl.align))
			l.fields = append(l.fields, fl)
			l.offs = append(l.offs, uint32(off))
			off += uint64(fl.size)
			if off > maxTypeSize {
				return nil, fmt.Errorf("canon: %s larger than %d bytes", t.Kind, maxTypeSize)
			}
			l.align = max(l.align, fl.align)
			l.addFlat(fl.flat, fl.over)
		}
		l.size = uint32(alignTo(off, uint64(l.align)))
	case component.Variant, component.Enum, component.Option, component.Result:
		var payloads []*component.Type
		switch t.Kind {
		case component.Variant:
			var names []string
			for _, f := range t.Fields {
				payloads = append(payloads, f.Type)
				names = append(names, f.Name)
			}
			l.names = index(names)
		case component.Enum:
			payloads = make([]*component.Type, len(t.Names))
			l.names = index(t.Names)
		case component.Option:
			if t.Elem == nil {
				return nil, errors.New("canon: option without a type")
			}
			payloads = []*component.Type{nil, t.Elem}
		case component.Result:
			payloads = []*component.Type{t.Elem, t.Err}
		}
		if err := ls.variant(l, payloads, depth); err != nil {
			return nil, err
		}
	case component.Flags:
		n := len(t.Names)
		l.nflags = n
		l.names = index(t.Names)
		switch {
		case n == 0:
			l.size, l.align = 0, 1
		case n <= 8:
			l.size, l.align = 1, 1
		case n <= 16:
			l.size, l.align = 2, 2
		default:
			l.size, l.align = 4*uint32((n+31)/32), 4
		}
		for range (n + 31) / 32 {
			l.addFlat([]CoreType{I32}, false)
		}
	default:
		return nil, fmt.Errorf("canon: %s is not a value type", t.Kind)
	}
	if l.align == 0 {
		l.align = l.size
	}
	return l, nil
}

func index(names []string) map[string]uint32 {
	m := make(map[string]uint32, len(names))
	for i, n := range names {
		if _, dup := m[n]; !dup {
			m[n] = uint32(i)
		}
	}
	return m
}

// variant lays out a variant-like type with the given case payloads.
func (ls layouts) variant(l *layout, payloads []*component.Type, depth int) error {
	n := len(payloads)
	if n == 0 {
		return fmt.Errorf("canon: %s without cases", l.kind)
	}
	l.ncases = n
	switch {
	case n <= 1<<8:
		l.disc = 1
	case n <= 1<<16:
		l.disc = 2
	default:
		l.disc = 4
	}
	var maxAlign, maxSize uint32 = 1, 0
	var flat []CoreType
	over := false
	l.cases = make([]*layout, n)
	for i, p := range payloads {
		if p == nil {
			continue
		}
		cl, err := ls.get(p, depth+1)
		if err != nil {
			return err
		}
		l.cases[i] = cl
		maxAlign = max(maxAlign, cl.align)
		maxSize = max(maxSize, cl.size)
		over = over || cl.over
		for j, c := range cl.flat {
			if j < len(flat) {
				flat[j] = join(flat[j], c)
			} else {
				flat = append(flat, c)
			}
		}
	}
	l.payload = uint32(alignTo(uint64(l.disc), uint64(maxAlign)))
	l.align = max(l.disc, maxAlign)
	size := alignTo(uint64(l.payload)+uint64(maxSize), uint64(l.align))
	if size > maxTypeSize {
		return fmt.Errorf("canon: %s larger than %d bytes", l.kind, maxTypeSize)
	}
	l.size = uint32(size)
	l.addFlat([]CoreType{I32}, false)
	l.addFlat(flat, over)
	return nil
}

// addFlat appends flat values to l's flattening, keeping at most
// MaxFlatParams+1 of them.
func (l *layout) addFlat(flat []CoreType, over bool) {
	if l.over {
		return
	}
	if over || len(l.flat)+len(flat) > MaxFlatParams {
		l.over = true
		room := MaxFlatParams + 1 - len(l.flat)
		l.flat = append(l.flat, flat[:min(room, len(flat))]...)
		return
	}
	l.flat = append(l.flat, flat...)
}

// join is the spec's join of two flat types sharing a variant slot.
func join(a, b CoreType) CoreType {
	if a == b {
		return a
	}
	if (a == I32 && b == F32) || (a == F32 && b == I32) {
		return I32
	}
	return I64
}

// Size returns the size in bytes of a value of type t in linear memory.
func Size(t *component.Type) (uint32, error) {
	l, err := layouts{}.of(t)
	if err != nil {
		return 0, err
	}
	return l.size, nil
}

// Align returns the alignment in bytes of a value of type t in linear
// memory.
func Align(t *component.Type) (uint32, error) {
	l, err := layouts{}.of(t)
	if err != nil {
		return 0, err
	}
	return l.align, nil
}

// Flatten returns the flattening of value type t: the core values it is
// passed as when it is passed flat. The second result is false when t
// flattens to more than MaxFlatParams values, in which case it is only
// ever passed in memory and the slice is truncated.
func Flatten(t *component.Type) ([]CoreType, bool, error) {
	l, err := layouts{}.of(t)
	if err != nil {
		return nil, false, err
	}
	return append([]CoreType(nil), l.flat...), !l.over, nil
}
