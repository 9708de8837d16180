package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// Tests on a fake clock (testing/synctest) serve the HTTP handler in
// the bubble without a network: a real socket's wait is not one the
// bubble can see.

// bubbleHandler starts a server with opts and returns its HTTP handler
// with hopts.
func bubbleHandler(t *testing.T, opts *mcp.Options, hopts *mcp.HTTPOptions) http.Handler {
	t.Helper()
	p := mcptest.New(nil)
	s := mcp.NewServer(p, opts)
	p.SetServer(s)
	t.Cleanup(func() { s.Close() })
	return s.HTTPHandler(hopts)
}

// bubblePost serves a POST of body with the headers hdr under ctx on h, in
// the calling goroutine.
func bubblePost(ctx context.Context, h http.Handler, body string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v) // canonical, as net/http would parse it
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// bubbleSession opens a legacy (version) session on h and returns the
// headers of its requests.
func bubbleSession(t *testing.T, h http.Handler, version string) map[string]string {
	t.Helper()
	w := bubblePost(context.Background(), h, request(1, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}), nil)
	sid := w.Header().Get("Mcp-Session-Id")
	if w.Code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q, %s", w.Code, sid, w.Body)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
	if w := bubblePost(context.Background(), h, notification("notifications/initialized", nil), hdr); w.Code != http.StatusAccepted {
		t.Fatalf("initialized: status %d", w.Code)
	}
	return hdr
}

// TestHTTPSessionIdleExpiry (on a fake clock): a legacy session used
// again within SessionIdleTimeout each time stays, however long in all;
// one left idle for the timeout, from its start or its last use, ends
// then, not before.
func TestHTTPSessionIdleExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Minute
		h := bubbleHandler(t, nil, &mcp.HTTPOptions{SessionIdleTimeout: idle})
		used, unused := bubbleSession(t, h, "2025-11-25"), bubbleSession(t, h, "2025-11-25")
		ping := func(hdr map[string]string) int {
			t.Helper()
			synctest.Wait() // the timers due have fired
			return bubblePost(context.Background(), h, request(2, "ping", nil), hdr).Code
		}
		began := time.Now() // both sessions'
		last := began
		for i := range 5 {
			time.Sleep(time.Until(last.Add(idle - time.Nanosecond)))
			if code := ping(used); code != http.StatusOK {
				t.Fatalf("ping %d, %v after the last use: status %d, want 200", i, idle-time.Nanosecond, code)
			}
			last = time.Now()
			if i == 0 {
				time.Sleep(time.Until(began.Add(idle)))
				if code := ping(unused); code != http.StatusNotFound {
					t.Fatalf("a session unused for %v since it began: status %d, want 404", idle, code)
				}
			}
		}
		time.Sleep(time.Until(last.Add(idle)))
		if code := ping(used); code != http.StatusNotFound {
			t.Fatalf("ping %v after the last use: status %d, want 404 (the session ended)", idle, code)
		}
	})
}
