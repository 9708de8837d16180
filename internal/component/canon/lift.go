package canon

import (
	"encoding/binary"
	"math"

	"github.com/wasmcp/wasmcp/internal/component"
)

// lifter lifts guest values into Go values for one call, charging what it
// allocates against a budget.
type lifter struct {
	c      *Call
	budget int64
}

// charge accounts for n bytes of Go memory about to be allocated.
func (r *lifter) charge(n uint64) error {
	if n > uint64(r.budget) {
		return trapf("lifted value exceeds the %d-byte limit", r.c.o.MaxLiftOrDefault())
	}
	r.budget -= int64(n)
	return nil
}

// MaxLiftOrDefault returns MaxLift, or DefaultMaxLift when it is zero.
func (o *Options) MaxLiftOrDefault() int64 {
	if o.MaxLift <= 0 {
		return DefaultMaxLift
	}
	return o.MaxLift
}

// region returns the n bytes of guest memory at ptr, which must be
// aligned to align.
func (r *lifter) region(ptr uint32, n uint64, align uint32) ([]byte, error) {
	m := r.c.o.Memory
	if m == nil {
		return nil, trapf("the function has no memory option")
	}
	if align > 1 && ptr%align != 0 {
		return nil, trapf("pointer %#x not aligned to %d", ptr, align)
	}
	if uint64(ptr)+n > uint64(m.Size()) {
		return nil, trapf("%d bytes at %#x are out of bounds (memory is %d bytes)", n, ptr, m.Size())
	}
	if n == 0 {
		return nil, nil
	}
	b, ok := m.Read(ptr, uint32(n))
	if !ok || uint64(len(b)) != n {
		return nil, trapf("%d bytes at %#x are out of bounds", n, ptr)
	}
	return b, nil
}

// loadAt lifts a value of layout l stored at guest address p.
func (r *lifter) loadAt(l *layout, p uint64) (any, error) {
	b, err := r.region(uint32(p), uint64(l.size), l.align)
	if err != nil {
		return nil, err
	}
	return r.load(l, b)
}

// load lifts a value of layout l from b, which holds its l.size bytes.
func (r *lifter) load(l *layout, b []byte) (any, error) {
	switch l.kind {
	case component.String:
		return r.string(binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]))
	case component.List:
		return r.list(l, binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]))
	case component.Record, component.Tuple:
		return r.record(l, func(i int) (any, error) {
			return r.load(l.fields[i], b[l.offs[i]:l.offs[i]+l.fields[i].size])
		})
	case component.Variant, component.Enum, component.Option, component.Result:
		return r.variant(l, uint32(loadUint(b, l.disc)), func(cl *layout) (any, error) {
			return r.load(cl, b[l.payload:l.payload+cl.size])
		})
	case component.Flags:
		words := make([]uint32, (l.nflags+31)/32)
		switch {
		case l.size == 0:
		case l.size < 4:
			words[0] = uint32(loadUint(b, l.size))
		default:
			for i := range words {
				words[i] = binary.LittleEndian.Uint32(b[4*i:])
			}
		}
		return r.flags(l, words)
	case component.Own, component.Borrow:
		return r.handle(l, binary.LittleEndian.Uint32(b))
	}
	return liftScalar(l.kind, loadUint(b, l.size))
}

// loadUint reads an n-byte little-endian unsigned integer (n <= 8).
func loadUint(b []byte, n uint32) uint64 {
	var x uint64
	for i := int(n) - 1; i >= 0; i-- {
		x = x<<8 | uint64(b[i])
	}
	return x
}

// liftScalar lifts a value of a primitive type other than string from
// its bits: an integer from its low bits (sign-extended for the signed
// types), a float with its NaNs canonicalised.
func liftScalar(k component.Kind, x uint64) (any, error) {
	switch k {
	case component.Bool:
		return uint32(x) != 0, nil
	case component.S8:
		return int64(int8(x)), nil
	case component.U8:
		return uint64(uint8(x)), nil
	case component.S16:
		return int64(int16(x)), nil
	case component.U16:
		return uint64(uint16(x)), nil
	case component.S32:
		return int64(int32(x)), nil
	case component.U32:
		return uint64(uint32(x)), nil
	case component.S64:
		return int64(x), nil
	case component.U64:
		return x, nil
	case component.F32:
		return float64(canon32(math.Float32frombits(uint32(x)))), nil
	case component.F64:
		return canon64(math.Float64frombits(x)), nil
	case component.Char:
		u := uint32(x)
		if u >= 0x110000 || (u >= 0xD800 && u <= 0xDFFF) {
			return nil, trapf("char %#x is not a Unicode scalar value", u)
		}
		return rune(u), nil
	}
	return nil, trapf("cannot lift %s", k)
}

// handle lifts an own handle (moving it out of the table) or a borrow
// (lending it for the call), returning the resource's representation.
func (r *lifter) handle(l *layout, i uint32) (any, error) {
	if l.kind == component.Own {
		return r.c.o.Table.liftOwn(l.res, i)
	}
	return r.c.o.Table.liftBorrow(r.c, l.res, i)
}

// record builds a record (a map by field name) or a tuple (a slice) from
// its members.
func (r *lifter) record(l *layout, member func(i int) (any, error)) (any, error) {
	n := len(l.fields)
	if l.kind == component.Tuple {
		if err := r.charge(24 + 16*uint64(n)); err != nil {
			return nil, err
		}
		out := make([]any, n)
		for i := range out {
			v, err := member(i)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	if err := r.charge(48 + 48*uint64(n)); err != nil {
		return nil, err
	}
	out := make(map[string]any, n)
	for i, f := range l.t.Fields {
		v, err := member(i)
		if err != nil {
			return nil, err
		}
		out[f.Name] = v
	}
	return out, nil
}

// variant checks discriminant c of a variant-like type and builds its
// value: an enum's case name, nil or Some for an option, a ResultValue,
// or a Case.
func (r *lifter) variant(l *layout, c uint32, payload func(cl *layout) (any, error)) (any, error) {
	if int64(c) >= int64(l.ncases) {
		return nil, trapf("%s discriminant %d out of range (%d cases)", l.kind, c, l.ncases)
	}
	if l.kind == component.Enum {
		return l.t.Names[c], nil
	}
	var v any
	if cl := l.cases[c]; cl != nil {
		var err error
		if v, err = payload(cl); err != nil {
			return nil, err
		}
	}
	switch l.kind {
	case component.Option:
		if c == 0 {
			return nil, nil
		}
		return component.Some{Value: v}, nil
	case component.Result:
		return component.ResultValue{Err: c == 1, Value: v}, nil
	}
	return component.Case{Name: l.t.Fields[c].Name, Value: v}, nil
}

// flags unpacks flags words into the names of the flags set, in
// declaration order; bits past the last label are ignored, as the spec
// says.
func (r *lifter) flags(l *layout, words []uint32) (any, error) {
	if err := r.charge(24 + 16*uint64(l.nflags)); err != nil {
		return nil, err
	}
	out := []string{}
	for i, name := range l.t.Names {
		if words[i/32]&(1<<(i%32)) != 0 {
			out = append(out, name)
		}
	}
	return out, nil
}

// list lifts a list of n elements of layout l.elem stored at ptr: a
// []any, or a []byte for a list<u8> when Options.ByteLists is set.
func (r *lifter) list(l *layout, ptr, n uint32) (any, error) {
	e := l.elem
	b, err := r.region(ptr, uint64(n)*uint64(e.size), e.align)
	if err != nil {
		return nil, err
	}
	if e.kind == component.U8 && r.c.o.ByteLists {
		if err := r.charge(24 + uint64(n)); err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	}
	if err := r.charge(24 + 16*uint64(n)); err != nil {
		return nil, err
	}
	out := make([]any, n)
	for i := range out {
		off := uint64(i) * uint64(e.size)
		v, err := r.load(e, b[off:off+uint64(e.size)])
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// flat lifts a value of layout l from exactly len(l.flat) core values.
func (r *lifter) flat(l *layout, vs []uint64) (any, error) {
	switch l.kind {
	case component.String:
		return r.string(uint32(vs[0]), uint32(vs[1]))
	case component.List:
		return r.list(l, uint32(vs[0]), uint32(vs[1]))
	case component.Record, component.Tuple:
		return r.record(l, func(i int) (any, error) {
			n := len(l.fields[i].flat)
			v, err := r.flat(l.fields[i], vs[:n])
			vs = vs[n:]
			return v, err
		})
	case component.Variant, component.Enum, component.Option, component.Result:
		// The payload's flat values come first in the joined slots; an
		// i32 or f32 read from an i64 slot is its low 32 bits, which
		// the 32-bit reads take.
		return r.variant(l, uint32(vs[0]), func(cl *layout) (any, error) {
			return r.flat(cl, vs[1:1+len(cl.flat)])
		})
	case component.Flags:
		words := make([]uint32, len(vs))
		for i, v := range vs {
			words[i] = uint32(v)
		}
		return r.flags(l, words)
	case component.Own, component.Borrow:
		return r.handle(l, uint32(vs[0]))
	}
	return liftScalar(l.kind, vs[0])
}
