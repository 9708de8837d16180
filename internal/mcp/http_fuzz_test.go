package mcp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// FuzzHTTPPost feeds arbitrary bodies and header values to the HTTP
// handler: it must not panic, and every reply must be empty or carry JSON
// (a JSON-RPC message, or SSE events of them).
func FuzzHTTPPost(f *testing.F) {
	s := mcp.NewServer(mcp.NewConstProvider(), nil)
	f.Cleanup(func() { s.Close() })
	h := s.HTTPHandler(nil)
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, seed := range []struct{ body, version, method, name string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, "2026-07-28", "tools/call", "echo"},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, "2026-07-28", "tools/list", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`, "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, "2026-07-28", "server/discover", ""},
		{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, "2025-03-26", "", ""},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", "", ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",` + meta + `}}`, "2026-07-28", "tools/call", "=?base64?ZWNobw==?="},
	} {
		f.Add([]byte(seed.body), seed.version, seed.method, seed.name)
	}
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range map[string]string{"MCP-Protocol-Version": version, "Mcp-Method": method, "Mcp-Name": name} {
			if v != "" {
				req.Header[k] = []string{v}
			}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		out := rec.Body.Bytes()
		if len(out) == 0 {
			return
		}
		switch ct := rec.Header().Get("Content-Type"); ct {
		case "application/json":
			if !json.Valid(out) {
				t.Fatalf("status %d: invalid JSON %q", rec.Code, out)
			}
		case "text/event-stream":
			for _, ev := range readSSE(t, bytes.NewReader(out)) {
				if ev.data != "" && !json.Valid([]byte(ev.data)) {
					t.Fatalf("invalid SSE data %q", ev.data)
				}
			}
		default:
			t.Fatalf("status %d, Content-Type %q, body %q", rec.Code, ct, out)
		}
		if rec.Code >= 400 && rec.Code != 405 && rec.Code != 413 && rec.Code != 415 {
			var m map[string]json.RawMessage
			if json.Unmarshal(out, &m) != nil || m["error"] == nil {
				t.Fatalf("status %d without a JSON-RPC error body: %q", rec.Code, out)
			}
		}
	})
}

// FuzzSSEMessage feeds arbitrary bodies to the messages endpoint of one
// HTTP+SSE session: the POST must be answered 202 (or 400 for an
// unreadable body), the server must not panic, and every event on the
// session's stream must carry JSON.
func FuzzSSEMessage(f *testing.F) {
	s := mcp.NewServer(mcp.NewConstProvider(), nil)
	ts := httptest.NewServer(s.HTTPHandler(nil))
	f.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	resp, err := ts.Client().Get(ts.URL + "/sse")
	if err != nil {
		f.Fatal(err)
	}
	rd := newSSEReader(resp.Body)
	ev, ok := rd.next()
	if !ok || ev.event != "endpoint" {
		f.Fatalf("endpoint event %+v", ev)
	}
	endpoint := ts.URL + ev.data
	client := &http.Client{Timeout: 10 * time.Second} // a POST waits at most for a request slot
	var bad atomic.Value
	go func() {
		for {
			ev, ok := rd.next()
			if !ok {
				return
			}
			if ev.event != "message" || !json.Valid([]byte(ev.data)) {
				bad.Store(fmt.Sprintf("event %q data %q", ev.event, ev.data))
			}
		}
	}()
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`,
		`[{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"server/discover"}]`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":"x","result":{}}`,
		`[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		resp, err := client.Post(endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%v for %q", err, body)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status %d for %q", resp.StatusCode, body)
		}
		if b := bad.Load(); b != nil {
			t.Fatal(b)
		}
	})
}
