package component

import (
	"errors"
	"testing"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// TestCorpusTools calls the corpus components the way a tools/call
// reaches them: JSON arguments converted by the tool mapping
// (internal/component's Tool.Args), the export Call names
// (Tool.CallName), and the result made into the call's text,
// structuredContent and isError (Tool.Output).
func TestCorpusTools(t *testing.T) {
	ctx, rt := newRuntime(t)
	cases := []struct {
		file, tool, args string
		text, structured string
		isError          bool
	}{
		{"c-text", "greet", `{"name":"wasmcp"}`, "Hello, wasmcp!", `{"result":"Hello, wasmcp!"}`, false},
		{"c-text", "add", `{"a":40,"b":2}`, "42", `{"result":42}`, false},
		{"c-text", "env", `{"key":"HOME"}`, "null", `{"result":null}`, false},
		{"c-text", "wasmcp_c-text_text_0_1_0_count", `{"s":"two words"}`, `{"chars":9,"words":2}`, `{"result":{"chars":9,"words":2}}`, false},
		{"c-text", "wasmcp_c-text_text_0_1_0_upper", `{"s":"shout"}`, `{"ok":"SHOUT"}`, `{"result":{"ok":"SHOUT"}}`, false},
		{"c-text", "wasmcp_c-text_text_0_1_0_upper", `{"s":""}`, "empty text", `{"result":{"err":"empty text"}}`, true},
		{"rust-shapes", "reverse", `{"s":"añ😀z"}`, "z😀ña", `{"result":"z😀ña"}`, false},
		{"rust-shapes", "wasmcp_rust-shapes_shapes_0_1_0_area", `{"s":{"tag":"rect","val":[2,3.5]}}`, "7", `{"result":7}`, false},
		{"rust-shapes", "wasmcp_rust-shapes_shapes_0_1_0_describe", `{"s":{"tag":"circle","val":1.5},"unit":"cm","style":["bold"]}`,
			"**a circle of radius 1.5 cm**", `{"result":"**a circle of radius 1.5 cm**"}`, false},
		{"rust-shapes", "wasmcp_rust-shapes_shapes_0_1_0_centroid", `{"points":[{"x":0,"y":-4},{"x":4,"y":0}]}`, `{"x":2,"y":-2}`, `{"result":{"x":2,"y":-2}}`, false},
		{"rust-shapes", "wasmcp_rust-shapes_shapes_0_1_0_centroid", `{"points":[]}`, "null", `{"result":null}`, false},
	}
	type loaded struct {
		in    *Instance
		tools map[string]cm.Tool
	}
	comps := map[string]*loaded{}
	for _, c := range cases {
		l := comps[c.file]
		if l == nil {
			comp := load(t, "../../testdata/components/"+c.file+".wasm")
			var hostCalls []string
			cc, err := Compile(ctx, rt, comp, stubHost(comp, &hostCalls))
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer cc.Close(ctx)
			in, err := cc.Instantiate(ctx)
			if err != nil {
				t.Fatalf("%s: %v", c.file, err)
			}
			defer in.Close(ctx)
			l = &loaded{in: in, tools: map[string]cm.Tool{}}
			tools, _ := comp.Describe().Tools()
			for _, tool := range tools {
				l.tools[tool.Name] = tool
			}
			comps[c.file] = l
		}
		tool, ok := l.tools[c.tool]
		if !ok {
			t.Fatalf("%s has no tool %s", c.file, c.tool)
		}
		args, err := tool.Args([]byte(c.args))
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		v, err := l.in.Call(ctx, tool.CallName(), args...)
		if err != nil {
			t.Fatalf("%s %s: %v", c.tool, c.args, err)
		}
		out, err := tool.Output(v)
		if err != nil || out.Text != c.text || string(out.Structured) != c.structured || out.IsError != c.isError {
			t.Errorf("%s %s: %+v (%s), %v; want %q %s isError %v", c.tool, c.args, out, out.Structured, err, c.text, c.structured, c.isError)
		}
	}
	// Arguments that do not fit are refused before the call.
	var ae *cm.ArgError
	add := comps["c-text"].tools["add"]
	if _, err := add.Args([]byte(`{"a":"40","b":2}`)); !errors.As(err, &ae) || ae.Path != "a" {
		t.Errorf("a string for an s32: %v", err)
	}
}
