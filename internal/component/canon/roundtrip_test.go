package canon

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// same is reflect.DeepEqual, except that floats compare by bits (so that
// the canonical NaN equals itself).
func same(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !same(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !same(v, w) {
				return false
			}
		}
		return true
	case component.Case:
		y, ok := b.(component.Case)
		return ok && x.Name == y.Name && same(x.Value, y.Value)
	case component.Some:
		y, ok := b.(component.Some)
		return ok && same(x.Value, y.Value)
	case component.ResultValue:
		y, ok := b.(component.ResultValue)
		return ok && x.Err == y.Err && same(x.Value, y.Value)
	}
	return reflect.DeepEqual(a, b)
}

var hostRes = &component.ResourceType{Name: "host-thing", Dtor: -1, Imported: true}

type rtCase struct {
	name string
	t    *component.Type
	in   any
	want any // nil: the same as in
}

func roundTripCases() []rtCase {
	nan64 := math.Float64frombits(0x7ff8000000000000)
	some := func(v any) any { return component.Some{Value: v} }
	ok := func(v any) any { return component.ResultValue{Value: v} }
	fail := func(v any) any { return component.ResultValue{Err: true, Value: v} }
	cs := func(name string, v any) any { return component.Case{Name: name, Value: v} }
	return []rtCase{
		{"bool true", tBool, true, nil},
		{"bool false", tBool, false, nil},
		{"s8 min", tS8, int64(math.MinInt8), nil},
		{"s8 from int8", tS8, int8(-5), int64(-5)},
		{"u8 max", tU8, uint64(255), nil},
		{"u8 from int", tU8, 7, uint64(7)},
		{"s16", tS16, int64(-30000), nil},
		{"u16", tU16, uint64(65535), nil},
		{"s32 min", tS32, int64(math.MinInt32), nil},
		{"u32 max", tU32, uint64(math.MaxUint32), nil},
		{"u32 from float64", tU32, float64(7), uint64(7)},
		{"s64 min", tS64, int64(math.MinInt64), nil},
		{"s64 from float64", tS64, float64(-(1 << 62)), int64(-(1 << 62))},
		{"u64 max", tU64, uint64(math.MaxUint64), nil},
		{"f32", tF32, 1.5, nil},
		{"f32 from float32", tF32, float32(0.25), 0.25},
		{"f32 rounds", tF32, 0.1, float64(float32(0.1))},
		{"f32 nan canonicalised", tF32, math.Float32frombits(0x7fa00001), nan64},
		{"f64 -0", tF64, math.Copysign(0, -1), nil},
		{"f64 nan canonicalised", tF64, math.Float64frombits(0xfff0000000000001), nan64},
		{"f64 inf", tF64, math.Inf(-1), nil},
		{"char ascii", tChar, 'a', nil},
		{"char astral", tChar, '😀', nil},
		{"char from string", tChar, "é", 'é'},
		{"string empty", tString, "", nil},
		{"string", tString, "hello, wörld 😀", nil},
		{"list<u8>", list(tU8), []any{uint64(1), uint64(2)}, nil},
		{"list<u8> from bytes", list(tU8), []byte{1, 2, 3}, []any{uint64(1), uint64(2), uint64(3)}},
		{"list<u8> empty", list(tU8), []any{}, nil},
		{"list<u16>", list(tU16), []any{uint64(1), uint64(0xffff)}, nil},
		{"list<string>", list(tString), []any{"a", "", "ccc"}, nil},
		{"list<list<u32>>", list(list(tU32)), []any{[]any{uint64(1)}, []any{}, []any{uint64(2), uint64(3)}}, nil},
		{"list empty nil", list(tS32), nil, []any{}},
		{"record", record(tU8, tU32, tString), map[string]any{"f0": uint64(1), "f1": uint64(2), "f2": "x"}, nil},
		{"record from slice", record(tU8, tString), []any{9, "y"}, map[string]any{"f0": uint64(9), "f1": "y"}},
		{"tuple", tuple(tS64, tF32, tChar), []any{int64(-1), 2.0, 'z'}, nil},
		{"tuple empty", tuple(), []any{}, nil},
		{"variant no payload", variant(nil, tU32, tString), cs("c0", nil), nil},
		{"variant u32", variant(nil, tU32, tString), cs("c1", uint64(7)), nil},
		{"variant string", variant(nil, tU32, tString), cs("c2", "s"), nil},
		{"variant join f32/u64", variant(tF32, tU64), cs("c0", -2.5), nil},
		{"variant join f64/u32", variant(tF64, tU32), cs("c1", uint64(0xfffffffe)), nil},
		{"variant join f64", variant(tF64, tU32), cs("c0", 3.25), nil},
		{"variant join s8", variant(tS8, tS64), cs("c0", int64(-3)), nil},
		{"variant join s64", variant(tS8, tS64), cs("c1", int64(math.MinInt64)), nil},
		{"variant by name", variant(nil, tU32), "c0", cs("c0", nil)},
		{"enum", enum(3), "l2", nil},
		{"enum by index", enum(3), 1, "l1"},
		{"enum 300 cases", enum(300), "l299", nil},
		{"option none", option(tString), nil, nil},
		{"option some", option(tString), some("v"), nil},
		{"option<option> some none", option(option(tU8)), some(nil), nil},
		{"option<option> some some", option(option(tU8)), some(some(uint64(4))), nil},
		{"result ok", result(tU32, tString), ok(uint64(3)), nil},
		{"result err", result(tU32, tString), fail("bad"), nil},
		{"result empty ok", result(nil, nil), ok(nil), nil},
		{"result empty err", result(nil, tString), fail("e"), nil},
		{"flags 3", flags(3), []string{"l0", "l2"}, nil},
		{"flags none set", flags(3), []string{}, nil},
		{"flags from bools", flags(3), []bool{false, false, true}, []string{"l2"}},
		{"flags from mask", flags(10), 0x201, []string{"l0", "l9"}},
		{"flags 40", flags(40), []any{"l39", "l0", "l33"}, []string{"l0", "l33", "l39"}},
		{"own", own(hostRes), uint32(77), nil},
		{"borrow", borrow(hostRes), uint32(78), nil},
		{"nested", list(record(option(tString), list(tuple(tS8, tF64, tChar)))),
			[]any{map[string]any{"f0": some("a"), "f1": []any{[]any{int64(1), 2.5, 'x'}}}, map[string]any{"f0": nil, "f1": []any{}}}, nil},
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	pad := make([]*component.Type, 17)
	for i := range pad {
		pad[i] = tU32
	}
	for _, enc := range []component.Encoding{component.UTF8, component.UTF16, component.Latin1UTF16} {
		for _, tc := range roundTripCases() {
			want := tc.want
			if want == nil {
				want = tc.in
			}
			t.Run(enc.String()+"/"+tc.name, func(t *testing.T) {
				// Arguments, flat and spilled to memory.
				for _, spill := range []bool{false, true} {
					e := newEnv(1<<16, enc)
					params := []*component.Type{tc.t}
					args := []any{tc.in}
					if spill {
						params = append(params, pad...)
						for range pad {
							args = append(args, uint32(5))
						}
					}
					f, err := NewFunc(fn(nil, params...))
					if err != nil {
						t.Fatal(err)
					}
					flat, err := f.NewCall(e.opts).LowerArgs(ctx, args)
					if err != nil {
						t.Fatalf("LowerArgs (spill %v): %v", spill, err)
					}
					if spill != (len(flat) == 1 && len(params) > 1) {
						t.Fatalf("spill %v but %d core args", spill, len(flat))
					}
					c := f.NewCall(e.opts)
					got, err := c.LiftArgs(ctx, flat)
					if err != nil {
						t.Fatalf("LiftArgs (spill %v): %v", spill, err)
					}
					c.End()
					if !same(got[0], want) {
						t.Fatalf("args (spill %v): got %#v, want %#v", spill, got[0], want)
					}
					if spill && !same(got[17], uint64(5)) {
						t.Fatalf("last padding arg %#v", got[16])
					}
				}
				if tc.t.Kind == component.Borrow {
					return
				}
				// Results, flat or through the out-pointer.
				e := newEnv(1<<16, enc)
				f, err := NewFunc(fn(tc.t))
				if err != nil {
					t.Fatal(err)
				}
				var callArgs []uint64
				ps, _ := f.CoreType(true)
				if len(ps) == 1 {
					out, err := e.alloc.realloc(ctx, 0, 0, 8, 64)
					if err != nil {
						t.Fatal(err)
					}
					callArgs = []uint64{uint64(out)}
				}
				flat, err := f.NewCall(e.opts).LowerResults(ctx, tc.in, callArgs)
				if err != nil {
					t.Fatalf("LowerResults: %v", err)
				}
				if len(callArgs) == 1 {
					flat = callArgs
				}
				got, err := f.NewCall(e.opts).LiftResults(ctx, flat)
				if err != nil {
					t.Fatalf("LiftResults: %v", err)
				}
				if !same(got, want) {
					t.Fatalf("result: got %#v, want %#v", got, want)
				}
			})
		}
	}
}

// TestLowerRefusesBadValues checks that a Go value that does not fit its
// type is an error (not a trap, not a panic).
func TestLowerRefusesBadValues(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		t    *component.Type
		v    any
	}{
		{"bool from int", tBool, 1},
		{"u8 overflow", tU8, 256},
		{"u8 negative", tU8, -1},
		{"s8 overflow", tS8, 128},
		{"s64 from huge uint", tS64, uint64(math.MaxUint64)},
		{"u32 fraction", tU32, 1.5},
		{"u64 from 2^64", tU64, float64(1 << 64)},
		{"char surrogate", tChar, rune(0xD800)},
		{"char too big", tChar, 0x110000},
		{"char two runes", tChar, "ab"},
		{"string invalid utf8", tString, "\xff"},
		{"string from int", tString, 3},
		{"list from string", list(tU32), "abc"},
		{"record short", record(tU8, tU8), []any{1}},
		{"record map missing", record(tU8, tU8), map[string]any{"f0": 1, "x": 2}},
		{"variant no such case", variant(nil, tU8), component.Case{Name: "c2"}},
		{"variant name of a case with payload", variant(nil, tU8), "c1"},
		{"variant payload for a case without", variant(nil, tU8), component.Case{Name: "c0", Value: 1}},
		{"variant from a result", variant(nil, tU8), component.ResultValue{}},
		{"result from a case", result(nil, nil), component.Case{Name: "ok"}},
		{"option from a result", option(tU8), component.ResultValue{}},
		{"enum out of range", enum(2), 2},
		{"enum bad label", enum(2), "zz"},
		{"option from value", option(tU8), 3},
		{"flags bad label", flags(3), []string{"nope"}},
		{"flags mask too wide", flags(3), 8},
		{"flags wrong count", flags(3), []bool{true}},
		{"flags too many bools", flags(3), []any{true, false, true, true}},
		{"flags mixed junk", flags(3), []any{1}},
		{"own from string", own(hostRes), "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(1<<12, component.UTF8)
			f, err := NewFunc(fn(nil, tc.t))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.NewCall(e.opts).LowerArgs(ctx, []any{tc.v})
			if err == nil {
				t.Fatalf("lowered %#v as %s", tc.v, tc.t)
			}
			if !strings.Contains(err.Error(), "canon") || !errors.Is(err, ErrValue) || errors.Is(err, ErrTrap) {
				t.Fatalf("error %q: not an ErrValue saying where it comes from", err)
			}
		})
	}
}
