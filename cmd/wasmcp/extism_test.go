package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The Extism acceptance tests: a folder holding a hyper-mcp v1 plugin and
// a v2 plugin (both on github.com/extism/go-pdk), a C v1 plugin and a
// wasmcp/1 plugin is served by `wasmcp serve --plugins DIR`, over stdio on
// a legacy protocol version and over HTTP on 2026-07-28. The fixtures are
// built by testdata/extism/build.sh.

// rpcErr is a JSON-RPC error.
type rpcErr struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpcMsg is a JSON-RPC message a client reads: a response, a
// notification or a request of the server.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *rpcErr         `json:"error"`
}

// responseMessages splits an HTTP response body into its JSON-RPC
// messages: the data of each event of a text/event-stream, else the body.
func responseMessages(resp *http.Response, body []byte) [][]byte {
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{body}
	}
	var msgs [][]byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(d)) > 0 {
			msgs = append(msgs, bytes.TrimSpace(d))
		}
	}
	return msgs
}

// note is a notification the server sent.
type note struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// mcpClient is one way of talking to a server.
type mcpClient interface {
	// call sends one request and returns its result or error and the
	// notifications that arrived while it ran.
	call(method string, params map[string]any) (json.RawMessage, *rpcErr, []note)
}

// stdioClient is a legacy (2025-11-25) session over a server's stdio. It
// answers the server's elicitation/create and roots/list requests.
type stdioClient struct {
	t      *testing.T
	modern bool // 2026-07-28: no initialize, _meta on every request
	in     io.Writer
	sc     *bufio.Scanner
	id     int
	mu     sync.Mutex
	log    []string // server-to-client requests seen
}

func newStdioClient(t *testing.T, args ...string) *stdioClient {
	t.Helper()
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	_, stdout, stderr := startServe(t, pr, args...)
	go io.Copy(io.Discard, stderr)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	c := &stdioClient{t: t, in: pw, sc: sc}
	if _, e, _ := c.call("initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}},
		"clientInfo":   map[string]any{"name": "extism-test", "version": "1"}}); e != nil {
		t.Fatalf("initialize: %v", e)
	}
	c.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	if _, e, _ := c.call("logging/setLevel", map[string]any{"level": "debug"}); e != nil {
		t.Fatalf("logging/setLevel: %v", e)
	}
	return c
}

func (c *stdioClient) send(v any) {
	b, _ := json.Marshal(v)
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func (c *stdioClient) call(method string, params map[string]any) (json.RawMessage, *rpcErr, []note) {
	c.t.Helper()
	c.id++
	if c.modern {
		params = withModernMeta(params, map[string]any{})
	}
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	var notes []note
	for c.sc.Scan() {
		var m rpcMsg
		if err := json.Unmarshal(c.sc.Bytes(), &m); err != nil {
			c.t.Fatalf("stdout line is not JSON: %q", c.sc.Text())
		}
		switch {
		case m.Method != "" && m.ID == nil:
			notes = append(notes, note{m.Method, m.Params})
		case m.Method != "":
			c.mu.Lock()
			c.log = append(c.log, m.Method)
			c.mu.Unlock()
			var res any = map[string]any{}
			switch m.Method {
			case "elicitation/create":
				res = map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}
			case "roots/list":
				res = map[string]any{"roots": []any{map[string]any{"uri": "file:///work", "name": "work"}}}
			}
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		case string(m.ID) == fmt.Sprint(c.id):
			return m.Result, m.Error, notes
		}
	}
	c.t.Fatalf("server closed stdout: %v", c.sc.Err())
	return nil, nil, nil
}

// httpClient2026 sends 2026-07-28 requests, each standing alone, and reads
// JSON or SSE answers.
type httpClient2026 struct {
	t    *testing.T
	url  string
	caps map[string]any
	// session, when set, makes requests of that 2025-11-25 session
	// instead (no _meta).
	session string

	// The session's GET stream (openStream), where the notifications not
	// sent on a request's own stream arrive.
	streamMu sync.Mutex
	streamed []note
}

// openStream opens the session's GET event stream and collects its
// notifications until the test ends.
func (c *httpClient2026) openStream() {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	resp, err := httpClient.Do(req.WithContext(ctx))
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		c.t.Fatalf("GET stream: HTTP %d", resp.StatusCode)
	}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data:"))
			if !ok || len(bytes.TrimSpace(d)) == 0 {
				continue
			}
			var m struct {
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			if json.Unmarshal(bytes.TrimSpace(d), &m) == nil && m.Method != "" {
				c.streamMu.Lock()
				c.streamed = append(c.streamed, note{m.Method, m.Params})
				c.streamMu.Unlock()
			}
		}
	}()
}

// streamNotes returns the notifications the GET stream has brought so far.
func (c *httpClient2026) streamNotes() []note {
	c.streamMu.Lock()
	defer c.streamMu.Unlock()
	return slices.Clone(c.streamed)
}

// newHTTPSession initializes a 2025-11-25 session over HTTP.
func newHTTPSession(t *testing.T, url string) *httpClient2026 {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"extism-test","version":"1"}}}`
	req, _ := newPost(url, body)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	c := &httpClient2026{t: t, url: url, session: resp.Header.Get("Mcp-Session-Id")}
	if resp.StatusCode != 200 || c.session == "" {
		t.Fatalf("initialize: HTTP %d, session %q", resp.StatusCode, c.session)
	}
	req, _ = newPost(url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if resp, err = httpClient.Do(req); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return c
}

func (c *httpClient2026) call(method string, params map[string]any) (json.RawMessage, *rpcErr, []note) {
	c.t.Helper()
	p := params
	if c.session == "" {
		p = withModernMeta(params, c.caps)
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": p})
	req, _ := newPost(c.url, string(b))
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	if c.session != "" {
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", c.session)
	}
	req.Header.Set("Mcp-Method", method)
	switch method {
	case "tools/call", "prompts/get":
		req.Header.Set("Mcp-Name", p["name"].(string))
	case "resources/read":
		req.Header.Set("Mcp-Name", p["uri"].(string))
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var notes []note
	for _, d := range responseMessages(resp, body) {
		var m rpcMsg
		if err := json.Unmarshal(d, &m); err != nil {
			c.t.Fatalf("HTTP %d: not JSON: %s", resp.StatusCode, d)
		}
		if m.Method != "" {
			notes = append(notes, note{m.Method, m.Params})
			continue
		}
		return m.Result, m.Error, notes
	}
	c.t.Fatalf("HTTP %d without a response: %s", resp.StatusCode, body)
	return nil, nil, nil
}

// withModernMeta returns params with the _meta of a 2026-07-28 request
// (keeping a _meta it has, e.g. a progressToken).
func withModernMeta(params map[string]any, caps map[string]any) map[string]any {
	p := map[string]any{}
	for k, v := range params {
		p[k] = v
	}
	meta := map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": caps}
	if m, ok := p["_meta"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	p["_meta"] = meta
	return p
}

func extismFixture(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("../../testdata/extism", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// extismDir is a plugin folder with the Extism fixtures and a wasmcp/1
// plugin.
func extismDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for dst, src := range map[string]string{
		"v1.wasm":     extismFixture(t, "go_v1.wasm"),
		"v2.wasm":     extismFixture(t, "go_v2.wasm"),
		"c.wasm":      extismFixture(t, "cplugin.wasm"),
		"c-hash.wasm": filepath.Join("../../examples/c-hash/c-hash.wasm"),
	} {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, dst), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// writeConfig writes a wasmcp.toml with short limits plus extra.
func writeConfig(t *testing.T, extra string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "wasmcp.toml")
	doc := "[server]\nkv_dir = \":memory:\"\n[limits]\ntimeout = \"2s\"\nmemory = \"48MiB\"\n" + extra
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func resultText(t *testing.T, res json.RawMessage) (string, bool) {
	t.Helper()
	var r struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 || r.Content[0].Type != "text" {
		t.Fatalf("not a text tool result: %s", res)
	}
	return r.Content[0].Text, r.IsError
}

// checkExtismServe runs the acceptance checks that hold on every
// transport and protocol version.
func checkExtismServe(t *testing.T, c mcpClient) {
	var hits atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer site.Close()
	tool := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		res, e, _ := c.call("tools/call", map[string]any{"name": name, "arguments": args})
		if e != nil {
			t.Fatalf("tools/call %s: %v", name, e)
		}
		return resultText(t, res)
	}
	t.Run("tools/list", func(t *testing.T) {
		res, e, _ := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		for _, n := range []string{`"greet"`, `"add"`, `"upper"`, `"sha256"`, `"outputSchema"`} {
			if !bytes.Contains(res, []byte(n)) {
				t.Errorf("tools/list lacks %s: %s", n, res)
			}
		}
	})
	t.Run("v1 text", func(t *testing.T) {
		if got, isErr := tool("greet", map[string]any{"name": "Ann"}); got != "Hello, Ann!" || isErr {
			t.Fatalf("greet = %q %v", got, isErr)
		}
	})
	t.Run("C v1", func(t *testing.T) {
		if got, isErr := tool("upper", map[string]any{"text": "shout it"}); got != "SHOUT IT" || isErr {
			t.Fatalf("upper = %q %v", got, isErr)
		}
	})
	t.Run("v2 structuredContent", func(t *testing.T) {
		res, e, _ := c.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3.5}})
		if e != nil || !bytes.Contains(res, []byte(`"structuredContent":{"sum":5.5}`)) {
			t.Fatalf("add = %s %v", res, e)
		}
	})
	t.Run("v2 error is an isError result", func(t *testing.T) {
		if got, isErr := tool("fail", nil); !isErr || got != "fail tool failed on purpose" {
			t.Fatalf("fail = %q %v", got, isErr)
		}
	})
	t.Run("v2 arguments validated by the schema", func(t *testing.T) {
		res, e, _ := c.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": "x"}})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); !isErr || !strings.Contains(got, "invalid arguments") {
			t.Fatalf("bad arguments = %q %v", got, isErr)
		}
	})
	t.Run("prompts", func(t *testing.T) {
		res, e, _ := c.call("prompts/list", map[string]any{})
		if e != nil || !bytes.Contains(res, []byte(`"greeting"`)) {
			t.Fatalf("prompts/list = %s %v", res, e)
		}
		res, e, _ = c.call("prompts/get", map[string]any{"name": "greeting", "arguments": map[string]any{"name": "Bo"}})
		if e != nil || !bytes.Contains(res, []byte(`Say hello to Bo`)) {
			t.Fatalf("prompts/get = %s %v", res, e)
		}
	})
	t.Run("completion", func(t *testing.T) {
		res, e, _ := c.call("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greeting"},
			"argument": map[string]any{"name": "name", "value": "al"}})
		if e != nil || !bytes.Contains(res, []byte(`"values":["alice","albert"]`)) {
			t.Fatalf("completion = %s %v", res, e)
		}
	})
	t.Run("resources", func(t *testing.T) {
		res, e, _ := c.call("resources/templates/list", map[string]any{})
		if e != nil || !bytes.Contains(res, []byte(`"extism://items/{id}"`)) || !bytes.Contains(res, []byte(`hash://sha256/{text}`)) {
			t.Fatalf("resources/templates/list = %s %v", res, e)
		}
		res, e, _ = c.call("resources/read", map[string]any{"uri": "extism://items/42"})
		if e != nil || !bytes.Contains(res, []byte(`"text":"item 42"`)) {
			t.Fatalf("resources/read template = %s %v", res, e)
		}
		res, e, _ = c.call("resources/read", map[string]any{"uri": "extism://readme"})
		if e != nil || !bytes.Contains(res, []byte(`"text":"read me"`)) {
			t.Fatalf("resources/read = %s %v", res, e)
		}
	})
	t.Run("progress notifications", func(t *testing.T) {
		res, e, notes := c.call("tools/call", map[string]any{"name": "progress", "arguments": map[string]any{}, "_meta": map[string]any{"progressToken": "tok-1"}})
		if e != nil {
			t.Fatal(e)
		}
		if got, _ := resultText(t, res); got != "done" {
			t.Fatalf("progress = %q", got)
		}
		var progress int
		for _, n := range notes {
			if n.Method == "notifications/progress" && bytes.Contains(n.Params, []byte(`"progressToken":"tok-1"`)) {
				progress++
			}
		}
		if progress != 2 {
			t.Fatalf("%d progress notifications, want 2: %v", progress, notes)
		}
	})
	t.Run("runaway stopped at its deadline", func(t *testing.T) {
		start := time.Now()
		_, e, _ := c.call("tools/call", map[string]any{"name": "spin", "arguments": map[string]any{}})
		if e == nil || e.Code != -32001 {
			t.Fatalf("spin = %v, want -32001", e)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Fatalf("spin answered after %v with a 2s deadline", d)
		}
	})
	t.Run("memory hog stopped at its limit", func(t *testing.T) {
		got, isErr := tool("hog", nil)
		if !isErr || !strings.Contains(got, "out of memory (limit 48 MiB)") {
			t.Fatalf("hog = %q %v", got, isErr)
		}
	})
	t.Run("trap costs one call", func(t *testing.T) {
		got, isErr := tool("crash", nil)
		if !isErr || !strings.Contains(got, "crash tool called") {
			t.Fatalf("crash = %q %v", got, isErr)
		}
	})
	t.Run("ungranted http_request refused", func(t *testing.T) {
		got, isErr := tool("fetch", map[string]any{"url": site.URL + "/"})
		if !isErr || !strings.Contains(got, "not granted") {
			t.Fatalf("fetch = %q %v", got, isErr)
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("the refused request reached the site %d times", n)
		}
	})
	t.Run("others keep answering", func(t *testing.T) {
		if got, isErr := tool("greet", map[string]any{"name": "again"}); got != "Hello, again!" || isErr {
			t.Fatalf("greet after failures = %q %v", got, isErr)
		}
		res, e, _ := c.call("tools/call", map[string]any{"name": "sha256", "arguments": map[string]any{"text": "abc"}})
		if e != nil || !bytes.Contains(res, []byte("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")) {
			t.Fatalf("sha256 = %s %v", res, e)
		}
	})
}

// TestExtismServeStdio: the folder over stdio on 2025-11-25, with the
// notifications that need a session (logging, list_changed).
func TestExtismServeStdio(t *testing.T) {
	c := newStdioClient(t, "--config", writeConfig(t, ""), "--plugins", extismDir(t))
	checkExtismServe(t, c)
	checkSessionNotes(t, c, nil)
}

// checkSessionNotes: the notifications that need a legacy session, logging
// and list_changed, reach the client (on a request's stream, the stdio
// channel, or the session's GET stream, which extra returns).
func checkSessionNotes(t *testing.T, c mcpClient, extra func() []note) {
	// waitFor polls with pings until a notification satisfying ok came.
	waitFor := func(notes []note, ok func(note) bool) bool {
		for i := 0; ; i++ {
			all := notes
			if extra != nil {
				all = append(slices.Clone(notes), extra()...)
			}
			for _, n := range all {
				if ok(n) {
					return true
				}
			}
			if i == 50 {
				return false
			}
			_, _, more := c.call("ping", map[string]any{})
			notes = append(notes, more...)
			time.Sleep(20 * time.Millisecond)
		}
	}
	t.Run("logging notification", func(t *testing.T) {
		if _, e, _ := c.call("logging/setLevel", map[string]any{"level": "info"}); e != nil {
			t.Fatal(e)
		}
		_, e, notes := c.call("tools/call", map[string]any{"name": "progress", "arguments": map[string]any{}})
		if e != nil {
			t.Fatal(e)
		}
		if !waitFor(notes, func(n note) bool {
			return n.Method == "notifications/message" && bytes.Contains(n.Params, []byte(`"careful"`)) && bytes.Contains(n.Params, []byte(`"warning"`))
		}) {
			t.Fatalf("no warning log notification: %v", notes)
		}
	})
	t.Run("list_changed notification", func(t *testing.T) {
		_, e, notes := c.call("tools/call", map[string]any{"name": "changed", "arguments": map[string]any{}})
		if e != nil {
			t.Fatal(e)
		}
		// The plugin is described again from another goroutine: the
		// notification may follow the result.
		if !waitFor(notes, func(n note) bool { return n.Method == "notifications/tools/list_changed" }) {
			t.Fatalf("no tools/list_changed: %v", notes)
		}
	})
}

// TestExtismServeStdio2026: the same folder over stdio on 2026-07-28
// (no session: every request carries its _meta).
func TestExtismServeStdio2026(t *testing.T) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { pw.Close() })
	_, stdout, stderr := startServe(t, pr, "--config", writeConfig(t, ""), "--plugins", extismDir(t))
	go io.Copy(io.Discard, stderr)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	checkExtismServe(t, &stdioClient{t: t, in: pw, sc: sc, modern: true})
}

// TestExtismServeHTTP: the same folder over HTTP on 2026-07-28.
func TestExtismServeHTTP(t *testing.T) {
	_, _, stderr := startServe(t, nil, "--config", writeConfig(t, ""), "--plugins", extismDir(t), "--http", "127.0.0.1:0")
	checkExtismServe(t, &httpClient2026{t: t, url: servedURL(t, stderr), caps: map[string]any{}})
}

// TestExtismServeHTTPSession: the same folder over HTTP in a 2025-11-25
// session, with the notifications that need a session.
func TestExtismServeHTTPSession(t *testing.T) {
	_, _, stderr := startServe(t, nil, "--config", writeConfig(t, ""), "--plugins", extismDir(t), "--http", "127.0.0.1:0")
	c := newHTTPSession(t, servedURL(t, stderr))
	checkExtismServe(t, c)
	c.openStream()
	checkSessionNotes(t, c, c.streamNotes)
}

// TestExtismGrants: a prefix, config, http (to a granted loopback server) and the
// blocking client requests, granted in [[plugins]] entries, on both eras:
// blocking on a legacy session, input_required replayed on 2026-07-28.
func TestExtismGrants(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Site", "yes")
		fmt.Fprint(w, "hello from the site")
	}))
	defer site.Close()
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "note.txt"), []byte("mounted"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`[[plugins]]
name = "v1"
path = %q
prefix = "ex_"
[plugins.grants]
http = [%q]
config = { greeting = "hi there" }
fs = [{ host = %q, guest = "/data", mode = "ro" }]
[[plugins]]
name = "v2"
path = %q
[plugins.grants]
elicitation = true
roots = true
`, extismFixture(t, "go_v1.wasm"), site.URL+"/", data, extismFixture(t, "go_v2.wasm")))

	t.Run("legacy stdio", func(t *testing.T) {
		c := newStdioClient(t, "--config", cfg)
		tool := func(name string, args map[string]any) string {
			t.Helper()
			res, e, _ := c.call("tools/call", map[string]any{"name": name, "arguments": args})
			if e != nil {
				t.Fatalf("%s: %v", name, e)
			}
			got, _ := resultText(t, res)
			return got
		}
		if got := tool("ex_config", map[string]any{"key": "greeting"}); got != "hi there" {
			t.Errorf("config greeting = %q", got)
		}
		if got := tool("ex_config", map[string]any{"key": "secret"}); got != "unset" {
			t.Errorf("ungranted config key = %q", got)
		}
		if got := tool("ex_fetch", map[string]any{"url": site.URL + "/page"}); got != "status 200: hello from the site" {
			t.Errorf("granted fetch = %q", got)
		}
		if got := tool("ex_read", map[string]any{"path": "/data/note.txt"}); got != "mounted" {
			t.Errorf("read from the fs mount = %q", got)
		}
		if got := tool("ex_read", map[string]any{"path": "/etc/passwd"}); !strings.HasPrefix(got, "error: ") {
			t.Errorf("read outside the mounts = %q", got)
		}
		if got := tool("ask", nil); got != "accept blue" {
			t.Errorf("ask = %q", got)
		}
		if got := tool("roots", nil); !strings.Contains(got, "file:///work") {
			t.Errorf("roots = %q", got)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if strings.Join(c.log, ",") != "elicitation/create,roots/list" {
			t.Errorf("server-to-client requests = %v", c.log)
		}
	})

	t.Run("2026-07-28 input_required", func(t *testing.T) {
		_, _, stderr := startServe(t, nil, "--config", cfg, "--http", "127.0.0.1:0")
		c := &httpClient2026{t: t, url: servedURL(t, stderr), caps: map[string]any{"elicitation": map[string]any{}}}
		res, e, _ := c.call("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
		if e != nil {
			t.Fatal(e)
		}
		var ir struct {
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
			RequestState  string                     `json:"requestState"`
		}
		if err := json.Unmarshal(res, &ir); err != nil || ir.ResultType != "input_required" || len(ir.InputRequests) != 1 || ir.RequestState == "" {
			t.Fatalf("ask = %s", res)
		}
		var key string
		for k, v := range ir.InputRequests {
			key = k
			if !bytes.Contains(v, []byte(`"elicitation/create"`)) || !bytes.Contains(v, []byte(`Pick a color`)) {
				t.Fatalf("input request %s = %s", k, v)
			}
		}
		res, e, _ = c.call("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{},
			"inputResponses": map[string]any{key: map[string]any{"action": "accept", "content": map[string]any{"color": "red"}}},
			"requestState":   ir.RequestState})
		if e != nil {
			t.Fatal(e)
		}
		if got, _ := resultText(t, res); got != "accept red" {
			t.Fatalf("ask after the answer = %q", got)
		}
		// A client that cannot elicit: the plugin's request is refused in
		// the guest, which answers for itself.
		noCaps := &httpClient2026{t: t, url: c.url, caps: map[string]any{}}
		res, e, _ = noCaps.call("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}})
		if e != nil {
			t.Fatal(e)
		}
		if got, isErr := resultText(t, res); !isErr || got != "elicitation refused" {
			t.Fatalf("ask without the capability = %q %v", got, isErr)
		}
		// A tampered requestState is refused.
		_, e, _ = c.call("tools/call", map[string]any{"name": "ask", "arguments": map[string]any{},
			"inputResponses": map[string]any{key: map[string]any{"action": "accept"}}, "requestState": ir.RequestState + "x"})
		if e == nil {
			t.Fatal("tampered requestState accepted")
		}
	})
}

// TestExtismInspect: `wasmcp inspect` names the ABI and interface found.
func TestExtismInspect(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"testdata/extism/go_v1.wasm", "mode     extism, abi extism/v1"},
		{"testdata/extism/go_v2.wasm", "mode     extism, abi extism/v2"},
		{"examples/c-hash/c-hash.wasm", "mode     reactor, abi wasmcp/1"},
	} {
		stdout, stderr, code := wasmcp(t, "", "inspect", tc.file)
		if code != 0 || !strings.Contains(stdout, tc.want) {
			t.Errorf("inspect %s: exit %d, want %q in\n%s%s", tc.file, code, tc.want, stdout, stderr)
		}
	}
}

// TestComponentInspect: `wasmcp inspect` on a component says so, prints
// its WIT world and the tools it maps to, with --json too.
func TestComponentInspect(t *testing.T) {
	stdout, stderr, code := wasmcp(t, "", "inspect", "testdata/components/rust-shapes.wasm")
	for _, want := range []string{
		"component rust-shapes.wasm\n",
		"mode      component (WASI 0.2)",
		"  reverse                      Reverses a string, character by character.\n",
		"  wasmcp_rust-shapes_shapes_0_1_0_area ",
		"  world component {\n",
		"    export reverse: func(s: string) -> string;\n",
		"    import wasi:filesystem/preopens@0.2.12: interface {\n",
	} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("inspect: exit %d, want %q in\n%s%s", code, want, stdout, stderr)
		}
	}
	// With a configuration whose entry for the file has a policy.yaml:
	// the grants it gives, beside the WASI interfaces that use them.
	dir := t.TempDir()
	abs, err := filepath.Abs("../../testdata/components/rust-shapes.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "wasmcp.toml")
	if err := os.WriteFile(cfg, []byte("[[plugins]]\nname = \"shapes\"\npath = \""+abs+"\"\npolicy = \"p.yaml\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	policy := "version: \"1.0\"\npermissions:\n  storage:\n    allow:\n      - uri: \"fs://" + dir + "/**\"\n        access: [read]\n"
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code = wasmcp(t, "", "inspect", "--config", cfg, "testdata/components/rust-shapes.wasm")
	if want := "  fs           wasi:filesystem/preopens@0.2.12 | " + dir + " (ro)\n"; code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("inspect with a policy: exit %d, want %q in\n%s%s", code, want, stdout, stderr)
	}

	stdout, stderr, code = wasmcp(t, "", "inspect", "--json", "testdata/components/c-text.wasm")
	var rep struct {
		Mode  string `json:"mode"`
		WIT   string `json:"wit"`
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil {
		t.Fatalf("inspect --json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	if rep.Mode != "component" || len(rep.Tools) != 5 || rep.Tools[0].Name != "greet" || !strings.Contains(rep.WIT, "export add: func(a: s32, b: s32) -> s32;") {
		t.Errorf("report %+v", rep)
	}
}
