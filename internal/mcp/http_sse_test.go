package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// rpc posts a request and reads the stream until its response; the
// messages before it are returned too.
func (c *sseClient) rpc(id any, method string, params any) (*msg, []*msg) {
	c.t.Helper()
	resp := c.post(request(id, method, params), nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		c.t.Fatalf("POST %s: status %d", method, resp.StatusCode)
	}
	return c.await(id)
}

// await reads the stream until the response to id.
func (c *sseClient) await(id any) (*msg, []*msg) {
	c.t.Helper()
	want := mustJSON(id)
	var before []*msg
	for {
		m := decodeLine(c.t, c.recv()+"\n")
		if m.isResponse() && string(m.ID) == want {
			return m, before
		}
		before = append(before, m)
	}
}

// initialize runs the handshake over the session.
func (c *sseClient) initialize(version string) {
	c.t.Helper()
	m, _ := c.rpc("init", "initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	wantResult(c.t, m)
	resp := c.post(notification("notifications/initialized", nil), nil)
	resp.Body.Close()
}

func TestSSEListAndCall(t *testing.T) {
	e := startHTTP(t, nil, nil)
	c := openSSEClient(t, e)
	c.initialize("2024-11-05")
	m, _ := c.rpc(1, "tools/list", nil)
	wantResult(t, m)
	if !strings.Contains(string(m.Result), `"name":"echo"`) {
		t.Fatalf("tools/list: %s", m.raw)
	}
	m, before := c.rpc(2, "tools/call", map[string]any{"name": "progress", "arguments": map[string]any{"steps": 2}, "_meta": map[string]any{"progressToken": "p"}})
	if textOf(t, m.Result) != "done" || len(before) != 2 || before[0].Method != "notifications/progress" {
		t.Fatalf("progress call: %s after %d messages", m.raw, len(before))
	}
	// A server-to-client request travels on the stream, its answer comes
	// back by POST.
	resp := c.post(request(3, "tools/call", map[string]any{"name": "elicit"}), nil)
	resp.Body.Close()
	ask := decodeLine(t, c.recv()+"\n")
	if ask.Method != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %s", ask.raw)
	}
	resp = c.post(`{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"accept","content":{"name":"sse"}}}`, nil)
	resp.Body.Close()
	m, _ = c.await(3)
	if textOf(t, m.Result) != "hello sse" {
		t.Fatalf("elicit: %s", m.raw)
	}
	// The stream is the session: once it is closed the endpoint is gone.
	c.resp.Body.Close()
	eventually(t, "the session outlived its stream", func() bool {
		return e.send(http.MethodPost, c.endpoint, request(4, "ping", nil), nil) == http.StatusNotFound
	})
}

func TestSSEPaths(t *testing.T) {
	tests := []struct {
		name   string
		opts   *mcp.HTTPOptions
		method string
		path   string
		status int
	}{
		{"default stream", nil, http.MethodGet, "/sse", http.StatusOK},
		{"POST to the stream", nil, http.MethodPost, "/sse", http.StatusMethodNotAllowed},
		{"GET the messages endpoint", nil, http.MethodGet, "/messages?sessionId=x", http.StatusMethodNotAllowed},
		{"messages without a session", nil, http.MethodPost, "/messages", http.StatusNotFound},
		{"configured stream", &mcp.HTTPOptions{SSEPath: "/events", MessagesPath: "/events/in"}, http.MethodGet, "/events", http.StatusOK},
		{"old path once configured", &mcp.HTTPOptions{SSEPath: "/events"}, http.MethodGet, "/sse", http.StatusNotFound},
		{"disabled", &mcp.HTTPOptions{DisableSSE: true}, http.MethodGet, "/sse", http.StatusNotFound},
		{"disabled messages", &mcp.HTTPOptions{DisableSSE: true}, http.MethodPost, "/messages?sessionId=x", http.StatusNotFound},
		{"Streamable HTTP beside it", nil, http.MethodGet, "/mcp", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := startHTTP(t, nil, tt.opts)
			if tt.status != http.StatusOK {
				if st := e.send(tt.method, e.ts.URL+tt.path, "{}", nil); st != tt.status {
					t.Fatalf("status %d, want %d", st, tt.status)
				}
				return
			}
			resp, err := e.ts.Client().Get(e.ts.URL + tt.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			ev, ok := newSSEReader(resp.Body).next()
			msgs := "/messages"
			if tt.opts != nil && tt.opts.MessagesPath != "" {
				msgs = tt.opts.MessagesPath
			}
			if !ok || ev.event != "endpoint" || !strings.HasPrefix(ev.data, msgs+"?sessionId=") {
				t.Fatalf("first event %+v", ev)
			}
		})
	}
}

func TestSSEForgedSessions(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{Middleware: identityMiddleware})
	post := func(sid string, hdr map[string]string) int {
		return e.send(http.MethodPost, e.ts.URL+"/messages?sessionId="+sid, request(1, "ping", nil), hdr)
	}
	for _, sid := range []string{"AAAAAAAAAAAAAAAAAAAAAA", "..%2F..%2Fetc", strings.Repeat("x", 4000), "1", ""} {
		if st := post(sid, nil); st != http.StatusNotFound {
			t.Errorf("forged session %.20q: %d, want 404", sid, st)
		}
	}
	alice := openSSEClient(t, e, "X-User", "alice")
	sid := strings.TrimPrefix(alice.endpoint, e.ts.URL+"/messages?sessionId=")
	tests := []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"its owner", map[string]string{"X-User": "alice"}, http.StatusAccepted},
		{"another principal", map[string]string{"X-User": "bob"}, http.StatusNotFound},
		{"anonymous", nil, http.StatusNotFound},
	}
	for _, tt := range tests {
		if st := post(sid, tt.hdr); st != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, st, tt.want)
		}
	}
	// The two transports' session ids do not cross.
	resp := e.post(request(1, "ping", nil), map[string]string{"X-User": "alice", "Mcp-Session-Id": sid})
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("an HTTP+SSE session id on the Streamable HTTP endpoint: %d, want 404", resp.StatusCode)
	}
	resp = e.post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), map[string]string{"X-User": "alice"})
	streamable := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	if st := post(streamable, map[string]string{"X-User": "alice"}); st != http.StatusNotFound {
		t.Errorf("a Streamable HTTP session id on the messages endpoint: %d, want 404", st)
	}
}

func TestSSEHostAndOrigin(t *testing.T) {
	e := startHTTP(t, nil, nil)
	c := openSSEClient(t, e)
	tests := []struct {
		name, method, url, host, origin string
	}{
		{"stream, evil host", http.MethodGet, e.ts.URL + "/sse", "evil.example.com", ""},
		{"stream, evil origin", http.MethodGet, e.ts.URL + "/sse", "", "http://evil.example.com"},
		{"messages, evil host", http.MethodPost, c.endpoint, "evil.example.com", ""},
		{"messages, evil origin", http.MethodPost, c.endpoint, "", "http://evil.example.com"},
	}
	for _, tt := range tests {
		hdr := map[string]string{}
		if tt.host != "" {
			hdr["Host"] = tt.host
		}
		if tt.origin != "" {
			hdr["Origin"] = tt.origin
		}
		if st := e.send(tt.method, tt.url, request(1, "ping", nil), hdr); st != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tt.name, st)
		}
	}
}

func TestSSESessionCap(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{MaxSessions: 2})
	openSSEClient(t, e)
	e.legacySession("2025-11-25", nil)
	// Both transports count against the one limit.
	resp, err := e.ts.Client().Get(e.ts.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third session over HTTP+SSE: %d", resp.StatusCode)
	}
	resp = e.post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third session over Streamable HTTP: %d", resp.StatusCode)
	}
}

// TestSSEListen: a 2026-07-28 subscriptions/listen over an HTTP+SSE
// session streams its notifications there until it is cancelled.
func TestSSEListen(t *testing.T) {
	e := startHTTP(t, nil, nil)
	c := openSSEClient(t, e)
	resp := c.post(request("sub", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)), nil)
	resp.Body.Close()
	ack := decodeLine(t, c.recv()+"\n")
	if ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message %s", ack.raw)
	}
	m, before := c.rpc(1, "tools/call", withMeta(map[string]any{"name": "change_tools"}, nil))
	wantResult(t, m)
	if len(before) == 0 {
		// The notification goes out on the listen stream's own path and
		// may follow the call's answer: wait for it (recv is bounded).
		before = append(before, decodeLine(t, c.recv()+"\n"))
	}
	_, more := c.rpc(2, "server/discover", withMeta(nil, nil))
	before = append(before, more...)
	if len(before) != 1 || before[0].Method != "notifications/tools/list_changed" ||
		field(t, before[0].Params, "_meta", "io.modelcontextprotocol/subscriptionId") != "sub" {
		t.Fatalf("tools change: %v", before)
	}
	resp = c.post(notification("notifications/cancelled", map[string]any{"requestId": "sub"}), nil)
	resp.Body.Close()
	_, before = c.rpc(3, "tools/call", withMeta(map[string]any{"name": "change_tools"}, nil))
	_, more = c.rpc(4, "server/discover", withMeta(nil, nil))
	if len(before)+len(more) != 0 {
		t.Fatalf("after cancel: %v %v", before, more)
	}
}
