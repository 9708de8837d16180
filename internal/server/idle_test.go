package server

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/plugins"
)

// TestIdleInstancesClosed: with idle = "200ms" on a plugin, the instances
// its calls used are closed once they have been unused that long, so that
// a plugin nobody calls keeps no instance (and no linear memory); the next
// call starts a new one and answers as before. Without the key the
// runtime's default (5 minutes) keeps them for the whole test.
func TestIdleInstancesClosed(t *testing.T) {
	for _, tt := range []struct {
		name   string
		idle   string
		closes bool
	}{
		{"idle 200ms", `idle = "200ms"`, true},
		{"default", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := newTestServer(t, strings.Replace(kitchenConfig, `path = "kitchen.wasm"`, "path = \"kitchen.wasm\"\n"+tt.idle, 1))
			var kitchen *plugins.Plugin
			for _, p := range srv.reg.Plugins() {
				kitchen = p
			}
			c := startSession(t, srv)
			echo := func(text string) {
				t.Helper()
				r := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": text})))
				if r.IsError || !strings.Contains(r.text(), text) {
					t.Fatalf("echo %q: %q", text, r.text())
				}
			}
			echo("one")
			if s := kitchen.Stats(); s.Idle == 0 {
				t.Fatalf("after a call: %+v, want an idle instance", s)
			}
			// Wait, bounded, for the sweep; the default keeps the
			// instance, so its case waits a fixed 1 s, five idle periods
			// of the other case.
			deadline := time.Now().Add(10 * time.Second)
			if !tt.closes {
				deadline = time.Now().Add(time.Second)
			}
			s := kitchen.Stats()
			for s.Idle > 0 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
				s = kitchen.Stats()
			}
			switch {
			case tt.closes && (s.Idle != 0 || s.Expired == 0):
				t.Fatalf("10 s after the call: %+v, want no idle instance and one expired", s)
			case !tt.closes && (s.Idle == 0 || s.Expired != 0):
				t.Fatalf("1 s after the call with the default idle time: %+v, want the instance kept", s)
			}
			echo("two") // after the instances were closed
		})
	}
}
