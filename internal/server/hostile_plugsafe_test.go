package server

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// This file runs the rogue plugin (testdata/hostile/rogue.c) through a real
// server over stdio: a plugin that asks the client for what it was not
// granted, speaks for other plugins' resources and floods notifications.

// rogueCopy copies the rogue module into dir under name, so that one
// server can load it twice (two plugins may not share a file).
func rogueCopy(t *testing.T, dir, name string) string {
	t.Helper()
	wasm, err := os.ReadFile(hostilePath(t, "rogue"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".wasm")
	if err := os.WriteFile(p, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// clientSecrets are what the test client answers each server-to-client
// request with: they must reach only a plugin granted to ask.
var clientSecrets = map[string]any{
	"roots/list":             map[string]any{"roots": []any{map[string]any{"uri": "file:///ROOT-SECRET", "name": "r"}}},
	"sampling/createMessage": map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "LLM-SECRET"}},
	"elicitation/create":     map[string]any{"action": "accept", "content": map[string]any{"name": "ELICIT-SECRET"}},
}

// TestHostileInputRequiredGrants: a plugin may have the client asked
// elicitation/create, sampling/createMessage or roots/list only with the
// grant, whether it asks with the blocking host call or with an
// input_required result, on a legacy session (the host asks) or a
// 2026-07-28 request (the client asks); no other method ever reaches the
// client.
func TestHostileInputRequiredGrants(t *testing.T) {
	e := newHostileEnv(t)
	dir := t.TempDir()
	srv, err := newHostileServer(t, e, `
[server]
kv_dir = ":memory:"
[limits]
timeout = "5s"
[[plugins]]
name = "denied"
path = `+quote(rogueCopy(t, dir, "denied"))+`
prefix = "denied_"
[plugins.grants]
config = { scheme = "denied" }
[[plugins]]
name = "granted"
path = `+quote(rogueCopy(t, dir, "granted"))+`
prefix = "granted_"
[plugins.grants]
config = { scheme = "granted" }
elicitation = true
sampling = true
roots = true
`)
	if err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, srv)
	var (
		mu    sync.Mutex
		asked []string
	)
	c.onRequest = func(method string, params json.RawMessage) (any, error) {
		mu.Lock()
		asked = append(asked, method)
		mu.Unlock()
		if res, ok := clientSecrets[method]; ok {
			return res, nil
		}
		return map[string]any{"leaked": "UNKNOWN-SECRET"}, nil
	}
	allCaps := map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	c.initialize("2025-11-25", allCaps)

	secret := map[string]string{"roots/list": "ROOT-SECRET", "sampling/createMessage": "LLM-SECRET", "elicitation/create": "ELICIT-SECRET"}
	methods := []string{"roots/list", "sampling/createMessage", "elicitation/create", "made/up", "tools/call", "ping"}
	for _, method := range methods {
		_, defined := secret[method]
		for _, plugin := range []string{"denied", "granted"} {
			allowed := defined && plugin == "granted"
			for _, way := range []string{"input_required legacy", "input_required 2026-07-28", "blocking call"} {
				t.Run(plugin+"/"+method+"/"+way, func(t *testing.T) {
					mu.Lock()
					asked = nil
					mu.Unlock()
					var r response
					switch way {
					case "input_required legacy":
						r = c.call("tools/call", tool(plugin+"_ask", map[string]any{"method": method}))
					case "input_required 2026-07-28":
						p := tool(plugin+"_ask", map[string]any{"method": method})
						p["_meta"] = modernMeta(allCaps)
						r = c.call("tools/call", p)
					case "blocking call":
						r = c.call("tools/call", tool(plugin+"_block", map[string]any{"method": method}))
					}
					tr := decodeTool(t, r)
					all := string(r.Result) + tr.text()
					mu.Lock()
					sent := append([]string(nil), asked...)
					mu.Unlock()
					t.Logf("%s -> %s; client asked %q", method, all, sent)
					for _, s := range []string{"ROOT-SECRET", "LLM-SECRET", "ELICIT-SECRET", "UNKNOWN-SECRET"} {
						if !allowed && strings.Contains(all, s) {
							t.Errorf("the answer carries the client's %s", s)
						}
					}
					switch {
					case way == "blocking call" && allowed:
						if len(sent) != 1 || sent[0] != method || !strings.Contains(tr.text(), secret[method]) {
							t.Errorf("granted blocking %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "blocking call":
						if len(sent) != 0 || !strings.HasPrefix(tr.text(), "errno -") {
							t.Errorf("refused blocking %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "input_required legacy" && allowed:
						if len(sent) != 1 || sent[0] != method || !strings.Contains(tr.text(), "answered: ") || !strings.Contains(tr.text(), secret[method]) {
							t.Errorf("granted %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "input_required 2026-07-28" && allowed:
						if tr.ResultType != "input_required" || tr.InputRequests["q"].Method != method {
							t.Errorf("granted %s on 2026-07-28: %s", method, r.Result)
						}
					default:
						// Refused, whichever way: a tool error naming the
						// method, and nothing sent to the client.
						if len(sent) != 0 {
							t.Errorf("the client was asked %q", sent)
						}
						if tr.ResultType == "input_required" || !tr.IsError {
							t.Errorf("want a tool error, got %s", r.Result)
						}
						want := "not granted"
						if !defined {
							want = "not a client request MCP defines"
						}
						if !strings.Contains(tr.text(), method) || !strings.Contains(tr.text(), want) {
							t.Errorf("error %q does not name %q and %q", tr.text(), method, want)
						}
					}
				})
			}
		}
	}
}
