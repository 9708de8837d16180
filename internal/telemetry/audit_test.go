package telemetry_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestDenialAudit: each capability denial is one audit record (plugin,
// capability, what was asked, request, caller) whatever telemetry is on,
// none at all included; granted calls write none.
func TestDenialAudit(t *testing.T) {
	for _, c := range []struct{ name, telemetry string }{
		{"no telemetry", ""},
		{"metrics", `metrics = "127.0.0.1:0"`},
		{"usage only", "usage_in_meta = true"},
	} {
		t.Run(c.name, func(t *testing.T) {
			noOTEL(t)
			w := newWeb(t)
			srv, logs := newServer(t, testConfig(w, c.telemetry))
			cl := startStdio(t, srv)
			cl.initialize()
			if got := text(t, cl.call("tools/call", tool("fetch", map[string]any{"url": "http://elsewhere.test/"}, nil))); !strings.Contains(got, "errno") {
				t.Fatalf("denied fetch: %q", got)
			}
			if got := text(t, cl.call("tools/call", tool("fetch", map[string]any{"url": "http://public.test:" + w.port + "/"}, nil))); !strings.Contains(got, "status 200") {
				t.Fatalf("granted fetch: %q", got)
			}
			cl.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))
			var recs []map[string]any
			for _, line := range strings.Split(logs.String(), "\n") {
				var rec map[string]any
				if json.Unmarshal([]byte(line), &rec) == nil && rec["audit"] == "denial" {
					recs = append(recs, rec)
				}
			}
			if len(recs) != 1 {
				t.Fatalf("%d denial records, want 1: %v", len(recs), recs)
			}
			want := map[string]string{"plugin": "fetch", "capability": "http/fetch", "detail": "http://elsewhere.test/",
				"method": "tools/call", "target": "fetch", "level": "WARN"}
			for k, v := range want {
				if recs[0][k] != v {
					t.Errorf("%s = %v, want %q (record %v)", k, recs[0][k], v, recs[0])
				}
			}
			if p, _ := recs[0]["principal"].(string); !strings.HasPrefix(p, "session:") {
				t.Errorf("principal %q, want the stdio session", p)
			}
		})
	}
}
