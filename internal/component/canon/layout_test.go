package canon

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// TestLayoutGolden checks sizes, alignments and flattenings against the
// spec's definitions (size, alignment, flatten_type in CanonicalABI.md),
// worked out by hand.
func TestLayoutGolden(t *testing.T) {
	cases := []struct {
		t           *component.Type
		size, align uint32
		flat        string
	}{
		{tBool, 1, 1, "i32"},
		{tS8, 1, 1, "i32"},
		{tU16, 2, 2, "i32"},
		{tS32, 4, 4, "i32"},
		{tU64, 8, 8, "i64"},
		{tF32, 4, 4, "f32"},
		{tF64, 8, 8, "f64"},
		{tChar, 4, 4, "i32"},
		{tString, 8, 4, "i32 i32"},
		{list(tU64), 8, 4, "i32 i32"},
		{own(hostRes), 4, 4, "i32"},
		{borrow(hostRes), 4, 4, "i32"},
		{record(tU8, tU32), 8, 4, "i32 i32"},
		{record(tU8, tU16, tU8), 6, 2, "i32 i32 i32"},
		{record(tU8, record(tU16, tU8), tU64), 16, 8, "i32 i32 i32 i64"},
		{tuple(tU8, tF64), 16, 8, "i32 f64"},
		{tuple(), 0, 1, ""},
		{enum(3), 1, 1, "i32"},
		{enum(256), 1, 1, "i32"},
		{enum(257), 2, 2, "i32"},
		{enum(65537), 4, 4, "i32"},
		{option(tU64), 16, 8, "i32 i64"},
		{option(tString), 12, 4, "i32 i32 i32"},
		{option(tU8), 2, 1, "i32 i32"},
		{result(tU8, tF32), 8, 4, "i32 i32"},
		{result(tF64, tF32), 16, 8, "i32 i64"},
		{result(nil, nil), 1, 1, "i32"},
		{result(tF32, nil), 8, 4, "i32 f32"},
		{variant(tF32, tU64), 16, 8, "i32 i64"},
		{variant(nil, tU16, tString), 12, 4, "i32 i32 i32"},
		{variant(record(tU8, tF32), tuple(tF64, tU8)), 24, 8, "i32 i64 i32"},
		{flags(1), 1, 1, "i32"},
		{flags(8), 1, 1, "i32"},
		{flags(9), 2, 2, "i32"},
		{flags(16), 2, 2, "i32"},
		{flags(17), 4, 4, "i32"},
		{flags(32), 4, 4, "i32"},
		{flags(33), 8, 4, "i32 i32"},
		{flags(65), 12, 4, "i32 i32 i32"},
	}
	for _, tc := range cases {
		t.Run(tc.t.String(), func(t *testing.T) {
			size, err := Size(tc.t)
			if err != nil {
				t.Fatal(err)
			}
			align, _ := Align(tc.t)
			flat, ok, _ := Flatten(tc.t)
			var names []string
			for _, c := range flat {
				names = append(names, c.String())
			}
			got := fmt.Sprint(names)
			if size != tc.size || align != tc.align || got != "["+tc.flat+"]" || !ok {
				t.Fatalf("size %d align %d flat %s (ok %v), want %d %d [%s]", size, align, got, ok, tc.size, tc.align, tc.flat)
			}
		})
	}
}

func TestFlattenOver(t *testing.T) {
	ts := make([]*component.Type, 17)
	for i := range ts {
		ts[i] = tU8
	}
	if _, ok, _ := Flatten(tuple(ts...)); ok {
		t.Fatal("17 flat values reported as flat")
	}
	if _, ok, _ := Flatten(tuple(ts[:16]...)); !ok {
		t.Fatal("16 flat values reported as spilled")
	}
	if _, ok, _ := Flatten(option(tuple(ts[:16]...))); ok {
		t.Fatal("option of 16 flat values (17 with the discriminant) reported as flat")
	}
}

func TestCoreType(t *testing.T) {
	str := func(cs []CoreType) string {
		var s []string
		for _, c := range cs {
			s = append(s, c.String())
		}
		return fmt.Sprint(s)
	}
	sixteen := make([]*component.Type, 16)
	for i := range sixteen {
		sixteen[i] = tU32
	}
	cases := []struct {
		name                     string
		ft                       *component.Type
		liftP, liftR, lowP, lowR string
	}{
		{"echo", fn(tString, tString), "[i32 i32]", "[i32]", "[i32 i32 i32]", "[]"},
		{"u64 add", fn(tU64, tU64, tU64), "[i64 i64]", "[i64]", "[i64 i64]", "[i64]"},
		{"no result", fn(nil, tF32), "[f32]", "[]", "[f32]", "[]"},
		{"16 params", fn(nil, sixteen...), fmt.Sprint(slices.Repeat([]string{"i32"}, 16)), "[]", fmt.Sprint(slices.Repeat([]string{"i32"}, 16)), "[]"},
		{"17 params", fn(tBool, append(sixteen, tU8)...), "[i32]", "[i32]", "[i32]", "[i32]"},
		{"option result", fn(option(tU8)), "[]", "[i32]", "[i32]", "[]"},
	}
	for _, tc := range cases {
		f, err := NewFunc(tc.ft)
		if err != nil {
			t.Fatal(err)
		}
		p, r := f.CoreType(false)
		lp, lr := f.CoreType(true)
		if str(p) != tc.liftP || str(r) != tc.liftR || str(lp) != tc.lowP || str(lr) != tc.lowR {
			t.Errorf("%s: lift %s -> %s, lower %s -> %s", tc.name, str(p), str(r), str(lp), str(lr))
		}
	}
	if _, err := NewFunc(fn(borrow(hostRes))); err == nil {
		t.Error("a borrow result was accepted")
	}
	if _, err := NewFunc(tString); err == nil {
		t.Error("a non-function type was accepted")
	}
}

// TestStoreGolden checks the bytes a value is stored as.
func TestStoreGolden(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		t    *component.Type
		v    any
		want []byte
	}{
		{record(tU8, tU32), []any{0x11, 0x22334455}, []byte{0x11, 0, 0, 0, 0x55, 0x44, 0x33, 0x22}},
		{record(tU8, tU16, tU8), []any{1, 0x0203, 4}, []byte{1, 0, 3, 2, 4, 0}},
		{option(tU16), component.Some{Value: 0x1234}, []byte{1, 0, 0x34, 0x12}},
		{option(tU16), nil, []byte{0, 0, 0, 0}},
		{result(tU8, tF32), component.ResultValue{Err: true, Value: float32(1)}, []byte{1, 0, 0, 0, 0, 0, 0x80, 0x3f}},
		{enum(300), "l258", []byte{2, 1}},
		{flags(10), []string{"l0", "l9"}, []byte{1, 2}},
		{flags(33), []string{"l0", "l32"}, []byte{1, 0, 0, 0, 1, 0, 0, 0}},
		{tuple(tS8, tS16, tS64), []any{-1, -2, -3}, []byte{0xff, 0, 0xfe, 0xff, 0, 0, 0, 0, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
		{tChar, '€', []byte{0xac, 0x20, 0, 0}},
		{tF64, 1.0, []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}},
		{tBool, true, []byte{1}},
	}
	for _, tc := range cases {
		t.Run(tc.t.String(), func(t *testing.T) {
			e := newEnv(1<<12, component.UTF8)
			f, err := NewFunc(fn(tc.t))
			if err != nil {
				t.Fatal(err)
			}
			l := f.result
			w := &lowerer{c: f.NewCall(e.opts)}
			buf := make([]byte, l.size)
			if err := w.store(ctx, l, tc.v, buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, tc.want) {
				t.Fatalf("stored % x, want % x", buf, tc.want)
			}
		})
	}
}

func TestNeeds(t *testing.T) {
	seventeen := make([]*component.Type, 17)
	for i := range seventeen {
		seventeen[i] = tU8
	}
	cases := []struct {
		ft                    *component.Type
		memory, liftRe, lowRe bool
	}{
		{fn(tU32, tU32), false, false, false},
		{fn(tString, tU32), true, false, true},
		{fn(tU32, tString), true, true, false},
		{fn(option(list(tU8))), true, false, true},
		{fn(record(tU8, tU64)), true, false, false},
		{fn(nil, seventeen...), true, true, false},
		{fn(nil, option(tuple(tU8, list(tU8)))), true, true, false},
	}
	for _, tc := range cases {
		f, err := NewFunc(tc.ft)
		if err != nil {
			t.Fatal(err)
		}
		if f.NeedsMemory() != tc.memory || f.NeedsRealloc(false) != tc.liftRe || f.NeedsRealloc(true) != tc.lowRe {
			t.Errorf("%s: memory %v, realloc lift %v lower %v", tc.ft, f.NeedsMemory(), f.NeedsRealloc(false), f.NeedsRealloc(true))
		}
	}
}

// TestLayoutLimits checks that types too large, too deep or cyclic (only
// hand-built ones can be: the decoder's are DAGs within its own bounds)
// are refused, not computed.
func TestLayoutLimits(t *testing.T) {
	wide := func(e *component.Type, n int) *component.Type {
		ts := make([]*component.Type, n)
		for i := range ts {
			ts[i] = e
		}
		return tuple(ts...)
	}
	// 4096 x 4096 x 4096 x u64 = 2^39 bytes, shared nodes: cheap to
	// describe, refused by size.
	huge := wide(wide(wide(tU64, 4096), 4096), 4096)
	if _, err := NewFunc(fn(nil, huge)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("huge type: %v", err)
	}
	big := wide(wide(tU64, 4096), 4096) // 2^27 bytes: allowed
	if s, err := Size(big); err != nil || s != 1<<27 {
		t.Fatalf("big type: %d, %v", s, err)
	}
	deep := tU8
	for range maxDepth + 5 {
		deep = list(deep)
	}
	if _, err := NewFunc(fn(nil, deep)); err == nil || !strings.Contains(err.Error(), "deeper") {
		t.Fatalf("deep type: %v", err)
	}
	cyclic := &component.Type{Kind: component.List}
	cyclic.Elem = option(cyclic)
	if _, err := NewFunc(fn(nil, cyclic)); err == nil {
		t.Fatal("cyclic type accepted")
	}
	bad := &component.Type{Kind: component.Own}
	if _, err := NewFunc(fn(nil, bad)); err == nil {
		t.Fatal("handle without a resource accepted")
	}
}
