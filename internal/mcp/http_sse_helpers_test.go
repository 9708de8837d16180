package mcp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// sseClient is a client of the HTTP+SSE transport (2024-11-05).
type sseClient struct {
	t        *testing.T
	e        *httpEnv
	resp     *http.Response
	endpoint string // absolute URL of the messages endpoint
	events   chan sseEvent
}

// openSSEClient opens the stream at /sse with hdr and reads its endpoint
// event.
func openSSEClient(t *testing.T, e *httpEnv, hdr ...string) *sseClient {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.ts.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		t.Fatalf("GET /sse: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		t.Fatalf("GET /sse: status %d", resp.StatusCode)
	}
	c := &sseClient{t: t, e: e, resp: resp, events: make(chan sseEvent, 1024)}
	t.Cleanup(func() { resp.Body.Close() })
	rd := newSSEReader(resp.Body)
	ev, ok := rd.next()
	if !ok || ev.event != "endpoint" || !strings.HasPrefix(ev.data, "/messages?sessionId=") {
		t.Fatalf("first event %+v, want the endpoint", ev)
	}
	c.endpoint = e.ts.URL + ev.data
	go func() {
		defer close(c.events)
		for {
			ev, ok := rd.next()
			if !ok {
				return
			}
			c.events <- ev
		}
	}()
	return c
}

// post sends one message to the session's endpoint.
func (c *sseClient) post(body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header[k] = []string{v}
	}
	resp, err := c.e.ts.Client().Do(req)
	if err != nil {
		c.t.Fatalf("POST: %v", err)
	}
	return resp
}

// recv returns the data of the next message event.
func (c *sseClient) recv() string {
	c.t.Helper()
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				c.t.Fatal("the SSE stream ended")
			}
			if ev.event == "message" {
				return ev.data
			}
		case <-time.After(wait):
			c.t.Fatal("no event on the SSE stream")
		}
	}
}

// send makes one request to url with hdr ("Host" sets the Host header)
// and returns its status, reading and closing the body.
func (e *httpEnv) send(method, url, body string, hdr map[string]string) int {
	e.t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// eventually waits (at most wait) until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, wait, what, cond)
}
