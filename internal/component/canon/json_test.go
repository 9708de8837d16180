package canon

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/internal/component"
)

// TestPlainFormJSON checks that the values component.FromJSON makes from a
// tool call's arguments lower, and that what lifts converts back with
// component.ToJSON to the same JSON: the two packages share one plain form.
func TestPlainFormJSON(t *testing.T) {
	ctx := context.Background()
	point := &component.Type{Kind: component.Record, Fields: []component.Field{
		{Name: "x", Type: tU32}, {Name: "y", Type: option(tString)}, {Name: "z", Type: list(tuple(tS8, tF64, tChar))},
	}}
	v := &component.Type{Kind: component.Variant, Fields: []component.Field{
		{Name: "none"}, {Name: "num", Type: tU64}, {Name: "res", Type: result(tString, tString)},
	}}
	e := &component.Type{Kind: component.Enum, Names: []string{"a", "b"}}
	f := &component.Type{Kind: component.Flags, Names: []string{"r", "w", "x"}}
	cases := []struct {
		t    *component.Type
		json string
	}{
		{point, `{"x":7,"y":"why","z":[[-1,2.5,"c"],[3,-0.5,"😀"]]}`},
		{point, `{"x":0,"y":null,"z":[]}`},
		{v, `{"tag":"none"}`},
		{v, `{"tag":"num","val":18446744073709551615}`},
		{v, `{"tag":"res","val":{"err":"bad"}}`},
		{e, `"b"`},
		{f, `["r","x"]`},
		{list(tU8), `[0,1,255]`},
		{tF32, `1.5`},
		{tS64, `-9223372036854775808`},
		{option(option(tBool)), `true`},
		{tChar, `"é"`},
	}
	for _, enc := range []component.Encoding{component.UTF8, component.UTF16, component.Latin1UTF16} {
		for _, tc := range cases {
			d := json.NewDecoder(bytes.NewReader([]byte(tc.json)))
			d.UseNumber()
			var raw any
			if err := d.Decode(&raw); err != nil {
				t.Fatal(err)
			}
			in, err := component.FromJSON(tc.t, raw, "arg")
			if err != nil {
				t.Fatalf("%s: FromJSON: %v", tc.json, err)
			}
			env := newEnv(1<<16, enc)
			fnc, err := NewFunc(fn(tc.t, tc.t))
			if err != nil {
				t.Fatal(err)
			}
			flat, err := fnc.NewCall(env.opts).LowerArgs(ctx, []any{in})
			if err != nil {
				t.Fatalf("%s: LowerArgs: %v", tc.json, err)
			}
			if ps, _ := fnc.CoreType(true); len(ps) > len(flat) {
				flat = append(flat, 0)
			}
			got, err := fnc.NewCall(env.opts).LiftArgs(ctx, flat)
			if err != nil {
				t.Fatalf("%s: LiftArgs: %v", tc.json, err)
			}
			j, err := component.ToJSON(tc.t, got[0])
			if err != nil {
				t.Fatalf("%s: ToJSON(%#v): %v", tc.json, got[0], err)
			}
			out, _ := json.Marshal(j)
			var a, b any
			_ = json.Unmarshal([]byte(tc.json), &a)
			_ = json.Unmarshal(out, &b)
			if !same(a, b) {
				t.Errorf("%s: %s came back as %s", enc, tc.json, out)
			}
		}
	}
}
