package mcp_test

import (
	"bufio"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

func TestHTTPLegacySession(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-11-25", nil)
	if !regexp.MustCompile(`^[\x21-\x7E]+$`).MatchString(h["Mcp-Session-Id"]) {
		t.Fatalf("session id %q is not visible ASCII", h["Mcp-Session-Id"])
	}

	// A plain request gets a JSON reply.
	resp := e.post(request(2, "tools/list", nil), h)
	if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 || ct != "application/json" {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, ct)
	}
	if m := lastMsg(t, resp); !strings.Contains(string(m.Result), `"echo"`) {
		t.Fatalf("tools/list = %s", m.raw)
	}
	resp = e.post(request(3, "ping", nil), h)
	if m := lastMsg(t, resp); string(m.Result) != "{}" {
		t.Fatalf("ping = %s", m.raw)
	}

	// Notifications and unknown responses: 202, no body.
	for _, body := range []string{notification("notifications/roots/list_changed", nil), `{"jsonrpc":"2.0","id":42,"result":{}}`} {
		resp = e.post(body, h)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
			t.Fatalf("%s: %d %q", body, resp.StatusCode, b)
		}
	}

	// A request with progress switches to SSE with a priming event.
	resp = e.post(request(4, "tools/call", map[string]any{"name": "progress", "_meta": map[string]any{"progressToken": "p1"}}), h)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("progress reply Content-Type %q", ct)
	}
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) != 5 {
		t.Fatalf("%d events: %+v", len(evs), evs)
	}
	if evs[0].id == "" || evs[0].data != "" || evs[0].retry == "" {
		t.Fatalf("priming event = %+v", evs[0])
	}
	ids := map[string]bool{evs[0].id: true}
	for i, ev := range evs[1:] {
		m := decodeLine(t, ev.data+"\n")
		if i < 3 && m.Method != "notifications/progress" {
			t.Fatalf("event %d = %s", i+1, ev.data)
		}
		if i == 3 && (string(m.ID) != "4" || m.Error != nil) {
			t.Fatalf("final event = %s", ev.data)
		}
		if ev.id == "" || ids[ev.id] {
			t.Fatalf("event id %q missing or repeated", ev.id)
		}
		ids[ev.id] = true
	}

	// Invalid protocol version header: 400.
	bad := map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "MCP-Protocol-Version": "1999-01-01"}
	resp = e.post(request(5, "ping", nil), bad)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("bad version header: %d", resp.StatusCode)
	}

	// DELETE ends the session; afterwards 404.
	resp = e.do(http.MethodDelete, h)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %d", resp.StatusCode)
	}
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		var resp *http.Response
		if method == http.MethodPost {
			resp = e.post(request(6, "tools/list", nil), h)
		} else {
			resp = e.do(method, h)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("%s after DELETE: %d", method, resp.StatusCode)
		}
	}
}

func TestHTTPLegacyRouting(t *testing.T) {
	e := startHTTP(t, nil, nil)
	tests := []struct {
		name   string
		method string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"request without session", http.MethodPost, request(1, "tools/list", nil), nil, 400, jsonrpc.CodeInvalidRequest},
		{"request with 2025 header without session", http.MethodPost, request(1, "tools/list", nil), map[string]string{"MCP-Protocol-Version": "2025-11-25"}, 400, jsonrpc.CodeInvalidRequest},
		{"unknown session", http.MethodPost, request(1, "tools/list", nil), map[string]string{"Mcp-Session-Id": "nope"}, 404, jsonrpc.CodeInvalidRequest},
		{"notification without session", http.MethodPost, notification("notifications/initialized", nil), nil, 202, 0},
		{"GET without session", http.MethodGet, "", nil, 405, jsonrpc.CodeInvalidRequest},
		{"DELETE without session", http.MethodDelete, "", nil, 405, jsonrpc.CodeInvalidRequest},
		{"PUT", http.MethodPut, "", nil, 405, jsonrpc.CodeInvalidRequest},
		{"initialize with unsupported header", http.MethodPost, request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25"}), map[string]string{"MCP-Protocol-Version": "nope"}, 400, jsonrpc.CodeInvalidRequest},
		{"initialize with bad params", http.MethodPost, request(1, "initialize", map[string]any{"protocolVersion": 1}), nil, 400, jsonrpc.CodeInvalidParams},
		{"initialize in a batch", http.MethodPost, "[" + request(1, "initialize", map[string]any{"protocolVersion": "2025-03-26"}) + "]", nil, 400, jsonrpc.CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			var resp *http.Response
			if tt.method == http.MethodPost {
				resp = e.post(tt.body, tt.hdr)
			} else {
				resp = e.do(tt.method, tt.hdr)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tt.status)
			}
			ms := messages(t, resp)
			if tt.code == 0 {
				if len(ms) != 0 {
					t.Fatalf("unexpected body %s", ms[0].raw)
				}
				return
			}
			if len(ms) != 1 {
				t.Fatal("no JSON-RPC error body")
			}
			wantError(t, ms[0], tt.code)
		})
	}
	// initialize is accepted with or without the version header, and an
	// unknown extra header is ignored.
	for _, hdr := range []map[string]string{nil, {"MCP-Protocol-Version": "2025-11-25", "Mcp-Method": "initialize"}} {
		resp := e.post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), hdr)
		if m := lastMsg(t, resp); m.Error != nil || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize with %v: %s", hdr, m.raw)
		}
	}
}

func TestHTTPLegacyElicitation(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-11-25", map[string]any{"elicitation": map[string]any{}})
	resp := e.post(request(7, "tools/call", map[string]any{"name": "elicit"}), h)
	defer resp.Body.Close()
	rd := newSSEReader(resp.Body)
	var req *msg
	for req == nil {
		ev, ok := rd.next()
		if !ok {
			t.Fatal("stream ended before the elicitation request")
		}
		if ev.data != "" {
			req = decodeLine(t, ev.data+"\n")
		}
	}
	if req.Method != "elicitation/create" || req.ID == nil {
		t.Fatalf("got %s", req.raw)
	}
	ack := e.post(`{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"action":"accept","content":{"name":"Zoe"}}}`, h)
	ack.Body.Close()
	if ack.StatusCode != http.StatusAccepted {
		t.Fatalf("response POST: %d", ack.StatusCode)
	}
	for {
		ev, ok := rd.next()
		if !ok {
			t.Fatal("stream ended before the result")
		}
		if ev.data == "" {
			continue
		}
		m := decodeLine(t, ev.data+"\n")
		if textOf(t, m.Result) != "hello Zoe" {
			t.Fatalf("result = %s", m.raw)
		}
		return
	}
}

func TestHTTPLegacyStandaloneStream(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-11-25", nil)
	get := e.do(http.MethodGet, h)
	defer get.Body.Close()
	if get.StatusCode != 200 || get.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET: %d %s", get.StatusCode, get.Header.Get("Content-Type"))
	}
	rd := newSSEReader(get.Body)
	prime, ok := rd.next()
	if !ok || prime.id == "" || prime.data != "" {
		t.Fatalf("priming = %+v", prime)
	}
	resp := e.post(request(2, "tools/call", map[string]any{"name": "change_tools"}), h)
	lastMsg(t, resp)
	ev, ok := rd.next()
	if !ok {
		t.Fatal("GET stream ended")
	}
	if m := decodeLine(t, ev.data+"\n"); m.Method != "notifications/tools/list_changed" || ev.id == "" {
		t.Fatalf("event = %+v", ev)
	}
	// Resuming the standalone stream from the priming id replays it.
	h2 := map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": prime.id}
	get2 := e.do(http.MethodGet, h2)
	defer get2.Body.Close()
	rd2 := newSSEReader(get2.Body)
	rd2.next() // priming
	ev2, ok := rd2.next()
	if !ok || ev2.id != ev.id || ev2.data != ev.data {
		t.Fatalf("replayed %+v, want %+v", ev2, ev)
	}
	// The first GET was taken over and ends.
	if _, ok := rd.next(); ok {
		t.Fatal("old GET stream still open")
	}
}

func TestHTTPLegacyResumption(t *testing.T) {
	e := startHTTP(t, nil, nil)
	gate := make(chan struct{})
	e.prov.Gate = gate
	h := e.legacySession("2025-11-25", nil)
	resp := e.post(request(1, "tools/call", map[string]any{"name": "close_stream"}), h)
	evs := readSSE(t, resp.Body) // the server closes the stream mid-call
	resp.Body.Close()
	if len(evs) != 1 || evs[0].data != "" || evs[0].retry == "" || evs[0].id == "" {
		t.Fatalf("closed stream events = %+v", evs)
	}
	close(gate)
	get := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": evs[0].id})
	defer get.Body.Close()
	got := messages(t, get)
	if len(got) != 1 || string(got[0].ID) != "1" || textOf(t, got[0].Result) != "after close" {
		t.Fatalf("replayed %v", got)
	}
	// Unknown event ids are refused without touching the session.
	bad := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": "99.1"})
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Fatalf("unknown Last-Event-ID: %d", bad.StatusCode)
	}
}

func TestHTTPLegacyCancellation(t *testing.T) {
	e := startHTTP(t, nil, nil)
	started, stopped := make(chan string, 1), make(chan string, 1)
	e.prov.Started, e.prov.Stopped = started, stopped
	h := e.legacySession("2025-11-25", nil)
	done := make(chan []*msg)
	go func() { done <- messages(t, e.post(request("s", "tools/call", map[string]any{"name": "slow"}), h)) }()
	<-started
	resp := e.post(notification("notifications/cancelled", map[string]any{"requestId": "s"}), h)
	resp.Body.Close()
	<-stopped
	if ms := <-done; len(ms) != 0 {
		t.Fatalf("cancelled request answered: %s", ms[0].raw)
	}
}

func TestHTTPLegacyBatch(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-03-26", nil)
	resp := e.post(`[`+request(1, "ping", nil)+`,`+notification("notifications/initialized", nil)+`,`+request(2, "tools/call", map[string]any{"name": "echo"})+`]`, h)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(b), "[") || strings.Count(string(b), `"result"`) != 2 {
		t.Fatalf("batch: %d %s", resp.StatusCode, b)
	}
	resp = e.post(`[`+notification("notifications/initialized", nil)+`]`, h)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notification batch: %d", resp.StatusCode)
	}
	h2 := e.legacySession("2025-06-18", nil)
	resp = e.post(`[`+request(1, "ping", nil)+`]`, h2)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("batch in 2025-06-18: %d", resp.StatusCode)
	}
}

func TestHTTPSessionExpiryAndLimit(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{SessionIdleTimeout: 20 * time.Millisecond, MaxSessions: 2})
	h := e.legacySession("2025-11-25", nil)
	deadline := time.Now().Add(wait)
	for {
		resp := e.post(request(2, "ping", nil), h)
		resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle session never expired")
		}
		time.Sleep(50 * time.Millisecond) // longer than the idle timeout: each ping used to keep it alive
	}
	e2 := startHTTP(t, nil, &mcp.HTTPOptions{MaxSessions: 2})
	e2.legacySession("2025-11-25", nil)
	e2.legacySession("2025-11-25", nil)
	resp := e2.post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("third session: %d", resp.StatusCode)
	}
}

func TestHTTPLegacyResumeWithoutGate(t *testing.T) {
	// The tool closes its stream and answers at once: the result is never
	// lost, whether it came on the POST stream or on resumption.
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-11-25", nil)
	resp := e.post(request(1, "tools/call", map[string]any{"name": "close_stream"}), h)
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	if len(evs) == 0 || evs[0].data != "" || evs[0].retry == "" {
		t.Fatalf("events = %+v", evs)
	}
	if len(evs) == 2 {
		return // the result won the race onto the POST stream
	}
	get := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": evs[0].id})
	defer get.Body.Close()
	for _, ev := range readSSE(t, get.Body) {
		if ev.data != "" {
			if m := decodeLine(t, ev.data+"\n"); textOf(t, m.Result) == "after close" {
				return
			}
		}
	}
	t.Fatal("result not replayed")
}

func TestHTTPKeepAlive(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{KeepAlive: time.Millisecond})
	h := e.legacySession("2025-11-25", nil)
	// keepAlive reads stream until a keep-alive comment.
	keepAlive := func(what string, stream *http.Response) {
		t.Helper()
		defer stream.Body.Close()
		br := bufio.NewReader(stream.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("%s ended: %v", what, err)
			}
			if strings.HasPrefix(line, ":") {
				return
			}
		}
	}
	keepAlive("stream", e.do(http.MethodGet, h))
	// A stateless listen stream gets them too.
	keepAlive("listen stream", e.post(modernBody("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil), modernHeaders("subscriptions/listen", "")))
}

func TestHTTPRetainedStreamsBounded(t *testing.T) {
	// 80 calls held at once: more than the default call limit.
	e := startHTTPWith(t, &mcp.Options{MaxConcurrentCalls: 100}, nil, nil)
	gate := make(chan struct{})
	e.prov.Gate = gate
	h := e.legacySession("2025-11-25", nil)
	// 80 requests close their streams before answering: each leaves a
	// stream to resume. Only the newest ones are kept.
	var ids []string
	for i := range 80 {
		resp := e.post(request(i+10, "tools/call", map[string]any{"name": "close_stream"}), h)
		evs := readSSE(t, resp.Body)
		resp.Body.Close()
		ids = append(ids, evs[0].id)
	}
	close(gate)
	resume := func(id string) int {
		get := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": id})
		defer get.Body.Close()
		io.Copy(io.Discard, get.Body)
		return get.StatusCode
	}
	if got := resume(ids[len(ids)-1]); got != 200 {
		t.Fatalf("newest stream: %d", got)
	}
	// Wait until the oldest requests are done, then open one more stream:
	// pruning drops finished streams beyond the bound.
	for i := range 5 {
		lastMsg(t, e.post(request(1000+i, "ping", nil), h))
	}
	deadline := time.Now().Add(wait)
	for resume(ids[0]) != http.StatusBadRequest {
		if time.Now().After(deadline) {
			t.Fatal("oldest stream never forgotten")
		}
		resp := e.post(request(2000, "tools/call", map[string]any{"name": "close_stream"}), h)
		readSSE(t, resp.Body)
		resp.Body.Close()
	}
}

func TestHTTPSessionDeletedDuringRequest(t *testing.T) {
	e := startHTTP(t, nil, nil)
	started, stopped := make(chan string, 1), make(chan string, 1)
	e.prov.Started, e.prov.Stopped = started, stopped
	h := e.legacySession("2025-11-25", nil)
	done := make(chan *http.Response, 1)
	go func() { done <- e.post(request(1, "tools/call", map[string]any{"name": "slow"}), h) }()
	<-started
	del := e.do(http.MethodDelete, h)
	del.Body.Close()
	<-stopped // the request was cancelled with its session
	resp := <-done
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("status %d, want 404", resp.StatusCode)
	}
}
