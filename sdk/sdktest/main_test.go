package sdktest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/runtime"
)

// One engine per test binary; its on-disk cache is WASMCP_TEST_CACHE (set
// by scripts/test.sh) or a directory under the system temp dir, so later
// runs start warm.
var (
	engine *runtime.Engine
	modMu  sync.Mutex
	mods   = map[string]*runtime.Module{}
)

func TestMain(m *testing.M) {
	dir := os.Getenv("WASMCP_TEST_CACHE")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "wasmcp-sdktest-cache")
	}
	var err error
	engine, err = runtime.NewEngine(context.Background(), runtime.Config{CacheDir: dir, Modules: runtime.ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
	if err != nil {
		panic(err)
	}
	code := m.Run()
	_ = engine.Close(context.Background())
	os.Exit(code)
}

// Plugins under test, relative to this directory.
var fixtures = map[string]string{
	"c":    "testdata/c/plugin.wasm",
	"rust": "testdata/rust/plugin.wasm",
	"as":   "testdata/as/plugin.wasm",
}

const (
	cHash     = "../../examples/c-hash/c-hash.wasm"
	rustDates = "../../examples/rust-dates/rust-dates.wasm"
	asCalc    = "../../examples/as-calc/as-calc.wasm"
	watPing   = "../../examples/wat-ping/wat-ping.wasm"
)

// module compiles the wasm file at path once per test binary.
func module(t testing.TB, path string) *runtime.Module {
	t.Helper()
	modMu.Lock()
	defer modMu.Unlock()
	if m, ok := mods[path]; ok {
		return m
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Compile(context.Background(), filepath.Base(path), wasm)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	mods[path] = m
	return m
}

// newPool creates a pool for the plugin at path, closed after the test.
func newPool(t testing.TB, path string, l runtime.Limits) *runtime.Pool {
	t.Helper()
	p, err := module(t, path).NewPool(l, runtime.Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// hostCall is one call import the fake host saw.
type hostCall struct {
	Method string
	Params map[string]any
}

// logLine is one log import the fake host saw.
type logLine struct {
	Level int32
	Msg   string
}

// fakeHost is a runtime.Host with canned answers. Answers are keyed by
// method; a method without an answer gets abi.ErrUnknown (-7). kv methods
// without an answer are served from an in-memory store.
type fakeHost struct {
	mu      sync.Mutex
	answers map[string]answer
	kv      map[string]string
	calls   []hostCall
	logs    []logLine
}

type answer struct {
	result string
	errno  int32
}

func newHost(answers map[string]answer) *fakeHost {
	if answers == nil {
		answers = map[string]answer{}
	}
	return &fakeHost{answers: answers, kv: map[string]string{}}
}

func (h *fakeHost) Log(_ context.Context, level int32, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, logLine{level, string(msg)})
}

func (h *fakeHost) Call(_ context.Context, method string, params []byte) ([]byte, int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var p map[string]any
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, -2
	}
	h.calls = append(h.calls, hostCall{method, p})
	if a, ok := h.answers[method]; ok {
		if a.errno != 0 {
			if a.errno == -5 {
				return []byte(a.result), a.errno
			}
			return nil, a.errno
		}
		return []byte(a.result), 0
	}
	str := func(k string) string { s, _ := p[k].(string); return s }
	enc := func(v any) []byte { b, _ := json.Marshal(v); return b }
	switch method {
	case "kv/set":
		h.kv[str("key")] = str("value")
		return []byte(`{}`), 0
	case "kv/get":
		v, ok := h.kv[str("key")]
		if !ok {
			return []byte(`{"value":null}`), 0
		}
		return enc(map[string]any{"value": v}), 0
	case "kv/delete":
		delete(h.kv, str("key"))
		return []byte(`{}`), 0
	case "kv/list":
		keys := []string{}
		for k := range h.kv {
			if len(k) >= len(str("prefix")) && k[:len(str("prefix"))] == str("prefix") {
				keys = append(keys, k)
			}
		}
		return enc(map[string]any{"keys": keys}), 0
	}
	return nil, -7
}

func (h *fakeHost) seen() ([]hostCall, []logLine) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hostCall(nil), h.calls...), append([]logLine(nil), h.logs...)
}

// envelope builds a request envelope.
func envelope(method string, params, context any) []byte {
	env := map[string]any{"method": method}
	if params != nil {
		env["params"] = params
	}
	if context == nil {
		context = map[string]any{"protocolVersion": "2025-11-25"}
	}
	env["context"] = context
	b, err := json.Marshal(env)
	if err != nil {
		panic(err)
	}
	return b
}

// obj is a decoded JSON object.
type obj = map[string]any

// call runs one envelope and decodes the output; it fails the test on a
// runtime error.
func call(t testing.TB, p *runtime.Pool, h runtime.Host, env []byte) (uint32, obj) {
	t.Helper()
	if h == nil {
		h = newHost(nil)
	}
	status, out, err := p.Call(context.Background(), env, h, nil)
	if err != nil {
		t.Fatalf("call %s: %v", env, err)
	}
	var v obj
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("call %s: output is not a JSON object: %v\n%s", env, err, out)
	}
	return status, v
}

// tool calls a tool and returns the status and result.
func tool(t testing.TB, p *runtime.Pool, h runtime.Host, name string, args any) (uint32, obj) {
	t.Helper()
	return call(t, p, h, envelope("tools/call", obj{"name": name, "arguments": args}, nil))
}

// toolText calls a tool that must succeed (status 0, not isError) and
// returns its first text content and its structured content.
func toolText(t testing.TB, p *runtime.Pool, h runtime.Host, name string, args any) (string, obj) {
	t.Helper()
	status, r := tool(t, p, h, name, args)
	if status != 0 || r["isError"] == true {
		t.Fatalf("%s(%v): status %d, result %v", name, args, status, r)
	}
	sc, _ := r["structuredContent"].(obj)
	return text(t, r), sc
}

// toolError calls a tool that must answer a tool error and returns its text.
func toolError(t testing.TB, p *runtime.Pool, h runtime.Host, name string, args any) string {
	t.Helper()
	status, r := tool(t, p, h, name, args)
	if status != 0 || r["isError"] != true {
		t.Fatalf("%s(%v): status %d, result %v; want isError", name, args, status, r)
	}
	return text(t, r)
}

// text returns the first text content item of a tool result.
func text(t testing.TB, r obj) string {
	t.Helper()
	content, _ := r["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("no content in %v", r)
	}
	item, _ := content[0].(obj)
	if item["type"] != "text" {
		t.Fatalf("first content item is not text: %v", item)
	}
	s, _ := item["text"].(string)
	return s
}

// runtimeErr asserts that err is a *runtime.Error of kind k.
func runtimeErr(t testing.TB, err error, k runtime.Kind) *runtime.Error {
	t.Helper()
	var e *runtime.Error
	if !errors.As(err, &e) || e.Kind != k {
		t.Fatalf("error = %v, want *runtime.Error of kind %d", err, k)
	}
	return e
}
