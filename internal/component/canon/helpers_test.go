package canon

import (
	"context"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/component"
)

// testMem is a linear memory in a byte slice.
type testMem struct{ b []byte }

func (m *testMem) Size() uint32 { return uint32(len(m.b)) }

func (m *testMem) Read(off, n uint32) ([]byte, bool) {
	if uint64(off)+uint64(n) > uint64(len(m.b)) {
		return nil, false
	}
	return m.b[off : off+n], true
}

func (m *testMem) Write(off uint32, b []byte) bool {
	if uint64(off)+uint64(len(b)) > uint64(len(m.b)) {
		return false
	}
	copy(m.b[off:], b)
	return true
}

// bump is a bump allocator over a testMem, recording its calls.
type bump struct {
	m     *testMem
	next  uint32
	calls []string
}

func (a *bump) realloc(_ context.Context, old, oldSize, align, newSize uint32) (uint32, error) {
	a.calls = append(a.calls, fmt.Sprintf("realloc(%d,%d,%d,%d)", old, oldSize, align, newSize))
	p := (a.next + align - 1) / align * align
	if uint64(p)+uint64(newSize) > uint64(len(a.m.b)) {
		return 0, fmt.Errorf("out of memory")
	}
	if old != 0 {
		copy(a.m.b[p:p+min(oldSize, newSize)], a.m.b[old:])
	}
	a.next = p + newSize
	return p, nil
}

// env is a memory, an allocator and a handle table for one test.
type env struct {
	mem   *testMem
	alloc *bump
	table *ResourceTable
	opts  *Options
}

func newEnv(size int, enc component.Encoding) *env {
	m := &testMem{b: make([]byte, size)}
	a := &bump{m: m, next: 8}
	e := &env{mem: m, alloc: a, table: &ResourceTable{}}
	e.opts = &Options{Encoding: enc, Memory: m, Realloc: a.realloc, Table: e.table}
	return e
}

// Shorthands for building types.
var (
	p                       = component.Prim
	tBool, tS8, tU8, tS16   = p(component.Bool), p(component.S8), p(component.U8), p(component.S16)
	tU16, tS32, tU32, tS64  = p(component.U16), p(component.S32), p(component.U32), p(component.S64)
	tU64, tF32, tF64, tChar = p(component.U64), p(component.F32), p(component.F64), p(component.Char)
	tString                 = p(component.String)
)

func list(e *component.Type) *component.Type { return &component.Type{Kind: component.List, Elem: e} }
func option(e *component.Type) *component.Type {
	return &component.Type{Kind: component.Option, Elem: e}
}
func result(ok, err *component.Type) *component.Type {
	return &component.Type{Kind: component.Result, Elem: ok, Err: err}
}

// compound builds a record, tuple or variant of the given member types,
// named prefix0, prefix1, ... (tuple members are unnamed).
func compound(k component.Kind, prefix string, ts []*component.Type) *component.Type {
	t := &component.Type{Kind: k}
	for i, e := range ts {
		name := ""
		if k != component.Tuple {
			name = fmt.Sprintf("%s%d", prefix, i)
		}
		t.Fields = append(t.Fields, component.Field{Name: name, Type: e})
	}
	return t
}
func tuple(ts ...*component.Type) *component.Type   { return compound(component.Tuple, "", ts) }
func record(ts ...*component.Type) *component.Type  { return compound(component.Record, "f", ts) }
func variant(ts ...*component.Type) *component.Type { return compound(component.Variant, "c", ts) }
func labels(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("l%d", i)
	}
	return out
}
func enum(n int) *component.Type  { return &component.Type{Kind: component.Enum, Names: labels(n)} }
func flags(n int) *component.Type { return &component.Type{Kind: component.Flags, Names: labels(n)} }
func own(r *component.ResourceType) *component.Type {
	return &component.Type{Kind: component.Own, Res: r}
}
func borrow(r *component.ResourceType) *component.Type {
	return &component.Type{Kind: component.Borrow, Res: r}
}
func fn(result *component.Type, params ...*component.Type) *component.Type {
	t := &component.Type{Kind: component.Func, Result: result}
	for i, p := range params {
		t.Params = append(t.Params, component.Field{Name: fmt.Sprintf("p%d", i), Type: p})
	}
	return t
}
