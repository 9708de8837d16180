package mcp_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

func TestStdioShutdown(t *testing.T) {
	t.Run("in flight finishes", func(t *testing.T) {
		c, req := startElicit(t)
		// A listen stream ends with its completion result.
		c.send(request("l", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil)))
		if ack := c.next(); ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("got %s", ack.raw)
		}
		shut := shutdownInBackground(c.srv)
		if m, _ := c.await("l"); field(t, m.Result, "resultType") != "complete" {
			t.Fatalf("listen at shutdown: %s", m.raw)
		}
		// New requests are refused while the call in flight goes on.
		m, _ := c.rpc("new", "tools/call", map[string]any{"name": "echo"})
		wantError(t, m, jsonrpc.CodeInternalError)
		if !strings.Contains(m.Error.Message, "shutting down") {
			t.Errorf("new request: %s", m.raw)
		}
		// The client still answers the in-flight call's question, and the
		// call's response goes out.
		c.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Ann"}}}`)
		res, _ := c.await("e")
		if got := textOf(t, res.Result); got != "hello Ann" {
			t.Fatalf("in-flight call: %s", res.raw)
		}
		if err := <-shut; err != nil {
			t.Fatalf("Shutdown = %v", err)
		}
		if err := <-c.done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		c.done <- nil
	})
	t.Run("grace expires", func(t *testing.T) {
		c, stopped := slowCall(t, nil, "slow")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := c.srv.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Shutdown = %v, want the deadline", err)
		}
		if took := time.Since(start); took < 200*time.Millisecond || took > 5*time.Second {
			t.Errorf("Shutdown took %v", took)
		}
		<-stopped // the call was cancelled
		if err := <-c.done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		c.done <- nil
	})
}

// startElicit starts a stdio server with a 2025-11-25 session and a call
// of the elicit tool (request id "e"), and returns its question.
func startElicit(t *testing.T) (*stdioClient, *msg) {
	t.Helper()
	c := startStdio(t, nil, nil)
	c.initialize("2025-11-25", map[string]any{"elicitation": map[string]any{}})
	c.send(request("e", "tools/call", map[string]any{"name": "elicit"}))
	req := c.next()
	if req.Method != "elicitation/create" {
		t.Fatalf("got %s", req.raw)
	}
	return c, req
}

// shutdownInBackground starts s.Shutdown with a grace of wait and returns
// where its result goes.
func shutdownInBackground(s *mcp.Server) <-chan error {
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		shut <- s.Shutdown(ctx)
	}()
	return shut
}

func TestRunHTTPShutdown(t *testing.T) {
	t.Run("in flight finishes", func(t *testing.T) {
		base := countGoroutines()
		gate := make(chan struct{})
		e := startRun(t, nil, &mcp.HTTPOptions{ShutdownGrace: wait})
		e.prov.Gate = gate
		started := make(chan string, 4)
		e.prov.Started = started
		client := &http.Client{Transport: &http.Transport{}}
		post := func(body string, hdr map[string]string) (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			return client.Do(req)
		}
		// A call held by the gate, a listen stream and a GET stream.
		type result struct {
			resp *http.Response
			err  error
		}
		held := make(chan result, 1)
		go func() {
			r, err := post(modernBody(1, "tools/call", map[string]any{"name": "close_stream"}, nil), modernHeaders("tools/call", "close_stream"))
			held <- result{r, err}
		}()
		<-started
		lresp, err := post(modernBody("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil), modernHeaders("subscriptions/listen", ""))
		if err != nil {
			t.Fatal(err)
		}
		newSSEReader(lresp.Body).next()
		ir, err := post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		sid := ir.Header.Get("Mcp-Session-Id")
		ir.Body.Close()
		greq, _ := http.NewRequest(http.MethodGet, e.url, nil)
		greq.Header.Set("Mcp-Session-Id", sid)
		gresp, err := client.Do(greq)
		if err != nil {
			t.Fatal(err)
		}

		e.cancel() // SIGTERM
		// The long-lived streams end (listen with its completion).
		evs := readSSE(t, lresp.Body)
		lresp.Body.Close()
		if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].data, `"resultType":"complete"`) {
			t.Fatalf("listen at shutdown: %v", evs)
		}
		readSSE(t, gresp.Body)
		gresp.Body.Close()
		// New connections are not accepted.
		deadline := time.Now().Add(wait)
		for {
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: time.Second}
			r, err := c.Post(e.url, "application/json", strings.NewReader(modernBody(9, "server/discover", nil, nil)))
			if err != nil {
				break
			}
			r.Body.Close()
			if time.Now().After(deadline) {
				t.Fatal("still accepting connections during shutdown")
			}
			time.Sleep(10 * time.Millisecond)
		}
		select {
		case <-e.done:
			t.Fatal("RunHTTP returned with a call in flight")
		default:
		}
		// The call in flight finishes and its response is delivered.
		close(gate)
		r := <-held
		if r.err != nil {
			t.Fatalf("in-flight call: %v", r.err)
		}
		wantResult(t, lastMsg(t, r.resp))
		e.waitReturned(t)
		client.CloseIdleConnections()
		e.srv.Close()
		waitGoroutines(t, base)
	})
	t.Run("grace expires", func(t *testing.T) {
		e := startRun(t, nil, &mcp.HTTPOptions{ShutdownGrace: 300 * time.Millisecond})
		started := make(chan string, 1)
		e.prov.Started = started
		type result struct {
			resp *http.Response
			err  error
		}
		held := make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(modernBody(1, "tools/call", map[string]any{"name": "slow"}, nil)))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range modernHeaders("tools/call", "slow") {
				req.Header.Set(k, v)
			}
			r, err := http.DefaultClient.Do(req)
			held <- result{r, err}
		}()
		<-started
		start := time.Now()
		e.cancel()
		r := <-held
		if r.err != nil {
			t.Fatalf("in-flight call: %v", r.err)
		}
		if r.resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("cancelled call: status %d", r.resp.StatusCode)
		}
		m := lastMsg(t, r.resp)
		if m.Error == nil || !strings.Contains(m.Error.Message, "shutting down") {
			t.Errorf("cancelled call: %s", m.raw)
		}
		e.waitReturned(t)
		if took := time.Since(start); took < 300*time.Millisecond || took > 5*time.Second {
			t.Errorf("shutdown took %v with a 300ms grace", took)
		}
	})
}
