package telemetry_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// TestRefusedObserved: initialize and the requests refused before
// dispatch (no session, the per-principal limiter, a batch refused whole,
// access control, a 2026-07-28 header that contradicts the body, a
// message that is not JSON, a stdio line too long, and the HTTP bodies
// refused unread: a wrong Content-Type, a body too large or cut short, a
// message for an HTTP+SSE session that does not exist)
// each get a SERVER span with their error.type, an error status and,
// over HTTP, the response's status, and a count in the duration
// histogram, on stdio and HTTP.
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
principal_burst = 1
[http]
max_body = "4KiB"
sse = true`))
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
	lines := `[{"jsonrpc":"2.0","id":90,"method":"ping"}]` + "\n" + // a batch outside 2025-03-26
		`{"jsonrpc":"2.0","id":91,"method":` + "\n" + // not JSON
		`{"jsonrpc":"2.0","id":92,"method":"ping","params":{"x":"` + strings.Repeat("a", 4<<20) + `"}}` + "\n" // too long
	if _, err := c.w.Write([]byte(lines)); err != nil {
		t.Fatal(err)
	}
	c.call("ping", map[string]any{}) // the lines were answered before it

	url := serveHTTP(t, srv)
	post := func(name string, hdr map[string]string) int {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": map[string]any{
			"name": "echo", "arguments": map[string]any{"text": "y"},
			"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
		}})
		return postRaw(t, url, string(b), map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}, hdr)
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	if st := post("echo", nil); st != 401 {
		t.Fatalf("no token: HTTP %d", st)
	}
	if st := post("not-echo", auth); st == 200 {
		t.Fatal("Mcp-Name contradicting the body was accepted")
	}
	jsonHdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
	if st := postRaw(t, url, `{"jsonrpc":"2.0","id":9,"method":`, jsonHdr, auth); st != 400 {
		t.Fatalf("not JSON: HTTP %d", st)
	}
	// Refused unread: the method is the Mcp-Method header's.
	headers := map[string]string{"Accept": "application/json, text/event-stream", "Authorization": "Bearer " + token,
		"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
	if st := postRaw(t, url, `{}`, headers, map[string]string{"Content-Type": "text/plain"}); st != 415 {
		t.Fatalf("text/plain: HTTP %d", st)
	}
	if st := postRaw(t, url, strings.Repeat(" ", 8<<10)+"{}", headers, map[string]string{"Content-Type": "application/json"}); st != 413 {
		t.Fatalf("8 KiB body: HTTP %d", st)
	}
	if st := postCut(t, url, "Mcp-Method: prompts/list\r\nAuthorization: Bearer "+token+"\r\n"); st != 400 {
		t.Fatalf("body cut short: HTTP %d", st)
	}
	if st := postRaw(t, strings.TrimSuffix(url, "/mcp")+"/messages?sessionId=gone", `{"jsonrpc":"2.0","id":10,"method":"ping"}`, jsonHdr, auth); st != 404 {
		t.Fatalf("HTTP+SSE message without a session: HTTP %d", st)
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
		name, span, transport, errType, status string
		metricMethod                           string
		n                                      int // spans that match (1 if 0)
	}{
		{name: "initialize", span: "initialize", transport: "pipe", metricMethod: "initialize"},
		{name: "no session", span: "tools/list", transport: "pipe", errType: "-32600", metricMethod: "tools/list"},
		{name: "principal limiter", span: "tools/call echo", transport: "pipe", errType: "busy", metricMethod: "tools/call"},
		{name: "batch refused whole, line too long", span: "mcp", transport: "pipe", errType: "-32600", metricMethod: "other", n: 2},
		{name: "not JSON", span: "mcp", transport: "pipe", errType: "-32700", metricMethod: "other"},
		{name: "access control", span: "tools/call echo", transport: "tcp", errType: "401", status: "401", metricMethod: "tools/call"},
		{name: "header contradicts the body", span: "tools/call echo", transport: "tcp", errType: "-32020", status: "400", metricMethod: "tools/call"},
		{name: "not JSON over HTTP", span: "mcp", transport: "tcp", errType: "-32700", status: "400", metricMethod: "other"},
		{name: "content type", span: "tools/call echo", transport: "tcp", errType: "-32600", status: "415", metricMethod: "tools/call"},
		{name: "body too large", span: "tools/call echo", transport: "tcp", errType: "-32600", status: "413", metricMethod: "tools/call"},
		{name: "HTTP+SSE session not found", span: "mcp", transport: "tcp", errType: "-32600", status: "404", metricMethod: "other"},
		{name: "body cut short", span: "prompts/list", transport: "tcp", errType: "-32700", status: "400", metricMethod: "prompts/list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var found []*tracepb.Span
			for _, s := range find(spans, tc.span) {
				if a := attrs(s); a["network.transport"] == tc.transport && a["error.type"] == tc.errType && a["http.response.status_code"] == tc.status {
					found = append(found, s)
				}
			}
			if len(found) != max(tc.n, 1) {
				t.Fatalf("%d %q spans on %s with error.type %q, status %q; want %d", len(found), tc.span, tc.transport, tc.errType, tc.status, max(tc.n, 1))
			}
			for _, s := range found {
				if s.Kind != tracepb.Span_SPAN_KIND_SERVER {
					t.Errorf("kind %v", s.Kind)
				}
				if failed := s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR; failed != (tc.errType != "") {
					t.Errorf("status %v with error.type %q", s.Status, tc.errType)
				}
			}
			n, ok := scrape(t, body, "mcp_server_operation_duration_seconds_count", `mcp_method_name="`+tc.metricMethod+`"`, `error_type="`+tc.errType+`"`)
			if !ok || n < float64(len(found)) {
				t.Errorf("histogram {%s, %q}: %v (found %v)", tc.metricMethod, tc.errType, n, ok)
			}
		})
	}
}

// postRaw POSTs body to url with the headers of each of hdrs (later ones
// win) and returns the response's status.
func postRaw(t *testing.T, url, body string, hdrs ...map[string]string) int {
	t.Helper()
	req, err := http.NewRequest("POST", url, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	for _, hdr := range hdrs {
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// postCut POSTs to url a JSON body shorter than its Content-Length (the
// connection half-closed after it), with the extra header lines, and
// returns the response's status.
func postCut(t *testing.T, url, extra string) int {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /mcp HTTP/1.1\r\nHost: "+host+"\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n"+extra+"\r\n"+`{"jsonrpc":"2.0"`)
	if err != nil {
		t.Fatal(err)
	}
	conn.(*net.TCPConn).CloseWrite()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
