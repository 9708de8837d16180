package canon

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/wasmcp/wasmcp/internal/component"
)

// lowerer lowers Go values into a guest for one call.
type lowerer struct {
	c *Call
}

// check fails unless n bytes at ptr are inside memory.
func (w *lowerer) check(ptr uint32, n uint64) error {
	m := w.c.o.Memory
	if m == nil {
		return trapf("the function has no memory option")
	}
	if uint64(ptr)+n > uint64(m.Size()) {
		return trapf("%d bytes at %#x are out of bounds (memory is %d bytes)", n, ptr, m.Size())
	}
	return nil
}

// alloc calls realloc and checks that the block it returns is aligned
// and inside memory.
func (w *lowerer) alloc(ctx context.Context, old, oldSize, align uint32, n uint64) (uint32, error) {
	if n >= 1<<32 {
		return 0, trapf("allocation of %d bytes does not fit in memory", n)
	}
	if w.c.o.Realloc == nil {
		return 0, trapf("the function has no realloc option")
	}
	if w.c.o.Memory == nil {
		return 0, trapf("the function has no memory option")
	}
	ptr, err := w.c.o.Realloc(ctx, old, oldSize, align, uint32(n))
	if err != nil {
		return 0, fmt.Errorf("realloc: %w", err)
	}
	if align > 1 && ptr%align != 0 {
		return 0, trapf("realloc returned %#x, not aligned to %d", ptr, align)
	}
	if err := w.check(ptr, n); err != nil {
		return 0, fmt.Errorf("realloc returned a block out of bounds: %w", err)
	}
	return ptr, nil
}

// write copies b into memory at ptr.
func (w *lowerer) write(ptr uint32, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if err := w.check(ptr, uint64(len(b))); err != nil {
		return err
	}
	if !w.c.o.Memory.Write(ptr, b) {
		return trapf("%d bytes at %#x are out of bounds", len(b), ptr)
	}
	return nil
}

func (w *lowerer) table(t *component.Type) (*ResourceTable, error) {
	if w.c.o.Table == nil {
		return nil, fmt.Errorf("canon: cannot lower %s: the instance has no handle table: %w", t, ErrValue)
	}
	return w.c.o.Table, nil
}

// scalar lowers a value of a type without pointers or handles to its
// core value: an s8 or s16 sign-extended to 32 bits as the spec's
// lower_flat_signed does, every 32-bit value zero-extended to 64 (a
// store to memory takes the low bytes).
func scalar(l *layout, v any) (uint64, error) {
	t := l.t
	switch l.kind {
	case component.Bool:
		b, ok := v.(bool)
		if !ok {
			return 0, valueError(t, v, "")
		}
		if b {
			return 1, nil
		}
		return 0, nil
	case component.S8:
		i, err := toInt(t, v, math.MinInt8, math.MaxInt8)
		return uint64(uint32(int32(i))), err
	case component.S16:
		i, err := toInt(t, v, math.MinInt16, math.MaxInt16)
		return uint64(uint32(int32(i))), err
	case component.S32:
		i, err := toInt(t, v, math.MinInt32, math.MaxInt32)
		return uint64(uint32(i)), err
	case component.S64:
		i, err := toInt(t, v, math.MinInt64, math.MaxInt64)
		return uint64(i), err
	case component.U8:
		return toUint(t, v, math.MaxUint8)
	case component.U16:
		return toUint(t, v, math.MaxUint16)
	case component.U32:
		return toUint(t, v, math.MaxUint32)
	case component.U64:
		return toUint(t, v, math.MaxUint64)
	case component.F32:
		f, err := toFloat(t, v)
		return uint64(math.Float32bits(canon32(float32(f)))), err
	case component.F64:
		f, err := toFloat(t, v)
		return math.Float64bits(canon64(f)), err
	case component.Char:
		c, err := toChar(t, v)
		return uint64(c), err
	}
	return 0, valueError(t, v, "")
}

// handle lowers an own or borrow handle and returns its index.
func (w *lowerer) handle(l *layout, v any) (uint32, error) {
	rep, err := toUint(l.t, v, math.MaxUint32)
	if err != nil {
		return 0, err
	}
	if l.kind == component.Borrow && !l.res.Imported {
		// The callee implements the resource: it gets the
		// representation itself, as lower_borrow's special case says.
		return uint32(rep), nil
	}
	tb, err := w.table(l.t)
	if err != nil {
		return 0, err
	}
	var i uint32
	if l.kind == component.Own {
		i, err = tb.New(l.res, uint32(rep))
	} else {
		i, err = tb.lowerBorrow(w.c, l.res, uint32(rep))
	}
	if err == nil {
		w.c.added = append(w.c.added, i)
	}
	return i, err
}

// store lowers v as a value of layout l into b, which has room for its
// l.size bytes.
func (w *lowerer) store(ctx context.Context, l *layout, v any, b []byte) error {
	switch l.kind {
	case component.Bool, component.S8, component.U8:
		x, err := scalar(l, v)
		b[0] = byte(x)
		return err
	case component.S16, component.U16:
		x, err := scalar(l, v)
		binary.LittleEndian.PutUint16(b, uint16(x))
		return err
	case component.S32, component.U32, component.F32, component.Char:
		x, err := scalar(l, v)
		binary.LittleEndian.PutUint32(b, uint32(x))
		return err
	case component.S64, component.U64, component.F64:
		x, err := scalar(l, v)
		binary.LittleEndian.PutUint64(b, x)
		return err
	case component.String, component.List:
		p, n, err := w.pointer(ctx, l, v)
		binary.LittleEndian.PutUint32(b, p)
		binary.LittleEndian.PutUint32(b[4:], n)
		return err
	case component.Record, component.Tuple:
		vs, err := fieldsOf(l, v)
		if err != nil {
			return err
		}
		for i, fl := range l.fields {
			if err := w.store(ctx, fl, vs[i], b[l.offs[i]:]); err != nil {
				return fmt.Errorf("%s: %w", memberName(l, i), err)
			}
		}
		return nil
	case component.Variant, component.Enum, component.Option, component.Result:
		c, pv, err := caseOf(l, v)
		if err != nil {
			return err
		}
		switch l.disc {
		case 1:
			b[0] = byte(c)
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(c))
		default:
			binary.LittleEndian.PutUint32(b, c)
		}
		if cl := l.cases[c]; cl != nil {
			return w.store(ctx, cl, pv, b[l.payload:])
		}
		return nil
	case component.Flags:
		words, err := flagsOf(l, v)
		if err != nil {
			return err
		}
		switch l.size {
		case 0:
		case 1:
			b[0] = byte(words[0])
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(words[0]))
		default:
			for i, x := range words {
				binary.LittleEndian.PutUint32(b[4*i:], x)
			}
		}
		return nil
	case component.Own, component.Borrow:
		i, err := w.handle(l, v)
		binary.LittleEndian.PutUint32(b, i)
		return err
	}
	return valueError(l.t, v, "")
}

func memberName(l *layout, i int) string {
	if l.kind == component.Record {
		return fmt.Sprintf("field %q", l.t.Fields[i].Name)
	}
	return fmt.Sprintf("element %d", i)
}

// pointer lowers a string or a list into memory it allocates and returns
// the pointer and length.
func (w *lowerer) pointer(ctx context.Context, l *layout, v any) (uint32, uint32, error) {
	if l.kind == component.String {
		s, ok := v.(string)
		if !ok {
			if bs, isBytes := v.([]byte); isBytes {
				s = string(bs)
			} else {
				return 0, 0, valueError(l.t, v, "")
			}
		}
		return w.string(ctx, s)
	}
	e := l.elem
	var n int
	var bytes []byte
	var elems []any
	switch x := v.(type) {
	case []any:
		elems, n = x, len(x)
	case []byte:
		if e.kind != component.U8 {
			return 0, 0, valueError(l.t, v, "")
		}
		bytes, n = x, len(x)
	case string:
		if e.kind != component.U8 {
			return 0, 0, valueError(l.t, v, "")
		}
		bytes, n = []byte(x), len(x)
	case nil:
	default:
		return 0, 0, valueError(l.t, v, "")
	}
	size := uint64(n) * uint64(e.size)
	if size >= 1<<32 {
		return 0, 0, trapf("list of %d elements of %d bytes does not fit in memory", n, e.size)
	}
	ptr, err := w.alloc(ctx, 0, 0, e.align, size)
	if err != nil {
		return 0, 0, err
	}
	if bytes != nil {
		return ptr, uint32(n), w.write(ptr, bytes)
	}
	buf := make([]byte, size)
	for i, x := range elems {
		off := uint64(i) * uint64(e.size)
		if err := w.store(ctx, e, x, buf[off:off+uint64(e.size)]); err != nil {
			return 0, 0, fmt.Errorf("element %d: %w", i, err)
		}
	}
	return ptr, uint32(n), w.write(ptr, buf)
}

// flat lowers v as a value of layout l to its len(l.flat) core values,
// appended to out.
func (w *lowerer) flat(ctx context.Context, l *layout, v any, out []uint64) ([]uint64, error) {
	switch l.kind {
	case component.String, component.List:
		p, n, err := w.pointer(ctx, l, v)
		return append(out, uint64(p), uint64(n)), err
	case component.Record, component.Tuple:
		vs, err := fieldsOf(l, v)
		if err != nil {
			return out, err
		}
		for i, fl := range l.fields {
			if out, err = w.flat(ctx, fl, vs[i], out); err != nil {
				return out, fmt.Errorf("%s: %w", memberName(l, i), err)
			}
		}
		return out, nil
	case component.Variant, component.Enum, component.Option, component.Result:
		c, pv, err := caseOf(l, v)
		if err != nil {
			return out, err
		}
		start := len(out)
		out = append(out, uint64(c))
		if cl := l.cases[c]; cl != nil {
			// A payload value in a wider joined slot is zero-extended,
			// and an f32 or f64 is its bit pattern: the encodings of
			// the narrower values already are.
			if out, err = w.flat(ctx, cl, pv, out); err != nil {
				return out, err
			}
		}
		for len(out) < start+len(l.flat) {
			out = append(out, 0)
		}
		return out, nil
	case component.Flags:
		words, err := flagsOf(l, v)
		if err != nil {
			return out, err
		}
		for _, x := range words {
			out = append(out, uint64(x))
		}
		return out, nil
	case component.Own, component.Borrow:
		i, err := w.handle(l, v)
		return append(out, uint64(i)), err
	}
	x, err := scalar(l, v)
	return append(out, x), err
}
