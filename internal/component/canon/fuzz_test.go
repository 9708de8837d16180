package canon

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// typeGen builds a value type from fuzz bytes.
type typeGen struct {
	b    []byte
	i    int
	res  [2]*component.ResourceType
	cost int
}

func (g *typeGen) next() byte {
	if g.i >= len(g.b) {
		return 0
	}
	c := g.b[g.i]
	g.i++
	return c
}

var fuzzPrims = []component.Kind{component.Bool, component.S8, component.U8, component.S16, component.U16,
	component.S32, component.U32, component.S64, component.U64, component.F32, component.F64,
	component.Char, component.String}

func (g *typeGen) typ(depth int) *component.Type {
	g.cost++
	k := int(g.next() % 24)
	if depth > 5 || g.cost > 60 {
		k %= len(fuzzPrims)
	}
	if k < len(fuzzPrims) {
		return component.Prim(fuzzPrims[k])
	}
	n := 1 + int(g.next()%4)
	switch k {
	case 13, 14:
		return list(g.typ(depth + 1))
	case 15:
		ts := make([]*component.Type, n)
		for i := range ts {
			ts[i] = g.typ(depth + 1)
		}
		return record(ts...)
	case 16:
		ts := make([]*component.Type, n-1)
		for i := range ts {
			ts[i] = g.typ(depth + 1)
		}
		return tuple(ts...)
	case 17:
		ts := make([]*component.Type, n)
		for i := range ts {
			if g.next()%3 != 0 {
				ts[i] = g.typ(depth + 1)
			}
		}
		return variant(ts...)
	case 18:
		return enum(1 + int(g.next())*2)
	case 19:
		return option(g.typ(depth + 1))
	case 20:
		var ok, err *component.Type
		if g.next()%2 == 0 {
			ok = g.typ(depth + 1)
		}
		if g.next()%2 == 0 {
			err = g.typ(depth + 1)
		}
		return result(ok, err)
	case 21:
		return flags(1 + int(g.next()%70))
	case 22:
		return own(g.res[g.next()%2])
	default:
		return borrow(g.res[g.next()%2])
	}
}

// FuzzLift lifts random core values and random memory as a random
// function type's parameters and result: it must never panic, and a
// value that lifts must lower and lift back to itself.
func FuzzLift(f *testing.F) {
	f.Add([]byte{12, 0, 0, 0}, []byte("\x08\x00\x00\x00\x05\x00\x00\x00hello"))
	f.Add([]byte{13, 15, 2, 12, 19, 6}, []byte{8, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0x20, 0, 0, 0})
	f.Add([]byte{17, 3, 1, 10, 1, 12, 0, 9}, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{21, 40, 18, 200, 22, 0}, []byte{0xff, 0xff, 0xff, 0xff, 1, 0, 0, 0})
	f.Add([]byte{13, 16, 1, 0, 0}, []byte{0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, typeBytes, data []byte) {
		ctx := context.Background()
		g := &typeGen{b: typeBytes}
		g.res[0] = &component.ResourceType{Name: "a", Dtor: -1, Imported: true}
		g.res[1] = &component.ResourceType{Name: "b", Dtor: 2}
		enc := component.Encoding(g.next() % 3)
		np := int(g.next() % 4)
		params := make([]*component.Type, np)
		for i := range params {
			params[i] = g.typ(0)
		}
		var res *component.Type
		if g.next()%2 == 0 {
			res = g.typ(0)
			if hasBorrow(res, 0) {
				res = nil
			}
		}
		fnType := fn(res, params...)
		fnc, err := NewFunc(fnType)
		if err != nil {
			t.Fatalf("NewFunc(%s): %v", fnType, err)
		}
		e := newEnv(4096, enc)
		e.opts.MaxLift = 1 << 20
		e.opts.ByteLists = g.next()%2 == 0
		copy(e.mem.b, data)
		for i := range 4 {
			if _, err := e.table.New(g.res[i%2], uint32(i)); err != nil {
				t.Fatal(err)
			}
		}
		// Core values: taken from the data, after the first 64 bytes.
		core := func(n int) []uint64 {
			vs := make([]uint64, n)
			for i := range vs {
				off := 64 + 8*i
				if off+8 <= len(data) {
					vs[i] = binary.LittleEndian.Uint64(data[off:])
				} else {
					vs[i] = uint64(i * 8)
				}
				// Small values are likelier to be valid pointers,
				// lengths and discriminants.
				if vs[i]&(1<<63) == 0 {
					vs[i] %= 64
				}
			}
			return vs
		}
		ps, _ := fnc.CoreType(true)
		c := fnc.NewCall(e.opts)
		args, err := c.LiftArgs(ctx, core(len(ps)))
		c.End()
		if err == nil {
			roundTrip(t, fnc, e.opts, args)
		}
		_, rs := fnc.CoreType(false)
		_, _ = fnc.NewCall(e.opts).LiftResults(ctx, core(len(rs)))
	})
}

// roundTrip lowers lifted arguments into a fresh memory and lifts them
// again: they must come back the same.
func roundTrip(t *testing.T, fnc *Func, o *Options, args []any) {
	ctx := context.Background()
	e := newEnv(1<<22, o.Encoding)
	e.opts.ByteLists = o.ByteLists
	flat, err := fnc.NewCall(e.opts).LowerArgs(ctx, args)
	if err != nil {
		t.Fatalf("lowering lifted args %s of %s: %v", show(args), fnc.Type, err)
	}
	if ps, _ := fnc.CoreType(true); len(ps) > len(flat) {
		flat = append(flat, 0) // the out-pointer of a spilled result
	}
	back, err := fnc.NewCall(e.opts).LiftArgs(ctx, flat)
	if err != nil {
		t.Fatalf("lifting lowered args of %s: %v", fnc.Type, err)
	}
	for i := range args {
		if !same(args[i], back[i]) {
			t.Fatalf("arg %d of %s: %s came back as %s", i, fnc.Type, show(args[i]), show(back[i]))
		}
	}
}

func show(v any) string { return fmt.Sprintf("%#v", v) }
