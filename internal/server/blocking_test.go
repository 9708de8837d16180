package server

import (
	"encoding/json"
	"sync/atomic"
	"testing"
)

// TestBlockingCallNeedsCapability: a blocking host call to a client
// method (rogue's block tool, granted elicitation) reaches the client
// only if the client declared the capability the method needs; without
// it the plugin gets ErrUnsupported (errno -6) and the client no request.
// The protocol engine decides (internal/mcp), not plugins.
func TestBlockingCallNeedsCapability(t *testing.T) {
	srv := newTestServer(t, memKV+corpusTOML(t, "rogue", "[plugins.grants]", "elicitation = true"))
	for _, tc := range []struct {
		name string
		caps map[string]any
		want string
		sent int32
	}{
		{"declared", map[string]any{"elicitation": map[string]any{}}, `ok: {"action":"decline"}`, 1},
		{"not declared", map[string]any{}, "errno -6", 0},
		{"declared null", map[string]any{"elicitation": nil}, "errno -6", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startStdio(t, srv)
			var sent atomic.Int32
			c.onRequest = func(method string, _ json.RawMessage) (any, error) {
				sent.Add(1)
				return map[string]any{"action": "decline"}, nil
			}
			c.initialize("2025-11-25", tc.caps)
			got := decodeTool(t, c.call("tools/call", map[string]any{"name": "block", "arguments": map[string]any{"method": "elicitation/create"}})).text()
			if got != tc.want || sent.Load() != tc.sent {
				t.Errorf("got %q with %d requests sent, want %q and %d", got, sent.Load(), tc.want, tc.sent)
			}
		})
	}
}
