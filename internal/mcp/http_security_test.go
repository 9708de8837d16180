package mcp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

func TestHTTPDNSRebinding(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example"}})
	port := e.ts.URL[strings.LastIndex(e.ts.URL, ":")+1:]
	initBody := request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}})
	discover := modernBody(1, "server/discover", nil, nil)
	tests := []struct {
		name   string
		body   string
		host   string
		origin string
		ok     bool
	}{
		{"evil host and origin", initBody, "evil.example.com", "http://evil.example.com", false},
		{"evil host, stateless", discover, "evil.example.com", "http://evil.example.com", false},
		{"evil origin only", initBody, "", "http://evil.example.com", false},
		{"origin with bad scheme", initBody, "", "file://localhost", false},
		{"localhost origin any port", initBody, "localhost:" + port, "http://localhost:" + port, true},
		{"127.0.0.1 origin", initBody, "127.0.0.1:" + port, "http://127.0.0.1:9999", true},
		{"ipv6 loopback origin", discover, "[::1]:" + port, "http://[::1]:" + port, true},
		{"configured origin", initBody, "", "https://app.example", true},
		{"no origin", discover, "", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(tt.body))
			req.Header.Set("Content-Type", "application/json")
			for k, v := range modernHeaders("server/discover", "") {
				req.Header.Set(k, v)
			}
			if strings.Contains(tt.body, "initialize") {
				req.Header.Set("MCP-Protocol-Version", "2025-11-25")
				req.Header.Set("Mcp-Method", "initialize")
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			resp, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			m := lastMsg(t, resp)
			if tt.ok {
				if resp.StatusCode != 200 || m.Error != nil {
					t.Fatalf("refused: %d %s", resp.StatusCode, m.raw)
				}
				if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
					// the follow-up initialized notification is accepted too
					r2 := e.post(notification("notifications/initialized", nil), map[string]string{"Mcp-Session-Id": sid, "Origin": tt.origin})
					r2.Body.Close()
					if r2.StatusCode != 202 {
						t.Fatalf("initialized: %d", r2.StatusCode)
					}
				}
				return
			}
			if resp.StatusCode != http.StatusForbidden || m.Error == nil {
				t.Fatalf("status %d %s, want 403 with a JSON-RPC error", resp.StatusCode, m.raw)
			}
		})
	}
}

func TestHTTPHostCheckNonLoopback(t *testing.T) {
	// Allowed hosts restrict; "*" opens.
	e := startHTTP(t, nil, &mcp.HTTPOptions{AllowedHosts: []string{"mcp.example"}})
	for host, want := range map[string]int{"mcp.example": 200, "mcp.example:8080": 200, "other.example": 403} {
		req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(modernBody(1, "server/discover", nil, nil)))
		for k, v := range modernHeaders("server/discover", "") {
			req.Header.Set(k, v)
		}
		req.Host = host
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("host %s: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

// countingReader counts the bytes the server pulled from a huge body.
type countingReader struct {
	n    atomic.Int64
	left int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	n := int64(len(p))
	if n > c.left {
		n = c.left
	}
	for i := range p[:n] {
		p[i] = ' '
	}
	c.left -= n
	c.n.Add(n)
	return int(n), nil
}

func TestHTTPBodyLimit(t *testing.T) {
	e := startHTTP(t, nil, nil)
	const size = 100 << 20
	for _, chunked := range []bool{false, true} {
		name := "content-length"
		if chunked {
			name = "chunked"
		}
		t.Run(name, func(t *testing.T) {
			body := &countingReader{left: size}
			req, _ := http.NewRequest(http.MethodPost, e.url, io.NopCloser(body))
			req.Header.Set("Content-Type", "application/json")
			if !chunked {
				req.ContentLength = size
			}
			resp, err := e.ts.Client().Do(req)
			if err != nil {
				// The server may close the connection before the client is done writing.
				var ne net.Error
				if !errors.As(err, &ne) && !strings.Contains(err.Error(), "connection") && !strings.Contains(err.Error(), "broken pipe") {
					t.Fatalf("POST: %v", err)
				}
			} else {
				defer resp.Body.Close()
				if resp.StatusCode != http.StatusRequestEntityTooLarge {
					t.Fatalf("status %d", resp.StatusCode)
				}
				m := lastMsg(t, resp)
				wantError(t, m, jsonrpc.CodeInvalidRequest)
			}
			if n := body.n.Load(); n >= size {
				t.Fatalf("server read all %d bytes", n)
			}
		})
	}
	// The server still serves.
	m := lastMsg(t, e.post(modernBody(1, "server/discover", nil, nil), modernHeaders("server/discover", "")))
	wantResult(t, m)
}

func TestHTTPMalformedInput(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := modernHeaders("tools/list", "")
	tests := []struct {
		name   string
		body   string
		ctype  string
		status int
		code   int
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, "", 400, jsonrpc.CodeParseError},
		{"binary", "\x00\xff\xfe\x01", "", 400, jsonrpc.CodeParseError},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"x\":\"\xc3\x28\"}}", "", 400, jsonrpc.CodeParseError},
		{"deep nesting", strings.Repeat("[", 100000), "", 400, jsonrpc.CodeParseError},
		{"empty", "", "", 400, jsonrpc.CodeParseError},
		{"not json-rpc", `{"hello":"world"}`, "", 400, jsonrpc.CodeInvalidRequest},
		{"id object", `{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "", 400, jsonrpc.CodeInvalidRequest},
		{"wrong content type", modernBody(1, "tools/list", nil, nil), "text/plain", 415, jsonrpc.CodeInvalidRequest},
		{"wrong param types", request(1, "tools/list", map[string]any{"_meta": modernMeta(nil), "cursor": 5}), "", 200, jsonrpc.CodeInvalidParams},
		{"huge id", `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/list","params":` + mustJSON(withMeta(nil, nil)) + `}`, "", 200, 0},
		{"unknown fields", `{"jsonrpc":"2.0","id":1,"method":"tools/list","zzz":[1],"params":` + mustJSON(withMeta(map[string]any{"extra": true}, nil)) + `}`, "", 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			hdr := map[string]string{}
			for k, v := range h {
				hdr[k] = v
			}
			if tt.ctype != "" {
				hdr["Content-Type"] = tt.ctype
			}
			resp := e.post(tt.body, hdr)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			m := lastMsg(t, resp)
			if tt.code == 0 {
				wantResult(t, m)
				if strings.Contains(tt.name, "huge") && string(m.ID) != "123456789012345678901234567890" {
					t.Errorf("id = %s", m.ID)
				}
				return
			}
			wantError(t, m, tt.code)
		})
	}
	e.t = t
	wantResult(t, lastMsg(t, e.post(modernBody(2, "tools/list", nil, nil), h)))
	r := e.do(http.MethodGet, map[string]string{})
	r.Body.Close()
	wrong, _ := http.Get(e.ts.URL + "/other")
	wrong.Body.Close()
	if wrong.StatusCode != 404 {
		t.Errorf("other path: %d", wrong.StatusCode)
	}
}

func TestRunHTTP(t *testing.T) {
	base := countGoroutines()
	p := mcptest.New(nil)
	s := mcp.NewServer(p, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.RunHTTP(ctx, ln, nil) }()
	url := "http://" + ln.Addr().String() + "/mcp"
	client := &http.Client{Transport: &http.Transport{}}
	post := func(body string, hdr map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	// An open GET stream and a listen stream must not hold shutdown up.
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Mcp-Session-Id", sid)
	gresp, err := client.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	lresp := post(modernBody("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil), modernHeaders("subscriptions/listen", ""))
	newSSEReader(lresp.Body).next()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunHTTP = %v", err)
	}
	io.Copy(io.Discard, gresp.Body)
	io.Copy(io.Discard, lresp.Body)
	gresp.Body.Close()
	lresp.Body.Close()
	client.CloseIdleConnections()
	s.Close()
	waitGoroutines(t, base)
}

// TestHTTPInflightBytes: the bytes of the bodies being served at once are
// bounded server-wide (MaxInflightBytes), taken before a body is read: a
// large request past the budget gets 503 with Retry-After unread, a small
// one that fits is served, and the bytes come back when a request ends.
// Before, any number of 4 MiB bodies (up to max_conns) were held at once.
func TestHTTPInflightBytes(t *testing.T) {
	const budget, big = 1 << 20, 700 << 10
	e := startHTTP(t, nil, &mcp.HTTPOptions{MaxInflightBytes: budget, ReadTimeout: 30 * time.Second})
	bigBody := modernBody(1, "server/discover", map[string]any{"pad": strings.Repeat("x", big)}, nil)

	// A request that declares a large body and stalls holds its bytes:
	// the server asks for the body (100 Continue) once it has taken them.
	c, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", len(bigBody))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("the stalled request got %q (%v), want 100 Continue", line, err)
	}
	fmt.Fprint(c, "{")

	// Another large one is refused unread.
	refused := e.post(bigBody, modernHeaders("server/discover", ""))
	if refused.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a large body past the in-flight budget: status %d, want 503", refused.StatusCode)
	}
	body, _ := io.ReadAll(refused.Body)
	refused.Body.Close()
	if refused.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "request bytes in flight") {
		t.Errorf("refusal: Retry-After %q, body %s", refused.Header.Get("Retry-After"), body)
	}
	// A small request fits beside the stalled one.
	if resp := e.post(modernBody(2, "server/discover", nil, nil), modernHeaders("server/discover", "")); resp.StatusCode != http.StatusOK {
		t.Errorf("a small request beside the stalled one: status %d", resp.StatusCode)
	} else {
		resp.Body.Close()
	}
	// The stalled request ends: its bytes come back.
	c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp := e.post(bigBody, modernHeaders("server/discover", ""))
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the budget was not given back: status %d", resp.StatusCode)
		}
	}
}

// TestHTTPFramingGuard: RunHTTP serves behind httpguard, and a request
// that carries both Content-Length and Transfer-Encoding (request
// smuggling behind a proxy, RFC 9112 §6.1) is answered with a JSON-RPC
// error, 400, and its connection closed.
func TestHTTPFramingGuard(t *testing.T) {
	e := startRun(t, nil, nil)
	body := modernBody(1, "server/discover", nil, nil)
	chunk := fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(body), body)
	var b strings.Builder
	b.WriteString("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n")
	for k, v := range modernHeaders("server/discover", "") {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%s", len(chunk), chunk)
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(wait))
	br := bufio.NewReader(c)
	io.WriteString(c, b.String())
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	m := decodeLine(t, string(got)+"\n")
	if resp.StatusCode != http.StatusBadRequest || !resp.Close || m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest ||
		!strings.Contains(m.Error.Message, "Transfer-Encoding") {
		t.Fatalf("status %d close=%v: %s", resp.StatusCode, resp.Close, got)
	}
	if rest, _ := readUntilClosed(t, c, 5*time.Second); len(rest) > 0 {
		t.Fatalf("the server answered more on the connection: %q", rest)
	}
}
