package mcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// TestNoGoroutineLeaks ends stdio sessions and HTTP sessions in every way
// (end of input, cancellation, DELETE, server close) with requests, client
// calls, listen streams and SSE streams open, and checks that the
// goroutine count returns to where it started.
func TestNoGoroutineLeaks(t *testing.T) {
	base := countGoroutines()

	t.Run("stdio end of input", func(t *testing.T) {
		p := mcptest.New(nil)
		started := make(chan string, 8)
		p.Started = started
		s := mcp.NewServer(p, &mcp.Options{DrainTimeout: time.Millisecond})
		p.SetServer(s)
		cw, sr, done := mcptest.ServeStdio(context.Background(), s)
		go io.Copy(io.Discard, sr)
		lines := []string{
			request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}}}),
			request(2, "tools/call", map[string]any{"name": "elicit"}),
			request(3, "tools/call", map[string]any{"name": "slow"}),
			request(4, "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)),
			request(5, "tools/call", withMeta(map[string]any{"name": "slow"}, nil)),
		}
		io.WriteString(cw, strings.Join(lines, "\n")+"\n")
		for range 3 {
			<-started
		}
		cw.Close()
		if err := <-done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		s.Close()
	})

	t.Run("stdio context cancelled", func(t *testing.T) {
		s := mcp.NewServer(mcptest.New(nil), nil)
		cr, cw := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(ctx, cr, io.Discard) }()
		io.WriteString(cw, request(1, "tools/call", withMeta(map[string]any{"name": "slow"}, nil))+"\n")
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("ServeStdio = %v", err)
		}
		cw.Close() // lets the abandoned reader return
		s.Close()
	})

	t.Run("http sessions and shutdown", func(t *testing.T) {
		p := mcptest.New(nil)
		s := mcp.NewServer(p, nil)
		p.SetServer(s)
		ts := httptest.NewServer(s.HTTPHandler(&mcp.HTTPOptions{KeepAlive: time.Millisecond}))
		e := &httpEnv{t: t, srv: s, prov: p, ts: ts, url: ts.URL + "/mcp"}
		// A deleted session with an open GET stream.
		h := e.legacySession("2025-11-25", nil)
		get := e.do(http.MethodGet, h)
		newSSEReader(get.Body).next()
		del := e.do(http.MethodDelete, h)
		del.Body.Close()
		io.Copy(io.Discard, get.Body)
		get.Body.Close()
		// A session left open, with a request waiting for the client.
		h2 := e.legacySession("2025-11-25", map[string]any{"elicitation": map[string]any{}})
		resp := e.post(request(1, "tools/call", map[string]any{"name": "elicit"}), h2)
		newSSEReader(resp.Body).next()
		// A stateless listen stream.
		lresp := e.post(modernBody("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil), modernHeaders("subscriptions/listen", ""))
		newSSEReader(lresp.Body).next()
		s.Close()
		io.Copy(io.Discard, resp.Body)
		io.Copy(io.Discard, lresp.Body)
		resp.Body.Close()
		lresp.Body.Close()
		ts.Close()
	})

	waitGoroutines(t, base)
}
