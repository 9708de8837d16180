package component

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// jcoForm converts a lifted value of type t into the JSON form
// testdata/layout/lift.mjs prints jco's values in.
func jcoForm(t *cm.Type, v any) any {
	switch t.Kind {
	case cm.S64:
		return strconv.FormatInt(v.(int64), 10)
	case cm.U64:
		return strconv.FormatUint(v.(uint64), 10)
	case cm.F32, cm.F64:
		f := v.(float64)
		switch {
		case math.IsNaN(f):
			return "NaN"
		case math.IsInf(f, 1):
			return "Infinity"
		case math.IsInf(f, -1):
			return "-Infinity"
		case f == 0 && math.Signbit(f):
			return "-0"
		}
		return f
	case cm.Char:
		return string(v.(rune))
	case cm.List:
		out := []any{}
		for _, e := range v.([]any) {
			out = append(out, jcoForm(t.Elem, e))
		}
		return out
	case cm.Tuple:
		out := []any{}
		for i, e := range v.([]any) {
			out = append(out, jcoForm(t.Fields[i].Type, e))
		}
		return out
	case cm.Record:
		out := map[string]any{}
		for _, f := range t.Fields {
			out[f.Name] = jcoForm(f.Type, v.(map[string]any)[f.Name])
		}
		return out
	case cm.Variant:
		c := v.(cm.Case)
		out := map[string]any{"tag": c.Name}
		for _, f := range t.Fields {
			if f.Name == c.Name && f.Type != nil {
				out["val"] = jcoForm(f.Type, c.Value)
			}
		}
		return out
	case cm.Option:
		if v == nil {
			return nil
		}
		return jcoForm(t.Elem, v.(cm.Some).Value)
	case cm.Result:
		r := v.(cm.ResultValue)
		tag, pt := "ok", t.Elem
		if r.Err {
			tag, pt = "err", t.Err
		}
		out := map[string]any{"tag": tag}
		if pt != nil {
			out["val"] = jcoForm(pt, r.Value)
		}
		return out
	case cm.Flags:
		out := map[string]any{}
		for _, n := range t.Names {
			out[n] = false
		}
		for _, n := range v.([]string) {
			out[n] = true
		}
		return out
	}
	return v
}

// jcoName is jco's JavaScript name of a WIT function name.
func jcoName(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// TestLayoutMatchesJco lifts the lists layout.wasm's core module keeps in
// its data segments and compares them with what jco, the reference host,
// lifted from the same bytes (layout.golden.json, made by build.sh): the
// two agree on every size, alignment, field offset, stride, discriminant
// and encoding there.
func TestLayoutMatchesJco(t *testing.T) {
	ctx, rt := newRuntime(t)
	raw, err := os.ReadFile("testdata/layout.golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]any
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	cc, in := start(t, ctx, rt, "testdata/layout.wasm", nil)
	if len(cc.Exports()) != len(golden) || len(golden) < 17 {
		t.Fatalf("%d exports, %d golden values", len(cc.Exports()), len(golden))
	}
	for _, name := range cc.Exports() {
		v, err := in.Call(ctx, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, err := json.Marshal(jcoForm(cc.Type(name).Result, v))
		if err != nil {
			t.Fatal(err)
		}
		var got any
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		want, ok := golden[jcoName(name)]
		if !ok {
			t.Fatalf("no golden value for %s (%s)", name, jcoName(name))
		}
		if !reflect.DeepEqual(got, want) {
			w, _ := json.Marshal(want)
			t.Errorf("%s: canon lifts %s, jco %s", name, b, w)
		}
	}
}
