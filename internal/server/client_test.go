package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// testCacheDir is the compilation cache shared by the tests (scripts/test.sh
// points every package at one directory so each guest compiles once).
func testCacheDir(testing.TB) string { return testutil.CacheDir() }

// newTestServer builds a Server from a wasmcp.toml text; {{kitchen}} is
// replaced by the path of the kitchen test plugin.
func newTestServer(t testing.TB, toml string) *Server {
	t.Helper()
	return newTestServerWith(t, toml, Options{Version: "test"})
}

// newTestServerWith is newTestServer with opts (a logger, say).
func newTestServerWith(t testing.TB, toml string, opts Options) *Server {
	t.Helper()
	srv, err := buildServer(t, toml, "testdata", opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return srv
}

// buildServer builds a Server from a wasmcp.toml text whose relative paths
// are under dir, with the shared compilation cache, closed at the end of
// the test. A bad configuration fails the test; New's error is returned.
func buildServer(t testing.TB, toml, dir string, opts Options) (*Server, error) {
	t.Helper()
	cfg, err := config.Parse([]byte(toml), dir)
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.Server.CacheDir = testCacheDir(t)
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	srv, err := New(context.Background(), cfg, opts)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return srv, nil
}

// testLimits opens most test configs: an in-memory kv store, a 5 s
// deadline and 32 MiB of memory; it ends inside [limits].
const testLimits = `
[server]
name = "test"
kv_dir = ":memory:"
[limits]
timeout = "5s"
memory = "32MiB"
`

// kitchenConfig serves the kitchen plugin with kv, config and elicitation
// granted.
const kitchenConfig = testLimits + `max_output = "64KiB"
[[plugins]]
name = "kitchen"
path = "kitchen.wasm"
[plugins.grants]
kv = true
config = { greeting = "hi there" }
elicitation = true
`

// stdioClient speaks JSON-RPC over a server's stdio.
type stdioClient struct {
	t       testing.TB
	w       *io.PipeWriter
	wmu     sync.Mutex // serializes writes; never held with mu (a write blocks until the server reads)
	mu      sync.Mutex // guards nextID and pending
	nextID  int
	pending map[string]chan json.RawMessage
	notes   chan json.RawMessage
	// onRequest answers server-to-client requests; nil answers -32601.
	onRequest func(method string, params json.RawMessage) (any, error)
	done      chan error
}

func startStdio(t testing.TB, srv *Server) *stdioClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdioClient{t: t, w: inW, pending: map[string]chan json.RawMessage{}, notes: make(chan json.RawMessage, 1000), done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		c.done <- srv.ServeStdio(ctx, inR, outW)
		outW.Close()
	}()
	go c.read(outR)
	t.Cleanup(func() {
		inW.Close()
		testutil.AwaitReturn(t, c.done, 10*time.Second, "ServeStdio (stdin closed)")
		cancel()
	})
	return c
}

// startSession is startStdio with a 2025-11-25 session opened, declaring
// no client capabilities.
func startSession(t testing.TB, srv *Server) *stdioClient {
	t.Helper()
	c := startStdio(t, srv)
	c.initialize("2025-11-25", map[string]any{})
	return c
}

func (c *stdioClient) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := append([]byte(nil), sc.Bytes()...)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(line, &m); err != nil {
			c.t.Errorf("server wrote a non-JSON line: %q", line)
			continue
		}
		switch {
		case m.Method != "" && m.ID != nil:
			go c.answer(m.ID, m.Method, m.Params)
		case m.Method != "":
			c.notes <- line
		default:
			c.mu.Lock()
			ch := c.pending[string(m.ID)]
			delete(c.pending, string(m.ID))
			c.mu.Unlock()
			if ch == nil {
				c.t.Errorf("response to unknown id: %s", line)
				continue
			}
			ch <- line
		}
	}
}

func (c *stdioClient) answer(id json.RawMessage, method string, params json.RawMessage) {
	var msg any
	if c.onRequest == nil {
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32601, "message": "no handler"}}
	} else if res, err := c.onRequest(method, params); err != nil {
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -1, "message": err.Error()}}
	} else {
		msg = map[string]any{"jsonrpc": "2.0", "id": id, "result": res}
	}
	c.send(msg)
}

func (c *stdioClient) send(msg any) {
	b, err := json.Marshal(msg)
	if err != nil {
		c.t.Fatal(err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.w.Write(append(b, '\n'))
}

// response is a decoded JSON-RPC response.
type response struct {
	Result json.RawMessage    `json:"result"`
	Error  *testutil.RPCError `json:"error"`
}

// call sends a request and waits for its response.
func (c *stdioClient) call(method string, params any) response {
	c.t.Helper()
	r, err := c.tryCall(method, params, 30*time.Second)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// tryCall is call for worker goroutines: it returns an error instead of
// failing the test when no response comes within timeout.
func (c *stdioClient) tryCall(method string, params any, timeout time.Duration) (response, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	ch := make(chan json.RawMessage, 1)
	c.pending[strconv.Itoa(id)] = ch
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	select {
	case line := <-ch:
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			return r, fmt.Errorf("bad response %s: %w", line, err)
		}
		return r, nil
	case <-time.After(timeout):
		c.mu.Lock()
		delete(c.pending, strconv.Itoa(id))
		c.mu.Unlock()
		return response{}, fmt.Errorf("%s (id %d): no response in %v", method, id, timeout)
	}
}

func (c *stdioClient) notify(method string, params any) {
	c.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// initialize opens a legacy session.
func (c *stdioClient) initialize(version string, caps map[string]any) {
	c.t.Helper()
	r := c.call("initialize", map[string]any{"protocolVersion": version, "capabilities": caps,
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	if r.Error != nil {
		c.t.Fatalf("initialize: %+v", r.Error)
	}
	c.notify("notifications/initialized", map[string]any{})
}

// modernMeta is the _meta of a 2026-07-28 request.
func modernMeta(caps map[string]any) map[string]any {
	if caps == nil {
		caps = map[string]any{}
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
}

// toolResult decodes a CallToolResult.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	ResultType        string          `json:"resultType"`
	InputRequests     map[string]struct {
		Method string `json:"method"`
	} `json:"inputRequests"`
	RequestState string `json:"requestState"`
}

func decodeTool(t testing.TB, r response) toolResult {
	t.Helper()
	if r.Error != nil {
		t.Fatalf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	var tr toolResult
	if err := json.Unmarshal(r.Result, &tr); err != nil {
		t.Fatalf("bad tool result %s: %v", r.Result, err)
	}
	return tr
}

func (tr toolResult) text() string {
	s := ""
	for _, c := range tr.Content {
		s += c.Text
	}
	return s
}
