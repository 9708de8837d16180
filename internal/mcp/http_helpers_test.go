package mcp_test

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// httpEnv is a server on a real loopback listener.
type httpEnv struct {
	t    *testing.T
	srv  *mcp.Server
	prov *mcptest.Provider
	ts   *httptest.Server
	url  string
}

func startHTTP(t *testing.T, popts *mcptest.Options, hopts *mcp.HTTPOptions) *httpEnv {
	t.Helper()
	return startHTTPWith(t, nil, popts, hopts)
}

// startHTTPWith is startHTTP with server options.
func startHTTPWith(t *testing.T, sopts *mcp.Options, popts *mcptest.Options, hopts *mcp.HTTPOptions) *httpEnv {
	t.Helper()
	p := mcptest.New(popts)
	s := mcp.NewServer(p, sopts)
	p.SetServer(s)
	ts := httptest.NewServer(s.HTTPHandler(hopts))
	t.Cleanup(func() {
		s.Close()
		ts.Close()
	})
	path := "/mcp"
	if hopts != nil && hopts.Path != "" {
		path = hopts.Path
	}
	return &httpEnv{t: t, srv: s, prov: p, ts: ts, url: ts.URL + path}
}

// post sends body with headers (nil values delete a header).
func (e *httpEnv) post(body string, hdr map[string]string) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header[k] = []string{v} // keep the exact spelling
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("POST: %v", err)
	}
	return resp
}

func (e *httpEnv) do(method string, hdr map[string]string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(method, e.url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := e.ts.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return resp
}

// sseEvent is one event of an SSE body.
type sseEvent struct {
	id, event, data, retry string
	comment                bool
}

// readSSE reads every event until the body ends.
func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	rd := newSSEReader(r)
	for {
		ev, ok := rd.next()
		if !ok {
			return out
		}
		out = append(out, ev)
	}
}

type sseReader struct{ br *bufio.Reader }

func newSSEReader(r io.Reader) *sseReader { return &sseReader{br: bufio.NewReader(r)} }

// next returns the next event (comments are skipped).
func (s *sseReader) next() (sseEvent, bool) {
	var ev sseEvent
	seen := false
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return ev, false
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if seen {
				return ev, true
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		seen = true
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		switch k {
		case "id":
			ev.id = v
		case "event":
			ev.event = v
		case "data":
			ev.data += v
		case "retry":
			ev.retry = v
		}
	}
}

// messages decodes the JSON-RPC messages of a response body, JSON or SSE.
func messages(t *testing.T, resp *http.Response) []*msg {
	t.Helper()
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/event-stream") {
		var out []*msg
		for _, ev := range readSSE(t, resp.Body) {
			if ev.data == "" {
				continue
			}
			out = append(out, decodeLine(t, ev.data+"\n"))
		}
		return out
	}
	b, _ := io.ReadAll(resp.Body)
	if len(b) == 0 {
		return nil
	}
	if !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type %q for body %s", ct, b)
	}
	return []*msg{decodeLine(t, string(b)+"\n")}
}

// last returns the final message (the response) of a body.
func lastMsg(t *testing.T, resp *http.Response) *msg {
	t.Helper()
	ms := messages(t, resp)
	if len(ms) == 0 {
		t.Fatalf("status %d: empty body", resp.StatusCode)
	}
	return ms[len(ms)-1]
}

// modernHeaders are the standard 2026-07-28 request headers.
func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

// legacySession opens a legacy session and returns its headers.
func (e *httpEnv) legacySession(version string, caps map[string]any) map[string]string {
	e.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	resp := e.post(request(1, "initialize", map[string]any{
		"protocolVersion": version, "capabilities": caps, "clientInfo": map[string]any{"name": "t", "version": "1"},
	}), nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	m := lastMsg(e.t, resp)
	if resp.StatusCode != 200 || m.Error != nil || sid == "" {
		e.t.Fatalf("initialize: status %d, session %q, %s", resp.StatusCode, sid, m.raw)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
	r2 := e.post(notification("notifications/initialized", nil), h)
	r2.Body.Close()
	if r2.StatusCode != http.StatusAccepted {
		e.t.Fatalf("initialized: status %d", r2.StatusCode)
	}
	return h
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}
