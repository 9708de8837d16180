package server

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/schema"
)

// auditPolicy permits everything but the kitchen tool "fail" and
// completions.
const auditPolicy = `
permit (principal, action, resource);
@id("no-fail")
forbid (principal, action == Action::"call_tool", resource == Tool::"fail");
@id("no-complete")
forbid (principal, action == Action::"complete", resource);
`

// auditConfig serves kitchen (no grants: its counter tool is refused kv)
// and ping, with the audit trail in file and extra appended to [audit].
func auditConfig(t *testing.T, file, extra string) string {
	policy := writePolicy(t, t.TempDir(), auditPolicy)
	return testLimits + fmt.Sprintf(`
[authz]
policies = %q
[audit]
file = %q
%s
[[plugins]]
name = "kitchen"
path = "kitchen.wasm"
[[plugins]]
name = "ping"
path = "../../../examples/wat-ping/wat-ping.wasm"
`, policy, file, extra)
}

// auditSchema is docs/audit.schema.json compiled.
func auditSchema(t *testing.T) *schema.Schema {
	t.Helper()
	raw, err := os.ReadFile("../../docs/audit.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := schema.Compile(raw, nil)
	if err != nil {
		t.Fatalf("docs/audit.schema.json: %v", err)
	}
	return s
}

// auditEvent is what the tests read of an event.
type auditEvent struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Outcome   string `json:"outcome"`
	Source    string `json:"source"`
	Transport string `json:"transport"`
	Subject   struct {
		Sub    string `json:"sub"`
		Client string `json:"client_name"`
	} `json:"subject"`
	Target struct {
		Plugin, Name, Method string
	} `json:"target"`
	Detail   string          `json:"detail"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

// readAudit reads the events of files, each validated against sch.
func readAudit(t *testing.T, sch *schema.Schema, files ...string) []auditEvent {
	t.Helper()
	var evs []auditEvent
	for _, f := range files {
		fh, err := os.Open(f)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			if err := sch.Validate(sc.Bytes()); err != nil {
				t.Errorf("%s: event does not match docs/audit.schema.json: %v\n%s", f, err, sc.Bytes())
			}
			var e auditEvent
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			evs = append(evs, e)
		}
		fh.Close()
	}
	return evs
}

// awaitAudit reads file until it holds n events (the writer is behind
// the calls), for at most 20 s.
func awaitAudit(t *testing.T, sch *schema.Schema, file string, n int) []auditEvent {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if strings.Count(string(b), "\n") >= n || time.Now().After(deadline) {
			break
		}
	}
	return readAudit(t, sch, file)
}

// TestAuditEvents: through the real server over stdio and HTTP, an
// allowed call, a call the policies deny, a capability the grants deny,
// a resource read and a prompt get are each one event matching
// docs/audit.schema.json, with the caller, the target and redacted data.
func TestAuditEvents(t *testing.T) {
	sch := auditSchema(t)
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	srv := newTestServer(t, auditConfig(t, file, "include_data = true\nmax_data = 512"))
	c := startSession(t, srv)
	if r := c.call("tools/call", callArgs("echo", map[string]any{"text": "hello", "api_token": "s3cret-value"})); r.Error != nil {
		t.Fatalf("echo: %+v", r.Error)
	}
	if r := c.call("tools/call", callArgs("fail", nil)); r.Error == nil || r.Error.Code != -32003 {
		t.Fatalf("fail: %+v, want -32003", r.Error)
	}
	c.call("tools/call", callArgs("counter", nil)) // kv not granted
	if r := c.call("resources/read", map[string]any{"uri": "kitchen://static"}); r.Error != nil {
		t.Fatalf("resources/read: %+v", r.Error)
	}
	if r := c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bo"}}); r.Error != nil {
		t.Fatalf("prompts/get: %+v", r.Error)
	}
	complete := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "name", "value": "B"}}
	if r := c.call("completion/complete", complete); r.Error == nil || r.Error.Code != -32003 || strings.Contains(r.Error.Message, "no-complete") {
		t.Fatalf("completion/complete: %+v, want -32003 naming no policy", r.Error)
	}
	h := &httpClient{t: t, url: serveHTTP(t, srv) + "/mcp"}
	if r := h.modern("tools/call", callArgs("ping", nil)); r.Error != nil || r.status != http.StatusOK {
		t.Fatalf("HTTP ping: %d %s", r.status, r.raw)
	}
	if r := h.modern("tools/call", callArgs("fail", nil)); r.status != http.StatusForbidden {
		t.Fatalf("HTTP fail: %d %s, want 403", r.status, r.raw)
	}
	evs := awaitAudit(t, sch, file, 9)
	type key struct{ typ, transport, name, outcome string }
	got := map[key]auditEvent{}
	ids := map[string]bool{}
	for _, e := range evs {
		got[key{e.Type, e.Transport, e.Target.Name, e.Outcome}] = e
		ids[e.ID] = true
	}
	if len(ids) != len(evs) {
		t.Errorf("%d events, %d ids", len(evs), len(ids))
	}
	for _, k := range []key{
		{"mcp_tool_call", "stdio", "echo", "ok"},
		{"authz_denied", "stdio", "fail", "denied"},
		{"capability_denied", "stdio", "counter", "denied"},
		{"mcp_tool_call", "stdio", "counter", "tool_error"},
		{"mcp_resource_read", "stdio", "kitchen://static", "ok"},
		{"mcp_prompt_get", "stdio", "greet", "ok"},
		{"authz_denied", "stdio", "greet", "denied"},
		{"mcp_tool_call", "http", "ping", "ok"},
		{"authz_denied", "http", "fail", "denied"},
	} {
		e, ok := got[k]
		if !ok {
			t.Errorf("no event %+v in %+v", k, evs)
			continue
		}
		if e.Transport == "stdio" && (e.Subject.Sub != "stdio" || e.Subject.Client != "test") {
			t.Errorf("%+v: subject %+v", k, e.Subject)
		}
		if e.Transport == "http" && e.Source != "127.0.0.1" {
			t.Errorf("%+v: source %q", k, e.Source)
		}
		if want := map[string]string{"greet": "kitchen", "ping": "ping"}[k.name]; want == "" && e.Target.Plugin != "kitchen" || want != "" && e.Target.Plugin != want {
			t.Errorf("%+v: plugin %q", k, e.Target.Plugin)
		}
	}
	echo := got[key{"mcp_tool_call", "stdio", "echo", "ok"}]
	if !strings.Contains(string(echo.Request), `"api_token":"[REDACTED]"`) || !strings.Contains(string(echo.Response), "hello") {
		t.Errorf("echo data: request %s response %s", echo.Request, echo.Response)
	}
	if b, _ := os.ReadFile(file); strings.Contains(string(b), "s3cret") {
		t.Error("a secret argument reached the audit file")
	}
	for name, policy := range map[string]string{"fail": "no-fail", "greet": "no-complete"} {
		if d := got[key{"authz_denied", "stdio", name, "denied"}].Detail; !strings.Contains(d, "forbidden by "+policy) {
			t.Errorf("authz_denied %s: detail %q does not name the deciding policy %s", name, d, policy)
		}
	}
	if d := got[key{"capability_denied", "stdio", "counter", "denied"}].Detail; !strings.HasPrefix(d, "kv") {
		t.Errorf("capability_denied detail %q", d)
	}
}

// TestAuditSourceBehindProxy: behind a reverse proxy listed in [http]
// trusted_proxies, an event's source is the client the proxies forwarded
// (X-Forwarded-For read from its end past the trusted hops); from a peer
// that is not listed, the header is ignored and the source is the peer.
func TestAuditSourceBehindProxy(t *testing.T) {
	sch := auditSchema(t)
	for _, tc := range []struct {
		name, trusted, xff, want string
	}{
		{"trusted proxy", `["127.0.0.1"]`, "203.0.113.7", "203.0.113.7"},
		{"chain of trusted proxies", `["127.0.0.0/8", "10.0.0.0/8"]`, "198.51.100.1, 203.0.113.7, 10.1.2.3", "203.0.113.7"},
		{"hop that does not parse", `["127.0.0.1"]`, "203.0.113.7, not-an-ip", "127.0.0.1"},
		{"peer not trusted", `["10.0.0.0/8"]`, "203.0.113.7", "127.0.0.1"},
		{"no trusted proxies", `[]`, "203.0.113.7", "127.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "audit.jsonl")
			srv := newTestServer(t, auditConfig(t, file, "[http]\ntrusted_proxies = "+tc.trusted))
			h := &httpClient{t: t, url: serveHTTP(t, srv) + "/mcp", header: map[string]string{"X-Forwarded-For": tc.xff}}
			if r := h.modern("tools/call", callArgs("ping", nil)); r.Error != nil || r.status != http.StatusOK {
				t.Fatalf("HTTP ping: %d %s", r.status, r.raw)
			}
			evs := awaitAudit(t, sch, file, 1)
			if len(evs) != 1 || evs[0].Source != tc.want {
				t.Fatalf("events %+v, want one with source %s", evs, tc.want)
			}
		})
	}
}

// TestAuditRotation: 400 calls with max_size = "4KiB" rotate through
// many files, and every event is in exactly one of them.
func TestAuditRotation(t *testing.T) {
	sch := auditSchema(t)
	file := filepath.Join(t.TempDir(), "audit.jsonl")
	srv := newTestServer(t, auditConfig(t, file, "max_size = \"4KiB\"\nmax_files = 1000"))
	c := startSession(t, srv)
	const calls = 400
	for range calls {
		if r := c.call("tools/call", callArgs("ping", nil)); r.Error != nil {
			t.Fatalf("ping: %+v", r.Error)
		}
	}
	files := []string{file}
	for i := 1; i <= 1000; i++ {
		files = append(files, file+"."+strconv.Itoa(i))
	}
	// A read racing a rotation may see an event twice (in the file, then
	// in file.1): read until the writer is done and a read is whole.
	var evs []auditEvent
	var ids map[string]int
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		evs = readAudit(t, sch, files...)
		ids = map[string]int{}
		for _, e := range evs {
			ids[e.ID]++
		}
		if len(evs) == calls && len(ids) == calls || time.Now().After(deadline) {
			break
		}
	}
	if len(evs) != calls || len(ids) != calls {
		t.Fatalf("%d events, %d ids, want %d", len(evs), len(ids), calls)
	}
	if _, err := os.Stat(file + ".10"); err != nil {
		t.Fatalf("fewer rotations than expected: %v", err)
	}
	if n := srv.aud.Dropped(); n != 0 {
		t.Fatalf("%d events dropped", n)
	}
}

// TestAuditStalledSink: the audit file is a FIFO that nobody reads; a
// bounded loop of calls still completes, and the events lost are counted
// in wasmcp_audit_dropped_total.
func TestAuditStalledSink(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	// A reader that never reads, so that opening it for writing does not
	// wait.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv := newTestServer(t, auditConfig(t, fifo, "")+"[telemetry]\nmetrics = \"127.0.0.1:0\"\n")
	h := &httpClient{t: t, url: serveHTTP(t, srv) + "/mcp"}
	const calls = 6000 // the pipe holds ~200 events, the queue 4096
	start := time.Now()
	for i := range calls {
		if r := h.modern("tools/call", callArgs("ping", nil)); r.status != http.StatusOK {
			t.Fatalf("call %d: %d %s", i, r.status, r.raw)
		}
	}
	t.Logf("%d calls in %v with a stalled audit sink", calls, time.Since(start))
	ms := httptest.NewServer(srv.MetricsHandler())
	defer ms.Close()
	resp, err := http.Get(ms.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var dropped float64
	for _, line := range strings.Split(string(body), "\n") {
		if v, ok := strings.CutPrefix(line, "wasmcp_audit_dropped_total "); ok {
			dropped, _ = strconv.ParseFloat(v, 64)
		}
	}
	if dropped <= 0 || uint64(dropped) != srv.aud.Dropped() {
		t.Fatalf("wasmcp_audit_dropped_total = %v (Dropped %d), want > 0", dropped, srv.aud.Dropped())
	}
	t.Logf("dropped %v of %d events", dropped, calls)
}
