package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// The component tests: a folder holding the C component of
// testdata/components (its WASI on the server's WASI 0.2 host),
// runtime/component's faults component (a trap, a runaway loop, a memory
// hog) and a wasmcp/1 plugin is served by `wasmcp serve --plugins DIR`,
// over stdio on a legacy version and over HTTP on 2026-07-28.

// componentDir is that folder.
func componentDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for dst, src := range map[string]string{
		"c-text.wasm": "../../testdata/components/c-text.wasm",
		"faults.wasm": "../../runtime/component/testdata/faults.wasm",
		"c-hash.wasm": "../../examples/c-hash/c-hash.wasm",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// checkComponentServe runs the checks that hold on every transport and
// protocol version (the config's limits: timeout 2s, memory 48 MiB).
func checkComponentServe(t *testing.T, c mcpClient) {
	call := func(name string, args map[string]any) (json.RawMessage, *rpcErr) {
		t.Helper()
		res, e, _ := c.call("tools/call", map[string]any{"name": name, "arguments": args})
		return res, e
	}
	alive := func(t *testing.T, after string) {
		t.Helper()
		res, e := call("echo", map[string]any{"s": "still here"})
		if e != nil || !bytes.Contains(res, []byte(`"structuredContent":{"result":"still here"}`)) {
			t.Fatalf("echo after %s = %s %v", after, res, e)
		}
		res, e = call("sha256", map[string]any{"text": "abc"})
		if e != nil || !bytes.Contains(res, []byte("ba7816bf")) {
			t.Fatalf("the wasmcp/1 plugin after %s = %s %v", after, res, e)
		}
	}
	t.Run("tools/list", func(t *testing.T) {
		res, e, _ := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		var list struct {
			Tools []map[string]json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(res, &list); err != nil {
			t.Fatal(err)
		}
		tools := map[string]map[string]json.RawMessage{}
		for _, tl := range list.Tools {
			var name string
			_ = json.Unmarshal(tl["name"], &name)
			tools[name] = tl
		}
		for _, n := range []string{"greet", "add", "env", "wasmcp_c-text_text_0_1_0_count", "wasmcp_c-text_text_0_1_0_upper",
			"echo", "spin", "hog", "trap", "grow-a", "grow-b", "sha256"} {
			if tools[n] == nil {
				t.Errorf("tools/list lacks %s: %s", n, res)
			}
		}
		if greet := tools["greet"]; string(greet["description"]) != `"Greets someone by name."` {
			t.Errorf("greet described as %s", greet["description"])
		}
		count := tools["wasmcp_c-text_text_0_1_0_count"]
		if string(count["inputSchema"]) != `{"properties":{"s":{"type":"string"}},"required":["s"],"type":"object"}` ||
			string(count["outputSchema"]) != `{"properties":{"result":{"properties":{"chars":{"maximum":4294967295,"minimum":0,"type":"integer"},"words":{"maximum":4294967295,"minimum":0,"type":"integer"}},"required":["chars","words"],"type":"object"}},"required":["result"],"type":"object"}` {
			t.Errorf("count listed as %s %s", count["inputSchema"], count["outputSchema"])
		}
	})
	t.Run("string", func(t *testing.T) {
		res, e := call("greet", map[string]any{"name": "Ann"})
		if e != nil || !bytes.Contains(res, []byte(`"content":[{"text":"Hello, Ann!","type":"text"}],"structuredContent":{"result":"Hello, Ann!"}}`)) {
			t.Fatalf("greet = %s %v", res, e)
		}
	})
	t.Run("record", func(t *testing.T) {
		res, e := call("wasmcp_c-text_text_0_1_0_count", map[string]any{"s": "one two three"})
		if e != nil || !bytes.Contains(res, []byte(`"structuredContent":{"result":{"chars":13,"words":3}}`)) {
			t.Fatalf("count = %s %v", res, e)
		}
	})
	t.Run("result err", func(t *testing.T) {
		res, e := call("wasmcp_c-text_text_0_1_0_upper", map[string]any{"s": ""})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); got != "empty text" || !isErr {
			t.Fatalf("upper('') = %q %v", got, isErr)
		}
	})
	t.Run("arguments against the schema", func(t *testing.T) {
		res, e := call("add", map[string]any{"a": "x", "b": 1})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); !isErr || !strings.Contains(got, "invalid arguments") {
			t.Fatalf("add(x, 1) = %q %v", got, isErr)
		}
	})
	t.Run("trap costs one call", func(t *testing.T) {
		res, e := call("trap", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); !isErr || got != "plugin crashed: unreachable" {
			t.Fatalf("trap = %q %v", got, isErr)
		}
		alive(t, "the trap")
	})
	t.Run("deadline", func(t *testing.T) {
		began := time.Now()
		res, e := call("spin", map[string]any{})
		if e == nil || e.Code != -32001 || e.Message != "Request timed out" {
			t.Fatalf("spin = %s %v", res, e)
		}
		if d := time.Since(began); d < 2*time.Second || d > 10*time.Second {
			t.Fatalf("spin stopped after %v, its deadline 2s", d)
		}
		alive(t, "the runaway")
	})
	t.Run("memory limit", func(t *testing.T) {
		res, e := call("hog", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); !isErr || got != "plugin ran out of memory (limit 48 MiB)" {
			t.Fatalf("hog = %q %v", got, isErr)
		}
		alive(t, "the hog")
	})
}

// TestComponentServeStdio: the folder over stdio, 2025-11-25.
func TestComponentServeStdio(t *testing.T) {
	testutil.WallClock(t) // a real process stops a guest spinning in native code at its 2 s deadline, timed
	c := newStdioClient(t, "--config", writeConfig(t, ""), "--plugins", componentDir(t))
	checkComponentServe(t, c)
}

// TestComponentServeHTTP: the folder over HTTP, 2026-07-28; while a
// runaway call of the component spins to its deadline, the other plugin
// and the component's other instances keep answering.
func TestComponentServeHTTP(t *testing.T) {
	testutil.WallClock(t) // as TestComponentServeStdio, and calls beside the runaway are timed
	_, _, stderr := startServe(t, nil, "--config", writeConfig(t, ""), "--plugins", componentDir(t), "--http", "127.0.0.1:0")
	url := servedURL(t, stderr)
	checkComponentServe(t, &httpClient2026{t: t, url: url, caps: map[string]any{}})
	t.Run("others answer during a runaway", func(t *testing.T) {
		done := make(chan *rpcErr, 1)
		go func() {
			c := &httpClient2026{t: t, url: url, caps: map[string]any{}}
			_, e, _ := c.call("tools/call", map[string]any{"name": "spin", "arguments": map[string]any{}})
			done <- e
		}()
		c := &httpClient2026{t: t, url: url, caps: map[string]any{}}
		time.Sleep(200 * time.Millisecond) // the runaway is running
		for _, tc := range []struct {
			tool string
			args map[string]any
			want string
		}{{"sha256", map[string]any{"text": "abc"}, "ba7816bf"}, {"echo", map[string]any{"s": "x"}, `"result":"x"`}} {
			began := time.Now()
			res, e, _ := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
			if e != nil || !bytes.Contains(res, []byte(tc.want)) {
				t.Fatalf("%s during the runaway = %s %v", tc.tool, res, e)
			}
			if d := time.Since(began); d > time.Second {
				t.Errorf("%s took %v during the runaway", tc.tool, d)
			}
		}
		select {
		case e := <-done:
			if e == nil || e.Code != -32001 {
				t.Fatalf("spin = %v", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the runaway was not stopped")
		}
	})
}

// TestComponentServeJS: the componentize-js component of hostapi/wasip2's
// tests (SpiderMonkey inside, 12 MB) served over HTTP on 2026-07-28 beside
// a wasmcp/1 plugin: its tools are listed, greet answers (its console.log
// going to the server's log, not to the client), a JavaScript busy loop
// (flood with a huge count: console.log lines past the output bounds,
// dropped) ends at its deadline with -32001 while the other plugin keeps
// answering, and a JavaScript typed array past the memory limit
// (random-bytes of 100 MB) fails its call alone.
func TestComponentServeJS(t *testing.T) {
	testutil.WallClock(t) // a real process stops a JavaScript busy loop at its 2 s deadline, timed
	if testing.Short() {
		t.Skip("compiles a 12 MB component")
	}
	dir := t.TempDir()
	for dst, src := range map[string]string{
		"js.wasm":     "../../hostapi/wasip2/testdata/js-wasi.wasm",
		"c-hash.wasm": "../../examples/c-hash/c-hash.wasm",
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, _, stderr := startServe(t, nil, "--config", writeConfig(t, ""), "--plugins", dir, "--http", "127.0.0.1:0")
	url := servedURL(t, stderr)
	c := &httpClient2026{t: t, url: url, caps: map[string]any{}}
	// The component compiles in the background: wait for its tools.
	var list json.RawMessage
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res, e, _ := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		if list = res; bytes.Contains(res, []byte(`"random-bytes"`)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the JS component's tools never came: %s", res)
		}
	}
	for _, n := range []string{`"greet"`, `"now-ms"`, `"monotonic"`, `"randoms"`, `"flood"`, `"sha256"`} {
		if !bytes.Contains(list, []byte(n)) {
			t.Errorf("tools/list lacks %s: %s", n, list)
		}
	}
	call := func(name string, args map[string]any) (json.RawMessage, *rpcErr) {
		t.Helper()
		res, e, _ := (&httpClient2026{t: t, url: url, caps: map[string]any{}}).call("tools/call", map[string]any{"name": name, "arguments": args})
		return res, e
	}
	if res, e := call("greet", map[string]any{"name": "JS"}); e != nil || !bytes.Contains(res, []byte(`"structuredContent":{"result":"Hello, JS!"}`)) {
		t.Fatalf("greet = %s %v", res, e)
	}
	t.Run("busy loop", func(t *testing.T) {
		done := make(chan *rpcErr, 1)
		began := time.Now()
		go func() {
			_, e := call("flood", map[string]any{"n": 4000000000, "width": 1})
			done <- e
		}()
		time.Sleep(300 * time.Millisecond)
		res, e := call("sha256", map[string]any{"text": "abc"})
		if e != nil || !bytes.Contains(res, []byte("ba7816bf")) {
			t.Fatalf("sha256 during the busy loop = %s %v", res, e)
		}
		select {
		case e := <-done:
			if e == nil || e.Code != -32001 {
				t.Fatalf("flood = %v", e)
			}
			if d := time.Since(began); d < 2*time.Second || d > 10*time.Second {
				t.Fatalf("flood stopped after %v, its deadline 2s", d)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the busy loop was not stopped")
		}
	})
	t.Run("memory", func(t *testing.T) {
		res, e := call("random-bytes", map[string]any{"n": 100000000})
		if e != nil {
			t.Fatalf("random-bytes = %v", e)
		}
		if got, isErr := resultText(t, res); !isErr || got != "plugin ran out of memory (limit 48 MiB)" {
			t.Fatalf("random-bytes(1e8) = %q %v", got, isErr)
		}
		if res, e := call("greet", map[string]any{"name": "again"}); e != nil || !bytes.Contains(res, []byte(`"Hello, again!"`)) {
			t.Fatalf("greet after the hog = %s %v", res, e)
		}
	})
}

// TestComponentServeFiles: a Rust component using std::fs (through the
// WASI preview 1 adapter, on the host's wasi:filesystem) with an fs grant
// of two mounts, a read-only and a read-write one:
// reads and listings inside the mounts answer, writes only in the
// read-write one, and paths outside every mount (or climbing out of one)
// are err results, the files outside untouched.
func TestComponentServeFiles(t *testing.T) {
	ro, rw, outside := t.TempDir(), t.TempDir(), t.TempDir()
	for path, text := range map[string]string{
		filepath.Join(ro, "a.txt"):      "alpha",
		filepath.Join(ro, "b.txt"):      "beta",
		filepath.Join(outside, "s.txt"): "secret",
	} {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wasm, err := filepath.Abs("../../testdata/components/rust-files.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`[[plugins]]
name = "files"
path = %q
[plugins.grants]
fs = [{ host = %q, guest = "/ro", mode = "ro" }, { host = %q, guest = "/rw", mode = "rw" }]
`, wasm, ro, rw))
	c := newStdioClient(t, "--config", cfg)
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"read-file", map[string]any{"path": "/ro/a.txt"}, `{"ok":"alpha"}`, false},
		{"list-dir", map[string]any{"path": "/ro"}, `{"ok":["a.txt","b.txt"]}`, false},
		{"write-file", map[string]any{"path": "/rw/new.txt", "text": "written"}, `{"ok":null}`, false},
		{"read-file", map[string]any{"path": "/rw/new.txt"}, `{"ok":"written"}`, false},
		{"write-file", map[string]any{"path": "/ro/c.txt", "text": "no"}, "", true},
		{"read-file", map[string]any{"path": outside + "/s.txt"}, "", true},
		{"read-file", map[string]any{"path": "/ro/../" + filepath.Base(outside) + "/s.txt"}, "", true},
		{"list-dir", map[string]any{"path": "/"}, "", true},
	} {
		res, e, _ := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		if e != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, e)
		}
		got, isErr := resultText(t, res)
		if isErr != tc.isErr || (!tc.isErr && got != tc.want) {
			t.Errorf("%s %v = %q (isError %v), want %q (isError %v)", tc.tool, tc.args, got, isErr, tc.want, tc.isErr)
		}
	}
	if b, err := os.ReadFile(filepath.Join(rw, "new.txt")); err != nil || string(b) != "written" {
		t.Errorf("the write reached the host as %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ro, "c.txt")); !os.IsNotExist(err) {
		t.Errorf("a write in the read-only mount: %v", err)
	}
}

// TestComponentPluginsList: `wasmcp plugins` loads a component as the
// server does and lists it with its ABI and tools.
func TestComponentPluginsList(t *testing.T) {
	stdout, stderr, code := wasmcp(t, "", "plugins", "--config", writeConfig(t, ""), "--plugins", componentDir(t))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"abi       component (component), c-text", "tools     greet, add, env, wasmcp_c-text_text_0_1_0_count, wasmcp_c-text_text_0_1_0_upper",
		"abi       component (component), faults", "tools     echo, spin, hog, trap, grow-a, grow-b"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}
}

// TestExampleJSTime: examples/js-time, as its README serves it
// (--plugins examples/js-time) over stdio: its four tools are listed
// under their WIT names, each answers, and a bad date is an isError
// result naming it (the err of its result<T, E>).
func TestExampleJSTime(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a 12 MB component")
	}
	c := newStdioClient(t, "--config", writeConfig(t, ""), "--plugins", "../../examples/js-time")
	var list json.RawMessage
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res, e, _ := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		if list = res; bytes.Contains(res, []byte(`"days-between"`)) || time.Now().After(deadline) {
			break
		}
	}
	for _, name := range []string{"now", "weekday", "add-days", "days-between"} {
		if !bytes.Contains(list, []byte(`"name":"`+name+`"`)) {
			t.Errorf("tools/list has no %s: %s", name, list)
		}
	}
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		want  string
		isErr bool
	}{
		{"weekday", map[string]any{"date": "2026-12-04"}, "Friday", false},
		{"add-days", map[string]any{"date": "2026-12-04", "days": 30}, "2027-01-03", false},
		{"add-days", map[string]any{"date": "2024-03-01", "days": -1}, "2024-02-29", false},
		{"days-between", map[string]any{"start": "2026-01-01", "end": "2026-12-25"}, "358", false},
		{"now", map[string]any{}, "Z", false},
		{"weekday", map[string]any{"date": "2026-02-30"}, "not a day of the calendar", true},
		{"add-days", map[string]any{"date": "tomorrow", "days": 1}, "not a date of the form YYYY-MM-DD", true},
	} {
		res, e, _ := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": tc.args})
		if e != nil {
			t.Fatalf("%s %v: %v", tc.tool, tc.args, e)
		}
		text, isErr := resultText(t, res)
		if !strings.Contains(text, tc.want) || isErr != tc.isErr {
			t.Errorf("%s %v = %q (isError %v), want %q (isError %v)", tc.tool, tc.args, text, isErr, tc.want, tc.isErr)
		}
	}
}

// TestComponentConfig: wasi:config/store (0.2.0-draft, as Wassette's
// examples import it) answers with the plugin's config grant, over stdio
// (2025-11-25) and HTTP (2026-07-28); a key it was not granted has no
// value. With a Wassette policy.yaml instead, an environment.allow key is
// visible through wasi:config with the server's value.
func TestComponentConfig(t *testing.T) {
	file, _ := filepath.Abs("../../testdata/components/c-config.wasm")
	setting := func(t *testing.T, c mcpClient, key string) json.RawMessage {
		t.Helper()
		res, e, _ := c.call("tools/call", map[string]any{"name": "setting", "arguments": map[string]any{"key": key}})
		if e != nil {
			t.Fatalf("setting %s: %v", key, e)
		}
		var r struct {
			Structured json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		return r.Structured
	}
	granted := writeConfig(t, fmt.Sprintf("[[plugins]]\nname = \"c-config\"\npath = %q\n[plugins.grants]\nconfig = { greeting = \"hi there\", \"db.url\" = \"postgres://x\" }\n", file))
	_, _, stderr := startServe(t, nil, "--config", granted, "--http", "127.0.0.1:0")
	for name, c := range map[string]mcpClient{
		"stdio": newStdioClient(t, "--config", granted),
		"http":  &httpClient2026{t: t, url: servedURL(t, stderr), caps: map[string]any{}},
	} {
		t.Run(name, func(t *testing.T) {
			for key, want := range map[string]string{
				"greeting": `{"result":"hi there"}`,
				"db.url":   `{"result":"postgres://x"}`,
				"other":    `{"result":null}`,
			} {
				if got := setting(t, c, key); string(got) != want {
					t.Errorf("setting %s = %s, want %s", key, got, want)
				}
			}
		})
	}
	t.Run("policy.yaml", func(t *testing.T) {
		dir := t.TempDir()
		policy := filepath.Join(dir, "policy.yaml")
		if err := os.WriteFile(policy, []byte("version: \"1.0\"\npermissions:\n  environment:\n    allow:\n      - key: WASMCP_TEST_SETTING\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("WASMCP_TEST_SETTING", "from the environment")
		c := newStdioClient(t, "--config", writeConfig(t, fmt.Sprintf("[[plugins]]\nname = \"c-config\"\npath = %q\npolicy = %q\n", file, policy)))
		if got := setting(t, c, "WASMCP_TEST_SETTING"); string(got) != `{"result":"from the environment"}` {
			t.Errorf("setting through the policy = %s", got)
		}
		if got := setting(t, c, "HOME"); string(got) != `{"result":null}` {
			t.Errorf("a key the policy does not allow = %s", got)
		}
	})
}
