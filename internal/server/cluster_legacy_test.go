package server

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
)

// legacyClient is one legacy (2025-11-25) session whose requests go to
// any of several replicas.
type legacyClient struct {
	t    *testing.T
	urls []string
	sid  string
}

// post sends msg to replica i and returns the answer.
func (c *legacyClient) post(i int, msg map[string]any) httpResult {
	c.t.Helper()
	hc := &httpClient{t: c.t, url: c.urls[i] + "/mcp"}
	hdr := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	if c.sid != "" {
		hdr["Mcp-Session-Id"] = c.sid
	}
	return hc.post(msg, hdr)
}

func rpc(id int, method string, params map[string]any) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
}

// sse opens a streaming request to replica i (a GET of the standalone
// stream when msg is nil, else a POST) and returns its data lines.
func (c *legacyClient) sse(i int, msg map[string]any) <-chan string {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	method, body := http.MethodGet, ""
	if msg != nil {
		b, _ := json.Marshal(msg)
		method, body = http.MethodPost, string(b)
	}
	req, _ := http.NewRequestWithContext(ctx, method, c.urls[i]+"/mcp", strings.NewReader(body))
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		c.t.Fatalf("%s on replica %d: status %d", method, i, resp.StatusCode)
	}
	c.t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok && d != "" {
				lines <- d
			}
		}
	}()
	return lines
}

// next returns the next data line containing want, within 10 s.
func next(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case d, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before %q", want)
			}
			if strings.Contains(d, want) {
				return d
			}
		case <-timeout:
			t.Fatalf("no %q within 10s", want)
		}
	}
}

// TestClusterLegacySession runs one legacy session across three replicas
// with no stickiness: initialize on one, calls on the others, state
// (subscriptions) set on one and honoured on another, a notification
// caused on one reaching the GET stream held by another, a server-to-
// client request answered through another replica than the one asking,
// and DELETE ending it everywhere.
func TestClusterLegacySession(t *testing.T) {
	urls := replicas(t, redistest.Start(t), 3)
	c := &legacyClient{t: t, urls: urls}
	init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	c.sid = init.header.Get("Mcp-Session-Id")
	if init.status != 200 || c.sid == "" || !strings.Contains(c.sid, ".") {
		t.Fatalf("initialize: %d, session %q (want a sealed id): %s", init.status, c.sid, init.raw)
	}
	if r := c.post(1, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); r.status != 202 {
		t.Fatalf("initialized on replica 1: %d %s", r.status, r.raw)
	}
	for i, want := range []string{"1", "2", "3"} {
		r := c.post(i%3, rpc(10+i, "tools/call", map[string]any{"name": "counter"}))
		if got := decodeTool(t, r.response).text(); got != want {
			t.Fatalf("counter on replica %d: %q (%d %s)", i%3, got, r.status, r.raw)
		}
	}
	if r := c.post(1, rpc(20, "resources/subscribe", map[string]any{"uri": "kitchen://static"})); r.Error != nil || r.status != 200 {
		t.Fatalf("subscribe on replica 1: %s", r.raw)
	}
	// The client's GET stream is on replica 2; the change is made on 0.
	get := c.sse(2, nil)
	eventually(t, "resources/updated on the GET stream of another replica", func() bool {
		c.post(0, rpc(21, "tools/call", map[string]any{"name": "counter"}))
		select {
		case d := <-get:
			return strings.Contains(d, "notifications/resources/updated") && strings.Contains(d, "kitchen://static")
		case <-time.After(300 * time.Millisecond):
			return false
		}
	})

	// elicitation/create asked on replica 1's POST stream, answered
	// through replica 0.
	call := c.sse(1, rpc(30, "tools/call", map[string]any{"name": "ask"}))
	var ask struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal([]byte(next(t, call, "elicitation/create")), &ask); err != nil {
		t.Fatal(err)
	}
	answer := map[string]any{"jsonrpc": "2.0", "id": ask.ID, "result": map[string]any{"action": "accept", "content": map[string]any{"name": "Cy"}}}
	if r := c.post(0, answer); r.status != 202 {
		t.Fatalf("answer on replica 0: %d %s", r.status, r.raw)
	}
	if d := next(t, call, `"id":30`); !strings.Contains(d, "Hello, Cy!") {
		t.Fatalf("result after the answer through another replica: %s", d)
	}

	// DELETE on one replica ends the session on all of them.
	req, _ := http.NewRequest(http.MethodDelete, urls[1]+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	for i := range urls {
		eventually(t, "session gone on every replica", func() bool {
			return c.post(i, rpc(40, "ping", map[string]any{})).status == 404
		})
	}
}

// TestClusterSessionIDs checks that a session id is refused by a replica
// when it was not minted by the cluster or is unknown to the store.
func TestClusterSessionIDs(t *testing.T) {
	urls := replicas(t, redistest.Start(t), 2, clusterKey, "another-cluster-key-0123456789abcdef")
	c := &legacyClient{t: t, urls: urls}
	init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	sid := init.header.Get("Mcp-Session-Id")
	for _, tc := range []struct {
		name, sid string
		replica   int
	}{
		{"another cluster key", sid, 1},
		{"altered seal", sid[:len(sid)-2] + "AA", 0},
		{"unsealed", strings.Split(sid, ".")[0], 0},
		{"seal of another id", "AAAAAAAAAAAAAAAAAAAAAA." + strings.Split(sid, ".")[1], 0},
	} {
		c.sid = tc.sid
		if r := c.post(tc.replica, rpc(2, "ping", map[string]any{})); r.status != 404 {
			t.Errorf("%s: %d %s, want 404", tc.name, r.status, r.raw)
		}
	}
}

// TestClusterLegacyRedisDown checks a shared session while Redis is
// away: the replica holding it goes on serving it; another one answers
// 503 with Retry-After (not 404: the session is alive), and so does
// initialize; once Redis is back, the other replica takes the session
// over.
func TestClusterLegacyRedisDown(t *testing.T) {
	r := redistest.Start(t)
	urls := replicas(t, r, 2)
	c := &legacyClient{t: t, urls: urls}
	initialize := rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	c.sid = c.post(0, initialize).header.Get("Mcp-Session-Id")
	r.Stop()
	if res := c.post(0, rpc(2, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hey"}})); !strings.Contains(decodeTool(t, res.response).text(), `"length":3`) {
		t.Errorf("the holding replica with Redis down: %d %s", res.status, res.raw)
	}
	if res := c.post(1, rpc(3, "ping", map[string]any{})); res.status != 503 || res.header.Get("Retry-After") == "" {
		t.Errorf("another replica with Redis down: %d %s, want 503 with Retry-After", res.status, res.raw)
	}
	fresh := &legacyClient{t: t, urls: urls}
	if res := fresh.post(1, initialize); res.status != 503 {
		t.Errorf("initialize with Redis down: %d %s, want 503", res.status, res.raw)
	}
	r.Restart()
	// Redis restarted empty: the session is gone from the store, and the
	// holder finds that out at its next request.
	eventually(t, "session store back", func() bool { return c.post(1, rpc(4, "ping", map[string]any{})).status == 404 })
	if res := fresh.post(1, initialize); res.status != 200 {
		t.Errorf("initialize after the restart: %d %s", res.status, res.raw)
	}
}
