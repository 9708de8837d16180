package canon

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// TestLiftHostile checks that each malformed value a guest can pass is a
// trap: pointers and lengths out of bounds or misaligned, lengths whose
// byte size overflows 32 bits, lists too long for the lift budget,
// invalid discriminants, chars and handles.
func TestLiftHostile(t *testing.T) {
	ctx := context.Background()
	other := &component.ResourceType{Name: "other", Dtor: -1, Imported: true}
	cases := []struct {
		name string
		t    *component.Type
		mem  map[uint32][]byte // bytes to place in memory first
		flat []uint64
	}{
		{"string past memory", tString, nil, []uint64{4090, 10}},
		{"string at 4GiB", tString, nil, []uint64{0xffffffff, 2}},
		{"string utf16 length overflows", tString, nil, []uint64{0, 0x7fffffff}},
		{"list past memory", list(tU8), nil, []uint64{100, 5000}},
		{"list size overflows 32 bits", list(tU64), nil, []uint64{8, 0x20000001}},
		{"list misaligned", list(tU32), nil, []uint64{2, 1}},
		{"list of empty tuples too long", list(tuple()), nil, []uint64{0, 0xffffffff}},
		{"list of empty tuples at 4GiB", list(tuple()), nil, []uint64{0xffffffff, 0xffffffff}},
		{"list of lists beyond budget", list(list(tuple())), map[uint32][]byte{8: le32(0, 0x100000, 0, 0x100000)}, []uint64{8, 2}},
		{"nested string out of bounds", list(tString), map[uint32][]byte{8: le32(4000, 200)}, []uint64{8, 1}},
		{"bad option discriminant", list(option(tU8)), map[uint32][]byte{8: {2, 0}}, []uint64{8, 1}},
		{"bad result discriminant", list(result(tU8, nil)), map[uint32][]byte{8: {5, 0}}, []uint64{8, 1}},
		{"bad enum discriminant", list(enum(3)), map[uint32][]byte{8: {3}}, []uint64{8, 1}},
		{"bad wide enum discriminant", list(enum(300)), map[uint32][]byte{8: {0x2c, 0x01}}, []uint64{8, 1}},
		{"bad flat variant discriminant", variant(nil, tU8), nil, []uint64{2, 0}},
		{"bad flat discriminant high bits", option(tU8), nil, []uint64{0x100000000 | 7, 0}},
		{"surrogate char", tChar, nil, []uint64{0xD800}},
		{"char past Unicode", tChar, nil, []uint64{0x110000}},
		{"char in memory", list(tChar), map[uint32][]byte{8: le32(0xDFFF)}, []uint64{8, 1}},
		{"own not live", own(hostRes), nil, []uint64{5}},
		{"own index 0", own(hostRes), nil, []uint64{0}},
		{"own of another type", own(other), nil, []uint64{1}},
		{"borrow of another type", borrow(other), nil, []uint64{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(4096, component.UTF16)
			if tc.t.Kind != component.String {
				e.opts.Encoding = component.UTF8
			}
			e.opts.MaxLift = 1 << 20
			if _, err := e.table.New(hostRes, 1); err != nil {
				t.Fatal(err)
			}
			for off, b := range tc.mem {
				copy(e.mem.b[off:], b)
			}
			f, err := NewFunc(fn(nil, tc.t))
			if err != nil {
				t.Fatal(err)
			}
			got, err := f.NewCall(e.opts).LiftArgs(ctx, tc.flat)
			if !errors.Is(err, ErrTrap) {
				t.Fatalf("lifted %#v, err %v", got, err)
			}
		})
	}
}

func le32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

// TestLiftLenient checks the spec's leniencies: a bool is any non-zero
// byte, unused flag bits are ignored, and an i32 core value's high bits
// are ignored.
func TestLiftLenient(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	copy(e.mem.b[8:], []byte{2, 0xff, 0xf5})
	f, _ := NewFunc(fn(nil, list(tBool), list(flags(3)), tBool, flags(2)))
	got, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{8, 1, 9, 2, 0x100000000, 0xff})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{[]any{true}, []any{[]string{"l0", "l1", "l2"}, []string{"l0", "l2"}}, false, []string{"l0", "l1"}}
	if !same(got, want) {
		t.Fatalf("got %#v", got)
	}
}

// TestSpilledHostile checks spilled parameters and results at bad
// addresses.
func TestSpilledHostile(t *testing.T) {
	ctx := context.Background()
	e := newEnv(4096, component.UTF8)
	params := make([]*component.Type, 17)
	for i := range params {
		params[i] = tU64
	}
	f, _ := NewFunc(fn(tString, params...))
	for _, p := range []uint64{4, 4096 - 64, 0xfffffff8} {
		if _, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{p, 8}); !errors.Is(err, ErrTrap) {
			t.Errorf("spilled params at %#x: %v", p, err)
		}
	}
	for _, p := range []uint64{2, 4092, 0xfffffffc} {
		if _, err := f.NewCall(e.opts).LowerResults(ctx, "x", []uint64{8, p}); !errors.Is(err, ErrTrap) {
			t.Errorf("out-pointer %#x: %v", p, err)
		}
		if _, err := f.NewCall(e.opts).LiftResults(ctx, []uint64{p}); !errors.Is(err, ErrTrap) {
			t.Errorf("spilled result at %#x: %v", p, err)
		}
	}
	if _, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{8}); err == nil {
		t.Error("missing out-pointer accepted")
	}
}

// TestReallocHostile checks that a realloc returning a misaligned or
// out-of-bounds block, or failing, fails the lowering.
func TestReallocHostile(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("boom")
	cases := []struct {
		name    string
		t       *component.Type
		v       any
		realloc Realloc
		want    error
	}{
		{"string out of bounds", tString, "abc", func(context.Context, uint32, uint32, uint32, uint32) (uint32, error) { return 4095, nil }, ErrTrap},
		{"string at 4GiB", tString, "abc", func(context.Context, uint32, uint32, uint32, uint32) (uint32, error) { return 0xfffffffe, nil }, ErrTrap},
		{"list misaligned", list(tU32), []any{1}, func(context.Context, uint32, uint32, uint32, uint32) (uint32, error) { return 6, nil }, ErrTrap},
		{"utf16 misaligned", tString, "é", func(context.Context, uint32, uint32, uint32, uint32) (uint32, error) { return 9, nil }, ErrTrap},
		{"realloc error", tString, "x", func(context.Context, uint32, uint32, uint32, uint32) (uint32, error) { return 0, boom }, boom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(4096, component.UTF8)
			if tc.name == "utf16 misaligned" {
				e.opts.Encoding = component.UTF16
			}
			e.opts.Realloc = tc.realloc
			f, _ := NewFunc(fn(nil, tc.t))
			if _, err := f.NewCall(e.opts).LowerArgs(ctx, []any{tc.v}); !errors.Is(err, tc.want) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
		})
	}
	// No memory, no realloc, no table.
	f, _ := NewFunc(fn(nil, tString))
	if _, err := f.NewCall(&Options{}).LowerArgs(ctx, []any{"x"}); !errors.Is(err, ErrTrap) {
		t.Errorf("string without memory: %v", err)
	}
	if _, err := f.NewCall(&Options{}).LiftArgs(ctx, []uint64{0, 1}); !errors.Is(err, ErrTrap) {
		t.Errorf("lift string without memory: %v", err)
	}
	g, _ := NewFunc(fn(nil, own(hostRes)))
	if _, err := g.NewCall(&Options{}).LowerArgs(ctx, []any{uint32(1)}); err == nil {
		t.Error("own without a table accepted")
	}
	if _, err := g.NewCall(&Options{}).LiftArgs(ctx, []uint64{1}); !errors.Is(err, ErrTrap) {
		t.Errorf("lift own without a table: %v", err)
	}
}

// TestMaxLift checks the lift budget: a list within memory but past the
// budget is a trap, and the same list under a larger budget lifts.
func TestMaxLift(t *testing.T) {
	ctx := context.Background()
	e := newEnv(1<<20, component.UTF8)
	f, _ := NewFunc(fn(nil, list(tU32)))
	e.opts.MaxLift = 1 << 16
	if _, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{0, 1 << 16}); !errors.Is(err, ErrTrap) {
		t.Fatalf("list past the budget: %v", err)
	}
	e.opts.MaxLift = 0 // the default
	got, err := f.NewCall(e.opts).LiftArgs(ctx, []uint64{0, 1 << 16})
	if err != nil || len(got[0].([]any)) != 1<<16 {
		t.Fatalf("list within the default budget: %v", err)
	}
}
