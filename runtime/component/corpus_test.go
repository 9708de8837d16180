package component

import (
	"context"
	"math"
	"slices"
	"testing"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// zero returns a value of type t: the value a stub host function returns.
func zero(t *cm.Type) any {
	if t == nil {
		return nil
	}
	switch t.Kind {
	case cm.Bool:
		return false
	case cm.S8, cm.S16, cm.S32, cm.S64:
		return int64(0)
	case cm.U8, cm.U16, cm.U32, cm.U64:
		return uint64(0)
	case cm.F32, cm.F64:
		return 0.0
	case cm.Char:
		return 'a'
	case cm.String:
		return ""
	case cm.List:
		return []any{}
	case cm.Tuple:
		out := []any{}
		for _, f := range t.Fields {
			out = append(out, zero(f.Type))
		}
		return out
	case cm.Record:
		out := map[string]any{}
		for _, f := range t.Fields {
			out[f.Name] = zero(f.Type)
		}
		return out
	case cm.Variant:
		return cm.Case{Name: t.Fields[0].Name, Value: zero(t.Fields[0].Type)}
	case cm.Enum:
		return t.Names[0]
	case cm.Option:
		return nil
	case cm.Result:
		return cm.ResultValue{Value: zero(t.Elem)}
	case cm.Flags:
		return []string{}
	case cm.Own:
		return uint32(1)
	}
	return nil
}

// stubHost implements every function the component imports with one
// returning zero values, and records the calls.
func stubHost(c *cm.Component, calls *[]string) *Host {
	h := &Host{Funcs: map[string]Func{}}
	stub := func(name string, res *cm.Type) {
		h.Funcs[name] = func(context.Context, []any) (any, error) {
			*calls = append(*calls, name)
			return zero(res), nil
		}
	}
	for _, imp := range c.Imports {
		if imp.Sort == cm.SortFunc && imp.Type != nil {
			stub(imp.Name, imp.Type.Result)
		}
		if imp.Sort != cm.SortInstance || imp.Type == nil {
			continue
		}
		for _, e := range imp.Type.Exports {
			if e.Sort != cm.SortFunc {
				continue
			}
			stub(imp.Name+"#"+e.Name, e.Type.Result)
		}
	}
	return h
}

// TestCorpus runs the components testdata/components/build.sh makes from
// C and Rust with jco's WASI adapter: a main module, the adapter and the
// shim and fixup modules wit-component links them with (a table filled
// through an inline instance), with WASI stubbed.
func TestCorpus(t *testing.T) {
	ctx, rt := newRuntime(t)
	calls := []struct {
		file, name string
		args       []any
		want       any
	}{
		{"c-text", "greet", []any{"wasmcp"}, "Hello, wasmcp!"},
		{"c-text", "add", []any{int64(40), int64(2)}, int64(42)},
		{"c-text", "add", []any{int64(math.MaxInt32), int64(1)}, int64(math.MinInt32)},
		{"c-text", "env", []any{"HOME"}, nil},
		{"c-text", "wasmcp:c-text/text@0.1.0#count", []any{"two words"}, map[string]any{"chars": uint64(9), "words": uint64(2)}},
		{"c-text", "wasmcp:c-text/text@0.1.0#upper", []any{"shout"}, cm.ResultValue{Value: "SHOUT"}},
		{"c-text", "wasmcp:c-text/text@0.1.0#upper", []any{""}, cm.ResultValue{Err: true, Value: "empty text"}},
		{"rust-shapes", "reverse", []any{"añ😀z"}, "z😀ña"},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#area", []any{cm.Case{Name: "rect", Value: []any{2.0, 3.5}}}, 7.0},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#area", []any{cm.Case{Name: "none"}}, 0.0},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#describe", []any{cm.Case{Name: "circle", Value: 1.5}, cm.Some{Value: "cm"}, []string{"bold"}}, "**a circle of radius 1.5 cm**"},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#describe", []any{cm.Case{Name: "rect", Value: []any{1.0, 2.0}}, nil, []string{"bold", "italic"}}, "_**a 1 by 2 rectangle**_"},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#centroid", []any{[]any{
			map[string]any{"x": int64(0), "y": int64(-4)}, map[string]any{"x": int64(4), "y": int64(0)},
		}}, cm.Some{Value: map[string]any{"x": int64(2), "y": int64(-2)}}},
		{"rust-shapes", "wasmcp:rust-shapes/shapes@0.1.0#centroid", []any{[]any{}}, nil},
	}
	instances := map[string]*Instance{}
	for _, c := range calls {
		in := instances[c.file]
		if in == nil {
			comp := load(t, "../../testdata/components/"+c.file+".wasm")
			var hostCalls []string
			cc, err := Compile(ctx, rt, comp, stubHost(comp, &hostCalls))
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer cc.Close(ctx)
			if in, err = cc.Instantiate(ctx); err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer in.Close(ctx)
			instances[c.file] = in
			if !slices.Contains(cc.Exports(), c.name) {
				t.Fatalf("%s exports %v", c.file, cc.Exports())
			}
		}
		got, err := in.Call(ctx, c.name, c.args...)
		if err != nil {
			t.Fatalf("%s %s: %v", c.file, c.name, err)
		}
		if !sameValue(got, c.want) {
			t.Errorf("%s %s%v = %#v, want %#v", c.file, c.name, c.args, got, c.want)
		}
	}
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k := range x {
			if !sameValue(x[k], y[k]) {
				return false
			}
		}
		return true
	case cm.Some:
		y, ok := b.(cm.Some)
		return ok && sameValue(x.Value, y.Value)
	}
	return a == b
}

// TestFlatteningMatchesWitComponent links flat.wasm, whose core
// signatures wit-component checked against its own flattening when
// build.sh made it (testdata/flat): canon's flattening must give the
// same types, for the lowered imports (instantiation links them by type)
// and for the lifted exports.
func TestFlatteningMatchesWitComponent(t *testing.T) {
	ctx, rt := newRuntime(t)
	var calls []string
	cc, in := start(t, ctx, rt, "testdata/flat.wasm", stubHost(load(t, "testdata/flat.wasm"), &calls))
	if n := len(cc.Exports()); n != 19 {
		t.Fatalf("%d exports, want 19", n)
	}
	for _, name := range cc.Exports() {
		if _, err := in.liftedCore(cc.exports[name]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
