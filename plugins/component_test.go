package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/runtime"
)

// copyComponent copies a component fixture (a path from the repository's
// root) into dir.
func copyComponent(t *testing.T, src, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", src))
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func callTool(reg *Registry, name, args string) (json.RawMessage, error) {
	params, _ := json.Marshal(map[string]any{"name": name, "arguments": json.RawMessage(args)})
	return reg.CallTool(context.Background(), &Request{Params: params,
		Parsed: &mcpreq.Params{Name: name, Arguments: json.RawMessage(args)}, Client: &mcpreq.Client{}})
}

// TestComponentPlugin: components built from C and Rust (on the WASI 0.2
// host) and hand-written ones load beside a wasmcp/1 plugin; their
// tools are listed with Wassette's names and schemas and called with
// strings, numbers, records, variants, options, flags and results; a
// broken component is a load error naming it.
func TestComponentPlugin(t *testing.T) {
	dir := t.TempDir()
	specs := []Spec{
		{Path: copyComponent(t, "testdata/components/c-text.wasm", dir)},
		{Path: copyComponent(t, "testdata/components/rust-shapes.wasm", dir)},
		{Path: copyComponent(t, "internal/component/testdata/echo.wasm", dir), Prefix: "e_"},
	}
	bad := filepath.Join(dir, "broken.wasm")
	if err := os.WriteFile(bad, []byte("\x00asm\x0d\x00\x01\x00\x07\x05\xff\xff\xff\xff\x0f"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, "go_v2.wasm", filepath.Join(dir, "go_v2.wasm"))
	specs = append(specs, Spec{Path: bad}, Spec{Path: filepath.Join(dir, "go_v2.wasm"), Prefix: "g_"})
	reg := testRegistry(t)
	err := reg.Load(context.Background(), specs)
	if err == nil || !strings.Contains(err.Error(), "broken.wasm: component: ") || strings.Count(err.Error(), "plugin ") != 1 {
		t.Fatalf("load error %v", err)
	}
	if n := len(reg.Plugins()); n != 4 {
		t.Fatalf("%d plugins loaded", n)
	}
	names := toolNames(reg)
	for _, want := range []string{"greet", "add", "env", "wasmcp_c-text_text_0_1_0_count", "wasmcp_c-text_text_0_1_0_upper",
		"reverse", "wasmcp_rust-shapes_shapes_0_1_0_area", "e_echo"} {
		if !strings.Contains(","+names+",", ","+want+",") {
			t.Errorf("no tool %s in %s", want, names)
		}
	}
	for _, p := range reg.Plugins() {
		if strings.HasPrefix(p.Name(), "c-text") && (p.ABI() != ABIComponent || p.Module().Mode() != runtime.Component) {
			t.Errorf("c-text: abi %s, mode %v", p.ABI(), p.Module().Mode())
		}
	}
	var greet map[string]json.RawMessage
	for _, raw := range reg.Tools() {
		if strings.Contains(string(raw), `"name":"greet"`) {
			_ = json.Unmarshal(raw, &greet)
		}
	}
	if string(greet["description"]) != `"Greets someone by name."` ||
		string(greet["inputSchema"]) != `{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}` ||
		string(greet["outputSchema"]) != `{"properties":{"result":{"type":"string"}},"required":["result"],"type":"object"}` {
		t.Errorf("greet listed as %v", greet)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"greet", `{"name":"wasmcp"}`, `{"content":[{"text":"Hello, wasmcp!","type":"text"}],"structuredContent":{"result":"Hello, wasmcp!"}}`},
		{"add", `{"a":40,"b":2}`, `{"content":[{"text":"42","type":"text"}],"structuredContent":{"result":42}}`},
		{"env", `{"key":"HOME"}`, `{"content":[{"text":"null","type":"text"}],"structuredContent":{"result":null}}`},
		{"wasmcp_c-text_text_0_1_0_count", `{"s":"two words"}`, `{"content":[{"text":"{\"chars\":9,\"words\":2}","type":"text"}],"structuredContent":{"result":{"chars":9,"words":2}}}`},
		{"wasmcp_c-text_text_0_1_0_upper", `{"s":"shout"}`, `{"content":[{"text":"{\"ok\":\"SHOUT\"}","type":"text"}],"structuredContent":{"result":{"ok":"SHOUT"}}}`},
		{"wasmcp_c-text_text_0_1_0_upper", `{"s":""}`, `{"content":[{"text":"empty text","type":"text"}],"isError":true}`},
		{"reverse", `{"s":"añ😀z"}`, `{"content":[{"text":"z😀ña","type":"text"}],"structuredContent":{"result":"z😀ña"}}`},
		{"wasmcp_rust-shapes_shapes_0_1_0_area", `{"s":{"tag":"rect","val":[2,3.5]}}`, `{"content":[{"text":"7","type":"text"}],"structuredContent":{"result":7}}`},
		{"wasmcp_rust-shapes_shapes_0_1_0_describe", `{"s":{"tag":"circle","val":1.5},"unit":"cm","style":["bold"]}`,
			`{"content":[{"text":"**a circle of radius 1.5 cm**","type":"text"}],"structuredContent":{"result":"**a circle of radius 1.5 cm**"}}`},
		{"wasmcp_rust-shapes_shapes_0_1_0_centroid", `{"points":[{"x":0,"y":-4},{"x":4,"y":0}]}`,
			`{"content":[{"text":"{\"x\":2,\"y\":-2}","type":"text"}],"structuredContent":{"result":{"x":2,"y":-2}}}`},
		{"e_echo", `{"s":"hi"}`, `{"content":[{"text":"hi","type":"text"}],"structuredContent":{"result":"hi"}}`},
	} {
		out, err := callTool(reg, tc.tool, tc.args)
		if err != nil || string(out) != tc.want {
			t.Errorf("%s(%s) = %s, %v\n want %s", tc.tool, tc.args, out, err, tc.want)
		}
	}
	// Arguments against the schema are refused as for every plugin;
	// those that reach the component and do not fit its types are -32602.
	var ae *ArgumentsError
	if _, err = callTool(reg, "add", `{"a":1.5,"b":2}`); !errors.As(err, &ae) {
		t.Errorf("add(1.5, 2): %v", err)
	}
	for _, p := range reg.Plugins() {
		if p.Name() != "c-text" {
			continue
		}
		status, out, err := p.pool.(*componentPool).call(context.Background(), "tools/call", json.RawMessage(`{"name":"add","arguments":{"a":"x","b":2}}`), nil, nil)
		if err != nil || status != 1 || !strings.Contains(string(out), `"code":-32602`) || !strings.Contains(string(out), "argument a") {
			t.Errorf("add(\"x\", 2) = %d %s %v", status, out, err)
		}
		status, out, _ = p.pool.(*componentPool).call(context.Background(), "prompts/get", json.RawMessage(`{"name":"x"}`), nil, nil)
		if status != 1 || !strings.Contains(string(out), `"code":-32601`) {
			t.Errorf("prompts/get = %d %s", status, out)
		}
	}
}

// TestComponentFaults: a component's trap, runaway loop and memory hog
// each fail their call with the runtime's error, as for every plugin,
// and the next call is served.
func TestComponentFaults(t *testing.T) {
	dir := t.TempDir()
	reg := testRegistry(t)
	spec := Spec{Path: copyComponent(t, "runtime/component/testdata/faults.wasm", dir),
		Limits: runtime.Limits{Memory: 1 << 20, Timeout: 200 * time.Millisecond, Instances: 1}}
	if err := reg.Load(context.Background(), []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		tool string
		kind runtime.Kind
	}{{"trap", runtime.KindTrap}, {"spin", runtime.KindDeadline}, {"hog", runtime.KindMemory}} {
		_, err := callTool(reg, tc.tool, `{}`)
		var re *runtime.Error
		if !errors.As(err, &re) || re.Kind != tc.kind {
			t.Errorf("%s: %v, want a %v error", tc.tool, err, tc.kind)
		}
		out, err := callTool(reg, "echo", `{"s":"still here"}`)
		if err != nil || !strings.Contains(string(out), `"still here"`) {
			t.Fatalf("echo after %s: %s %v", tc.tool, out, err)
		}
	}
	if st := reg.Plugins()[0].Stats(); st.Discarded != 3 || st.Created != 4 {
		t.Errorf("stats %+v", st)
	}
}

// TestComponentWASIHost: the C and Rust components are served on the
// real WASI 0.2 host, the C one's environment the granted one; a
// component importing what the host does not implement (runtime/
// component's linked fixture, importing test:rt/host) is refused at
// load, naming the import.
func TestComponentWASIHost(t *testing.T) {
	dir := t.TempDir()
	reg := testRegistry(t)
	err := reg.Load(context.Background(), []Spec{
		{Path: copyComponent(t, "testdata/components/c-text.wasm", dir), Sandbox: runtime.Sandbox{Env: map[string]string{"GREETING": "hi"}}},
		{Path: copyComponent(t, "testdata/components/rust-shapes.wasm", dir)},
		{Path: copyComponent(t, "runtime/component/testdata/linked.wasm", dir)},
	})
	if err == nil || !strings.Contains(err.Error(), "linked.wasm") || !strings.Contains(err.Error(), "is not implemented by the host") ||
		strings.Contains(err.Error(), "\n") {
		t.Fatalf("err %v", err)
	}
	for _, tc := range []struct{ tool, args, want string }{
		{"greet", `{"name":"wasi"}`, `"Hello, wasi!"`},
		{"env", `{"key":"GREETING"}`, `"structuredContent":{"result":"hi"}`},
		{"env", `{"key":"HOME"}`, `"structuredContent":{"result":null}`},
		{"reverse", `{"s":"abc"}`, `"structuredContent":{"result":"cba"}`},
	} {
		out, err := callTool(reg, tc.tool, tc.args)
		if err != nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("%s(%s) = %s, %v; want %s", tc.tool, tc.args, out, err, tc.want)
		}
	}
}

// TestComponentStringPath: a tool of string parameters returning a string
// is converted without encoding/json (stringArgs, stringCall); what it
// answers is what the general path (Tool.Args, Tool.Output) answers, for
// escapes, non-ASCII text, duplicate members, missing and mistyped
// arguments.
func TestComponentStringPath(t *testing.T) {
	dir := t.TempDir()
	reg := testRegistry(t)
	if err := reg.Load(context.Background(), []Spec{{Path: copyComponent(t, "testdata/components/c-echo.wasm", dir)}}); err != nil {
		t.Fatal(err)
	}
	x := reg.Plugins()[0].pool.(*componentPool)
	if len(x.strs) != 1 {
		t.Fatalf("%d string tools", len(x.strs))
	}
	for _, args := range []string{
		`{"text":"plain"}`,
		`{"text":""}`,
		`{"text":"quote \" backslash \\ slash \/ <tag> & \u00e9 \ud83d\ude00 \n\t\u0001"}`,
		`{"text":"añ😀"}`,
		`{"text":"first","text":"last"}`,
		`{"other":"x","text":"y"}`,
		`{"\u0074ext":"escaped key"}`,
		`{}`,
		`{"text":1}`,
		`{"text":null}`,
		`[]`,
	} {
		params := json.RawMessage(`{"name":"echo","arguments":` + args + `}`)
		fs, fast, ferr := x.call(context.Background(), "tools/call", params, nil, nil)
		strs := x.strs
		x.strs = nil
		ss, slow, serr := x.call(context.Background(), "tools/call", params, nil, nil)
		x.strs = strs
		var f, s any
		_ = json.Unmarshal(fast, &f)
		_ = json.Unmarshal(slow, &s)
		if fs != ss || (ferr == nil) != (serr == nil) || !reflect.DeepEqual(f, s) {
			t.Errorf("%s: fast %d %s %v, general %d %s %v", args, fs, fast, ferr, ss, slow, serr)
		}
	}
}

// TestComponentReload: a component file replaced by another is served by
// its new tools after a reload, and a wasmcp/1 plugin replaced by a
// component too.
func TestComponentReload(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.wasm")
	reg := testRegistry(t)
	ctx := context.Background()
	specs := []Spec{{Path: path}}
	for _, step := range []struct {
		src   string
		tools string
	}{
		{"testdata/components/c-echo.wasm", "echo"},
		{"runtime/component/testdata/faults.wasm", "echo,spin,hog,trap,grow-a,grow-b"},
		{"testdata/extism/cplugin.wasm", "upper"},
		{"testdata/components/c-echo.wasm", "echo"},
	} {
		b, err := os.ReadFile(filepath.Join("..", step.src))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := reg.Reload(ctx, specs); err != nil {
			t.Fatalf("%s: %v", step.src, err)
		}
		if got := toolNames(reg); got != step.tools {
			t.Fatalf("after %s: tools %s", step.src, got)
		}
	}
	out, err := callTool(reg, "echo", `{"text":"back"}`)
	if err != nil || !strings.Contains(string(out), `"back"`) {
		t.Fatalf("echo after the reloads = %s %v", out, err)
	}
}

// TestComponentExit: a component calling wasi:cli/exit ends its call as a
// core plugin's proc_exit does, a runtime.Error of KindExit with the
// status (the instance replaced), and the next call is served.
func TestComponentExit(t *testing.T) {
	dir := t.TempDir()
	reg := testRegistry(t)
	if err := reg.Load(context.Background(), []Spec{{Path: copyComponent(t, "runtime/component/testdata/exit.wasm", dir)}}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		code uint32
	}{{`{"fail":true}`, 1}, {`{"fail":false}`, 0}} {
		_, err := callTool(reg, "quit", tc.args)
		var re *runtime.Error
		if !errors.As(err, &re) || re.Kind != runtime.KindExit || re.ExitCode != tc.code {
			t.Errorf("quit(%s) = %v (%T), want exit code %d", tc.args, err, err, tc.code)
		}
		if out, err := callTool(reg, "ok", `{}`); err != nil || !strings.Contains(string(out), `"result":7`) {
			t.Fatalf("ok after quit(%s) = %s %v", tc.args, out, err)
		}
	}
}
