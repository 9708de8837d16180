package telemetry_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestRefusedObserved: initialize and the requests refused before
// dispatch (no session, the per-principal limiter, a batch refused whole,
// access control, a 2026-07-28 header that contradicts the body) each
// get a SERVER span with their error.type and an error status, and a
// count in the duration histogram, on stdio and HTTP.
func TestRefusedObserved(t *testing.T) {
	noOTEL(t)
	rcv := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10000")
	const token = "reader-0123456789abcdef"
	srv, _ := newServer(t, testConfig(newWeb(t), `metrics = "127.0.0.1:0"
[auth]
tokens = ["`+token+`"]
[limits]
principal_rate = 0.001
principal_burst = 1`))
	metricsURL := serveMetrics(t, srv)
	c := startStdio(t, srv)
	c.call("tools/list", map[string]any{}) // before initialize: -32600
	c.initialize()
	if got := text(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))); got != "x" {
		t.Fatalf("echo: %q", got)
	}
	if got := text(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))); !strings.Contains(got, "busy") {
		t.Fatalf("second echo: %q, want a busy refusal", got)
	}
	if _, err := c.w.Write([]byte(`[{"jsonrpc":"2.0","id":90,"method":"ping"}]` + "\n")); err != nil {
		t.Fatal(err)
	}
	c.call("ping", map[string]any{}) // the batch was admitted before it

	url := serveHTTP(t, srv)
	post := func(name string, hdr map[string]string) int {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": map[string]any{
			"name": "echo", "arguments": map[string]any{"text": "y"},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		}})
		req, _ := http.NewRequest("POST", url, bytes.NewReader(b))
		for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name} {
			req.Header.Set(k, v)
		}
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post("echo", nil); st != 401 {
		t.Fatalf("no token: HTTP %d", st)
	}
	if st := post("not-echo", map[string]string{"Authorization": "Bearer " + token}); st == 200 {
		t.Fatal("Mcp-Name contradicting the body was accepted")
	}
	body := get(t, metricsURL+"/metrics")
	if err := srv.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.all()
	for _, s := range spans {
		t.Logf("  %s %v", s.Name, attrs(s))
	}
	for _, tc := range []struct {
		name, span, transport, errType string
		metricMethod                   string
	}{
		{"initialize", "initialize", "pipe", "", "initialize"},
		{"no session", "tools/list", "pipe", "-32600", "tools/list"},
		{"principal limiter", "tools/call echo", "pipe", "busy", "tools/call"},
		{"batch refused whole", "mcp", "pipe", "-32600", "other"},
		{"access control", "tools/call echo", "tcp", "401", "tools/call"},
		{"header contradicts the body", "tools/call echo", "tcp", "-32020", "tools/call"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found *tracepb.Span
			for _, s := range find(spans, tc.span) {
				if a := attrs(s); a["network.transport"] == tc.transport && a["error.type"] == tc.errType {
					found = s
				}
			}
			if found == nil {
				t.Fatalf("no %q span on %s with error.type %q", tc.span, tc.transport, tc.errType)
			}
			if found.Kind != tracepb.Span_SPAN_KIND_SERVER {
				t.Errorf("kind %v", found.Kind)
			}
			if failed := found.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR; failed != (tc.errType != "") {
				t.Errorf("status %v with error.type %q", found.Status, tc.errType)
			}
			n, ok := scrape(t, body, "mcp_server_operation_duration_seconds_count", `mcp_method_name="`+tc.metricMethod+`"`, `error_type="`+tc.errType+`"`)
			if !ok || n < 1 {
				t.Errorf("histogram {%s, %q}: %v (found %v)", tc.metricMethod, tc.errType, n, ok)
			}
		})
	}
}
