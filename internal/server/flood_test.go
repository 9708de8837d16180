package server

import (
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// TestPluginSlotShare: a plugin whose instances spin takes at most its
// share of the server's run slots ([limits] plugin_concurrent, by default
// half of max_concurrent): a call to another plugin answers while the
// spinning calls still run.
func TestPluginSlotShare(t *testing.T) {
	e := longHostileEnv(t, "runs spinning plugin calls for seconds")
	srv, err := newHostileServer(t, e, memKV+`[limits]
timeout = "4s"
max_concurrent = 4
max_waiting = 16
`+corpusTOML(t, "good")+corpusTOML(t, "runaway", "instances = 4"))
	if err != nil {
		t.Fatal(err)
	}
	echoWhileSpinning(t, srv, []string{"spin", "spin", "spin", "spin"})
}

// echoWhileSpinning starts the spinning calls spins on srv, then calls
// the good plugin's echo, which must answer before any of them ends.
func echoWhileSpinning(t *testing.T, srv *Server, spins []string) {
	t.Helper()
	c := startSession(t, srv)
	if r := c.call("tools/call", tool("echo", map[string]any{"text": "warm"})); r.Error != nil {
		t.Fatal(r.Error)
	}
	var spinsDone atomic.Int64
	var wg sync.WaitGroup
	for _, name := range spins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.call("tools/call", tool(name, nil))
			spinsDone.Add(1)
		}()
	}
	time.Sleep(500 * time.Millisecond) // let the spinning calls take their slots
	r := c.call("tools/call", tool("echo", map[string]any{"text": "through"}))
	if got := decodeTool(t, r); got.IsError || got.text() != "through" {
		t.Fatalf("echo: %s %+v", r.Result, r.Error)
	}
	if n := spinsDone.Load(); n > 0 {
		t.Fatalf("the good call waited for %d spinning calls to end: they held every slot", n)
	}
	wg.Wait()
}

// TestSlotShareKeys: every kind of provider call is keyed by the plugin
// that serves it (with its prefix), and what no plugin serves has no key.
func TestSlotShareKeys(t *testing.T) {
	srv := newTestServer(t, strings.Replace(kitchenConfig, `path = "kitchen.wasm"`, "path = \"kitchen.wasm\"\nprefix = \"k_\"", 1))
	p := &provider{reg: srv.reg}
	tests := []struct {
		method, params, want string
	}{
		{"tools/call", `{"name":"k_echo","arguments":{"text":"x"}}`, "kitchen"},
		{"tools/call", `{"name":"echo"}`, ""},
		{"prompts/get", `{"name":"k_greet"}`, "kitchen"},
		{"resources/read", `{"uri":"kitchen://static"}`, "kitchen"},
		{"resources/read", `{"uri":"kitchen://item/42"}`, "kitchen"},
		{"resources/read", `{"uri":"other://x"}`, ""},
		{"completion/complete", `{"ref":{"type":"ref/prompt","name":"k_greet"},"argument":{"name":"a","value":""}}`, "kitchen"},
		{"tools/list", `{}`, ""},
	}
	for _, tt := range tests {
		r := &mcp.Request{Method: tt.method, Params: json.RawMessage(tt.params)}
		if err := r.ParseParams(); err != nil {
			t.Fatalf("%s %s: %v", tt.method, tt.params, err)
		}
		if got := p.SlotShare(r); got != tt.want {
			t.Errorf("%s %s: share %q, want %q", tt.method, tt.params, got, tt.want)
		}
	}
}

// TestIdlePluginGetsSlot: two plugins spinning on all their instances,
// each within its share of the run slots, hold every slot between them;
// a call to a third plugin, which has nothing running, answers while they
// still spin instead of waiting for one of them to end (issue 27's
// fairness case: it waited for their deadline).
func TestIdlePluginGetsSlot(t *testing.T) {
	e := longHostileEnv(t, "runs spinning plugin calls for seconds")
	second := copyCorpus(t, "runaway", t.TempDir(), "runaway2")
	srv, err := newHostileServer(t, e, memKV+`[limits]
timeout = "4s"
max_concurrent = 4
max_waiting = 16
`+corpusTOML(t, "good")+corpusTOML(t, "runaway", "instances = 2")+pluginTOML("runaway2", second, `prefix = "r2_"`, "instances = 2"))
	if err != nil {
		t.Fatal(err)
	}
	echoWhileSpinning(t, srv, []string{"spin", "spin", "r2_spin", "r2_spin"})
}
