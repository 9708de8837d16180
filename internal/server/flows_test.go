package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// waitNote returns the first notification with the given method.
func waitNote(t *testing.T, c *stdioClient, method string) json.RawMessage {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case n := <-c.notes:
			var m struct {
				Method string `json:"method"`
			}
			json.Unmarshal(n, &m)
			if m.Method == method {
				return n
			}
		case <-deadline:
			t.Fatalf("no %s notification", method)
		}
	}
}

// TestInputRequiredLegacy: on a legacy session the host performs the
// plugin's elicitation itself and calls the plugin again with the answer.
func TestInputRequiredLegacy(t *testing.T) {
	srv := newTestServer(t, kitchenConfig)
	c := startStdio(t, srv)
	var asked string
	c.onRequest = func(method string, params json.RawMessage) (any, error) {
		asked = method
		return map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}, nil
	}
	c.initialize("2025-06-18", map[string]any{"elicitation": map[string]any{}})
	tr := decodeTool(t, c.call("tools/call", map[string]any{"name": "ask"}))
	if asked != "elicitation/create" {
		t.Fatalf("server sent %q, want elicitation/create", asked)
	}
	if tr.IsError || tr.text() != "Hello, Ann! state=asked-1" {
		t.Fatalf("result %+v", tr)
	}

	// A client without the capability gets a tool error, not a request.
	c2 := startStdio(t, srv)
	c2.initialize("2025-06-18", map[string]any{})
	tr = decodeTool(t, c2.call("tools/call", map[string]any{"name": "ask"}))
	if !tr.IsError || !strings.Contains(tr.text(), "elicitation") {
		t.Fatalf("result %+v, want isError naming elicitation", tr)
	}
}

// TestInputRequiredStateless: on 2026-07-28 the input_required result goes
// to the client with a sealed requestState that must come back intact.
func TestInputRequiredStateless(t *testing.T) {
	srv := newTestServer(t, kitchenConfig)
	c := startStdio(t, srv)
	caps := map[string]any{"elicitation": map[string]any{}}
	tr := decodeTool(t, c.call("tools/call", map[string]any{"name": "ask", "_meta": modernMeta(caps)}))
	if tr.ResultType != "input_required" || tr.InputRequests["name"].Method != "elicitation/create" {
		t.Fatalf("round 1: %+v", tr)
	}
	if tr.RequestState == "" || strings.Contains(tr.RequestState, "asked-1") && !strings.HasPrefix(tr.RequestState, "wasmcp1.") {
		t.Fatalf("requestState %q is not sealed", tr.RequestState)
	}
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}}
	tr2 := decodeTool(t, c.call("tools/call", map[string]any{"name": "ask", "_meta": modernMeta(caps),
		"inputResponses": answer, "requestState": tr.RequestState}))
	if tr2.ResultType != "complete" || tr2.text() != "Hello, Bo! state=asked-1" {
		t.Fatalf("round 2: %+v", tr2)
	}
	// Tampered, or presented for another tool: refused.
	for _, bad := range []map[string]any{
		{"name": "ask", "requestState": tr.RequestState + "-TAMPERED"},
		{"name": "echo", "arguments": map[string]any{"text": "x"}, "requestState": tr.RequestState},
	} {
		bad["_meta"] = modernMeta(caps)
		bad["inputResponses"] = answer
		r := c.call("tools/call", bad)
		if r.Error == nil || r.Error.Code != -32602 {
			t.Fatalf("tampered state: got %s %+v, want -32602", r.Result, r.Error)
		}
	}
	// Without the elicitation capability: -32021 naming it.
	r := c.call("tools/call", map[string]any{"name": "ask", "_meta": modernMeta(nil)})
	if r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), `"elicitation"`) {
		t.Fatalf("missing capability: got %s %+v", r.Result, r.Error)
	}
}

// TestNotifications: progress tied to the request's token, log messages,
// resource updates to subscribers and list_changed after notify.
func TestNotifications(t *testing.T) {
	srv := newTestServer(t, kitchenConfig)
	c := startSession(t, srv)
	if r := c.call("logging/setLevel", map[string]any{"level": "debug"}); r.Error != nil {
		t.Fatal(r.Error)
	}
	r := c.call("tools/call", map[string]any{"name": "progress", "_meta": map[string]any{"progressToken": "tok-1"}})
	if r.Error != nil {
		t.Fatal(r.Error)
	}
	n := waitNote(t, c, "notifications/progress")
	if !strings.Contains(string(n), `"progressToken":"tok-1"`) {
		t.Fatalf("progress %s", n)
	}
	waitNote(t, c, "notifications/message")

	if r := c.call("resources/subscribe", map[string]any{"uri": "kitchen://static"}); r.Error != nil {
		t.Fatal(r.Error)
	}
	c.call("tools/call", map[string]any{"name": "counter"})
	n = waitNote(t, c, "notifications/resources/updated")
	if !strings.Contains(string(n), "kitchen://static") {
		t.Fatalf("updated %s", n)
	}
	c.call("tools/call", map[string]any{"name": "changed"})
	waitNote(t, c, "notifications/tools/list_changed")
}

// TestReload: with watch on, a replaced plugin file is reloaded, clients
// get list_changed, and a broken file keeps the old version serving.
func TestReload(t *testing.T) {
	testutil.WallClock(t) // sleeps through two polls of the plugin directory at its real 1 s interval
	dir := t.TempDir()
	wasm, err := os.ReadFile("testdata/kitchen.wasm")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kitchen.wasm")
	if err := os.WriteFile(path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, "[server]\nwatch = true\nplugin_dirs = ["+quote(dir)+"]\n")
	srv.reg.Tools() // loaded
	c := startSession(t, srv)
	before := len(srv.Registry().Tools())
	if before == 0 {
		t.Fatal("no tools loaded")
	}

	// A broken file: the old version keeps serving.
	if err := os.WriteFile(path, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3500 * time.Millisecond) // two polls at the default 1s interval, plus slack
	if r := c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}); r.Error != nil {
		t.Fatalf("old version stopped serving: %+v", r.Error)
	}

	// Removing the file removes its tools and tells the client.
	os.Remove(path)
	waitNote(t, c, "notifications/tools/list_changed")
	if n := len(srv.Registry().Tools()); n != 0 {
		t.Fatalf("%d tools after removal", n)
	}
	// Putting it back loads it again.
	os.WriteFile(path, wasm, 0o644)
	waitNote(t, c, "notifications/tools/list_changed")
	if n := len(srv.Registry().Tools()); n != before {
		t.Fatalf("%d tools after re-adding, want %d", n, before)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
