package telemetry_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/server"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

func hostile(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "hostile", name+".wasm"))
	return p
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

// web is a loopback web server the fetch plugin reaches as public.test
// (the test resolver and dialer send it there); it records the
// traceparent header of each request.
type web struct {
	srv  *httptest.Server
	port string
	mu   sync.Mutex
	seen []string
}

func newWeb(t *testing.T) *web {
	w := &web{}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.seen = append(w.seen, r.Header.Get("traceparent"))
		w.mu.Unlock()
		_, _ = io.WriteString(rw, "hello from the web")
	}))
	t.Cleanup(w.srv.Close)
	_, w.port, _ = net.SplitHostPort(w.srv.Listener.Addr().String())
	return w
}

func (w *web) traceparents() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

type resolver map[string][]netip.Addr

func (r resolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var publicIP = netip.MustParseAddr("93.184.216.34")

func policy() hostapi.HTTPPolicy {
	return hostapi.HTTPPolicy{
		Timeout:  5 * time.Second,
		Resolver: resolver{"public.test": {publicIP}},
		DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(address)
			if host != publicIP.String() {
				return nil, fmt.Errorf("test dialer: refusing %s", address)
			}
			var d net.Dialer
			return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
		},
	}
}

// testConfig serves good (echo), runaway (spin: a timeout) and fetch
// (granted public.test only); extra is appended to [telemetry].
func testConfig(w *web, extra string) string {
	return `
[server]
kv_dir = ":memory:"
[telemetry]
` + extra + `
[[plugins]]
name = "good"
path = ` + quote(hostile("good")) + `
[plugins.grants]
kv = true
[[plugins]]
name = "runaway"
path = ` + quote(hostile("runaway")) + `
timeout = "300ms"
[[plugins]]
name = "fetch"
path = ` + quote(hostile("fetch")) + `
[plugins.grants]
http = ["http://public.test:` + w.port + `/"]
`
}

func newServer(t *testing.T, toml string) (*server.Server, *testutil.Buffer) {
	t.Helper()
	cfg, err := config.Parse([]byte(toml), ".")
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.Server.CacheDir = os.Getenv("WASMCP_TEST_CACHE")
	if cfg.Server.CacheDir == "" {
		cfg.Server.CacheDir = filepath.Join(os.TempDir(), "wasmcp-test-cache")
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &testutil.Buffer{}
	srv, err := server.New(context.Background(), cfg, server.Options{Version: "test", HTTP: policy(),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })
	return srv, logs
}

// stdio is a minimal MCP client on a server's stdio transport.
type stdio struct {
	t    *testing.T
	w    io.WriteCloser
	mu   sync.Mutex
	wait map[string]chan json.RawMessage
	next int
	done chan struct{}
	// notes receives the method of each notification from the server
	// (dropped when full).
	notes chan string
}

func startStdio(t *testing.T, srv *server.Server) *stdio {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &stdio{t: t, w: inW, wait: map[string]chan json.RawMessage{}, done: make(chan struct{}), notes: make(chan string, 64)}
	go func() {
		_ = srv.ServeStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	go func() {
		defer close(c.done)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			line := append([]byte(nil), sc.Bytes()...)
			if json.Unmarshal(line, &m) != nil {
				continue
			}
			if m.ID == nil {
				select {
				case c.notes <- m.Method:
				default:
				}
				continue
			}
			c.mu.Lock()
			ch := c.wait[string(m.ID)]
			c.mu.Unlock()
			if ch != nil {
				ch <- line
			}
		}
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Error("stdio did not end")
		}
	})
	return c
}

// call sends a request and returns the whole response message.
func (c *stdio) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := fmt.Sprint(c.next)
	ch := make(chan json.RawMessage, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
	select {
	case m := <-ch:
		return m
	case <-time.After(20 * time.Second):
		c.t.Fatalf("no response to %s", method)
		return nil
	}
}

// note waits for a notification of method.
func (c *stdio) note(method string) {
	c.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m := <-c.notes:
			if m == method {
				return
			}
		case <-timeout:
			c.t.Fatalf("no %s", method)
		}
	}
}

func (c *stdio) initialize() {
	c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}})
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	_, _ = c.w.Write(append(b, '\n'))
}

// echoOnce serves one echo call on a server of the test config and closes
// it, which flushes its telemetry to the exporters the environment names.
func echoOnce(t *testing.T) {
	t.Helper()
	srv, _ := newServer(t, testConfig(newWeb(t), ""))
	c := startStdio(t, srv)
	c.initialize()
	c.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))
	if err := srv.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func tool(name string, args map[string]any, meta map[string]any) map[string]any {
	p := map[string]any{"name": name, "arguments": args}
	if meta != nil {
		p["_meta"] = meta
	}
	return p
}

// text returns the first text block of a tools/call response.
func text(t *testing.T, resp json.RawMessage) string {
	t.Helper()
	var m struct {
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(resp, &m); err != nil {
		t.Fatal(err)
	}
	if m.Error != nil {
		return "error " + string(m.Error)
	}
	if len(m.Result.Content) == 0 {
		return ""
	}
	return m.Result.Content[0].Text
}

// modernPost sends one 2026-07-28 tools/call over HTTP with the given
// extra headers and returns the response body.
func modernPost(t *testing.T, url, name string, args map[string]any, hdr map[string]string) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": map[string]any{
		"name": name, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	req, err := http.NewRequest("POST", url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("POST: %d %s", resp.StatusCode, out)
	}
	return string(out)
}

// scrape fetches url and returns the value of the sample name whose
// labels include every one of labels (`k="v"`), summed over matches; found
// is false when none matches.
func scrape(t *testing.T, body, name string, labels ...string) (sum float64, found bool) {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, name) || strings.HasPrefix(line, "#") {
			continue
		}
		rest := line[len(name):]
		var lbl string
		if strings.HasPrefix(rest, "{") {
			end := strings.Index(rest, "}")
			lbl, rest = rest[1:end], rest[end+1:]
		} else if !strings.HasPrefix(rest, " ") {
			continue // a longer name
		}
		ok := true
		for _, l := range labels {
			if !strings.Contains(","+lbl+",", ","+l+",") {
				ok = false
			}
		}
		if !ok {
			continue
		}
		var v float64
		if _, err := fmt.Sscan(strings.TrimSpace(rest), &v); err != nil {
			t.Fatalf("sample %q: %v", line, err)
		}
		sum += v
		found = true
	}
	return sum, found
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}

func serveMetrics(t *testing.T, srv *server.Server) string {
	ts := httptest.NewServer(srv.MetricsHandler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func serveHTTP(t *testing.T, srv *server.Server) string {
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

// noOTEL clears the OTEL_* variables for the test.
func noOTEL(t *testing.T) {
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
		}
	}
}
