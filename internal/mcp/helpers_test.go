package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// wait is the guard against a hung test; no assertion depends on timing.
const wait = 20 * time.Second

// msg is one decoded message seen by a test client.
type msg struct {
	JSONRPC string             `json:"jsonrpc"`
	ID      json.RawMessage    `json:"id,omitempty"`
	Method  string             `json:"method,omitempty"`
	Params  json.RawMessage    `json:"params,omitempty"`
	Result  json.RawMessage    `json:"result,omitempty"`
	Error   *testutil.RPCError `json:"error,omitempty"`
	raw     string
}

func (m *msg) isResponse() bool { return m.Method == "" }

// stdioClient drives ServeStdio over real pipes, as a client process would.
type stdioClient struct {
	t      *testing.T
	srv    *mcp.Server
	prov   *mcptest.Provider
	in     *io.PipeWriter
	lines  chan string
	done   chan error
	cancel context.CancelFunc
	queue  []*msg // received, not yet consumed
}

func startStdio(t *testing.T, popts *mcptest.Options, opts *mcp.Options) *stdioClient {
	t.Helper()
	p := mcptest.New(popts)
	s := mcp.NewServer(p, opts)
	p.SetServer(s)
	cr, cw := io.Pipe() // client -> server
	sr, sw := io.Pipe() // server -> client
	ctx, cancel := context.WithCancel(context.Background())
	c := &stdioClient{t: t, srv: s, prov: p, in: cw, lines: make(chan string, 1024), done: make(chan error, 1), cancel: cancel}
	go func() {
		err := s.ServeStdio(ctx, cr, sw)
		sw.Close()
		c.done <- err
	}()
	go func() {
		br := bufio.NewReaderSize(sr, 1<<16)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				c.lines <- line
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	t.Cleanup(func() {
		cw.Close()
		cancel()
		testutil.AwaitReturn(t, c.done, wait, "ServeStdio")
		s.Close()
	})
	return c
}

// startLegacy is startStdio with the defaults and a 2025-11-25 session
// opened, declaring no client capabilities.
func startLegacy(t *testing.T) *stdioClient {
	t.Helper()
	c := startStdio(t, nil, nil)
	c.initialize("2025-11-25", nil)
	return c
}

func (c *stdioClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// next returns the next message the server wrote, checking the framing.
func (c *stdioClient) next() *msg {
	c.t.Helper()
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m
	}
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("server closed its output")
		}
		return decodeLine(c.t, line)
	case <-time.After(wait):
		c.t.Fatal("no message from the server")
	}
	return nil
}

func decodeLine(t *testing.T, line string) *msg {
	t.Helper()
	if !strings.HasSuffix(line, "\n") || strings.Count(line, "\n") != 1 {
		t.Fatalf("bad framing: %q", line)
	}
	var m msg
	if strings.HasPrefix(line, "[") {
		if !json.Valid([]byte(line)) {
			t.Fatalf("server wrote invalid JSON %q", line)
		}
		m.raw = strings.TrimSuffix(line, "\n")
		m.Method = "(batch)"
		return &m
	}
	dec := json.NewDecoder(strings.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("server wrote invalid JSON-RPC %q: %v", line, err)
	}
	if m.JSONRPC != "2.0" {
		t.Fatalf("missing jsonrpc member: %q", line)
	}
	m.raw = strings.TrimSuffix(line, "\n")
	return &m
}

// rpc sends a request and returns its response plus the messages that came
// before it.
func (c *stdioClient) rpc(id any, method string, params any) (*msg, []*msg) {
	c.t.Helper()
	c.send(request(id, method, params))
	return c.await(id)
}

// await reads until the response to id, returning it and what came before
// (other responses stay queued).
func (c *stdioClient) await(id any) (*msg, []*msg) {
	c.t.Helper()
	want, _ := json.Marshal(id)
	var before, other []*msg
	for {
		m := c.next()
		if m.isResponse() {
			if string(m.ID) == string(want) {
				c.queue = append(other, c.queue...)
				return m, before
			}
			other = append(other, m)
			continue
		}
		before = append(before, m)
	}
}

// noMessage checks nothing more arrives before the answer to a ping.
func (c *stdioClient) pingBarrier(id any) []*msg {
	c.t.Helper()
	_, before := c.rpc(id, "ping", nil)
	return before
}

func request(id any, method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func notification(method string, params any) string {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// initialize runs the legacy handshake with version and client capabilities.
func (c *stdioClient) initialize(version string, caps map[string]any) *msg {
	c.t.Helper()
	if caps == nil {
		caps = map[string]any{}
	}
	res, _ := c.rpc("init", "initialize", map[string]any{
		"protocolVersion": version, "capabilities": caps,
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	})
	if res.Error != nil {
		c.t.Fatalf("initialize: %s", res.Error.Message)
	}
	c.send(notification("notifications/initialized", nil))
	return res
}

// modernMeta is the _meta of a 2026-07-28 request.
func modernMeta(extra map[string]any) map[string]any {
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

// metaWithout is modernMeta(nil) without key.
func metaWithout(key string) map[string]any {
	m := modernMeta(nil)
	delete(m, key)
	return m
}

// slowCall opens a 2025-11-25 stdio session on a server with opts and
// sends a call of the provider's slow tool with request id id; it returns
// once the call runs, with the channel the provider reports its end on.
func slowCall(t *testing.T, opts *mcp.Options, id any) (c *stdioClient, stopped chan string) {
	t.Helper()
	c = startStdio(t, nil, opts)
	started := make(chan string, 4)
	stopped = make(chan string, 4)
	c.prov.Started, c.prov.Stopped = started, stopped
	c.initialize("2025-11-25", nil)
	c.send(request(id, "tools/call", map[string]any{"name": "slow"}))
	<-started
	return c, stopped
}

// withMeta returns params plus a modern _meta.
func withMeta(params map[string]any, extra map[string]any) map[string]any {
	out := map[string]any{"_meta": modernMeta(extra)}
	for k, v := range params {
		out[k] = v
	}
	return out
}

func field(t *testing.T, raw json.RawMessage, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("unmarshal %s: %v", raw, err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func wantError(t *testing.T, m *msg, code int) {
	t.Helper()
	if m.Error == nil {
		t.Fatalf("got result %s, want error %d", m.Result, code)
	}
	if m.Error.Code != code {
		t.Fatalf("error code %d (%s), want %d", m.Error.Code, m.Error.Message, code)
	}
}

func wantResult(t *testing.T, m *msg) {
	t.Helper()
	if m.Error != nil {
		t.Fatalf("error %d: %s", m.Error.Code, m.Error.Message)
	}
}

func textOf(t *testing.T, res json.RawMessage) string {
	t.Helper()
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("no text content in %s", res)
	}
	return r.Content[0].Text
}

// waitGoroutines polls until the goroutine count is back to base.
func waitGoroutines(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		n := runtime.NumGoroutine()
		if n <= base {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("%d goroutines, want <= %d\n%s", n, base, buf)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return string(b)
}

// countGoroutines settles and counts goroutines, for leak checks.
func countGoroutines() int {
	runtime.GC()
	return runtime.NumGoroutine()
}
