package telemetry_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestMetrics: /metrics counts what the calls did. The semconv histogram
// has one observation per tools/call, labelled by tool and error type;
// the per-plugin outcome counters say ok, timeout and denied; the pool
// gauges name each plugin; a made-up tool name creates no series.
func TestMetrics(t *testing.T) {
	noOTEL(t)
	w := newWeb(t)
	srv, logs := newServer(t, testConfig(w, `metrics = "127.0.0.1:0"
audit = true`))
	base := serveMetrics(t, srv)
	c := startStdio(t, srv)
	c.initialize()

	const echoes = 5
	for i := range echoes {
		if got := text(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))); got != "x" {
			t.Fatalf("echo %d: %q", i, got)
		}
	}
	for range 2 {
		if got := text(t, c.call("tools/call", tool("spin", nil, nil))); !strings.Contains(got, "-32001") {
			t.Fatalf("spin: %q, want a timeout", got)
		}
	}
	if got := text(t, c.call("tools/call", tool("fetch", map[string]any{"url": "http://elsewhere.test/"}, nil))); !strings.Contains(got, "errno") {
		t.Fatalf("denied fetch: %q", got)
	}
	if got := text(t, c.call("tools/call", tool("fetch", map[string]any{"url": "http://public.test:" + w.port + "/"}, nil))); !strings.Contains(got, "status 200") {
		t.Fatalf("granted fetch: %q", got)
	}
	c.call("tools/call", tool("no-such-tool-"+strings.Repeat("z", 20), nil, nil))
	c.call("tools/list", map[string]any{})

	body := get(t, base+"/metrics")
	tests := []struct {
		name   string
		labels []string
		want   float64
	}{
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/call"`, `gen_ai_tool_name="echo"`, `error_type=""`}, echoes},
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/call"`, `gen_ai_tool_name="spin"`, `error_type="timeout"`}, 2},
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/call"`, `gen_ai_tool_name="fetch"`}, 2},
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/call"`, `gen_ai_tool_name=""`, `error_type="-32602"`}, 1},
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/call"`}, echoes + 2 + 2 + 1},
		{"mcp_server_operation_duration_seconds_count", []string{`mcp_method_name="tools/list"`}, 1},
		{"wasmcp_plugin_calls_total", []string{`plugin="good"`, `outcome="ok"`}, echoes},
		{"wasmcp_plugin_calls_total", []string{`plugin="runaway"`, `outcome="timeout"`}, 2},
		{"wasmcp_plugin_calls_total", []string{`plugin="fetch"`, `outcome="denied"`}, 1},
		{"wasmcp_plugin_calls_total", []string{`plugin="fetch"`, `outcome="ok"`}, 1},
		{"wasmcp_plugin_denials_total", []string{`plugin="fetch"`, `kind="http/fetch"`}, 1},
		{"wasmcp_plugin_http_requests_total", []string{`plugin="fetch"`}, 2},
		{"wasmcp_plugin_host_calls_total", []string{`plugin="fetch"`}, 2},
		{"wasmcp_plugin_instances", []string{`plugin="good"`, `state="busy"`}, 0},
		{"wasmcp_plugin_queue_depth", []string{`plugin="runaway"`}, 0},
	}
	for _, tt := range tests {
		got, ok := scrape(t, body, tt.name, tt.labels...)
		if !ok || got != tt.want {
			t.Errorf("%s{%s} = %v (found %v), want %v", tt.name, strings.Join(tt.labels, ","), got, ok, tt.want)
			for _, l := range strings.Split(body, "\n") {
				if strings.HasPrefix(l, tt.name) {
					t.Log(l)
				}
			}
		}
	}
	if n, _ := scrape(t, body, "wasmcp_plugin_instances_created_total", `plugin="good"`); n < 1 {
		t.Errorf("good created %v instances", n)
	}
	// The runaway spun for two deadlines; the good plugin keeps an idle
	// instance with its memory; every plugin was compiled.
	if n, _ := scrape(t, body, "wasmcp_plugin_guest_cpu_seconds_total", `plugin="runaway"`); n <= 0 {
		t.Errorf("runaway guest CPU %v s", n)
	}
	if n, _ := scrape(t, body, "wasmcp_plugin_memory_bytes", `plugin="good"`); n < 1<<16 {
		t.Errorf("good linear memory %v bytes", n)
	}
	if n, ok := scrape(t, body, "wasmcp_plugin_compile_seconds", `plugin="good"`); !ok || n <= 0 {
		t.Errorf("good compile time %v s (found %v)", n, ok)
	}
	if strings.Contains(body, "no-such-tool") {
		t.Error("a made-up tool name became a label")
	}

	// The audit log: one record per denial and, with audit on, per call.
	var denials, calls int
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch rec["audit"] {
		case "denial":
			denials++
			if rec["plugin"] != "fetch" || rec["capability"] != "http/fetch" || rec["detail"] != "http://elsewhere.test/" || rec["target"] != "fetch" {
				t.Errorf("denial record: %v", rec)
			}
		case "call":
			calls++
		}
	}
	if denials != 1 || calls != echoes+2+2 {
		t.Errorf("audit: %d denial and %d call records, want 1 and %d", denials, calls, echoes+4)
	}
}

// TestCompileCacheMetric: wasmcp_plugin_compile_cache_hit is 0 for each
// plugin of a server on a cold compilation cache and 1 for the next
// server on the same cache, beside a compile time for each.
func TestCompileCacheMetric(t *testing.T) {
	noOTEL(t)
	t.Setenv("WASMCP_TEST_CACHE", t.TempDir())
	w := newWeb(t)
	for _, c := range []struct {
		name string
		want float64
	}{{"cold cache", 0}, {"warm cache", 1}} {
		t.Run(c.name, func(t *testing.T) {
			srv, _ := newServer(t, testConfig(w, `metrics = "127.0.0.1:0"`))
			body := get(t, serveMetrics(t, srv)+"/metrics")
			for _, p := range []string{"good", "runaway", "fetch"} {
				if got, ok := scrape(t, body, "wasmcp_plugin_compile_cache_hit", `plugin="`+p+`"`); !ok || got != c.want {
					t.Errorf("%s: cache hit %v (found %v), want %v", p, got, ok, c.want)
				}
				if got, _ := scrape(t, body, "wasmcp_plugin_compile_seconds", `plugin="`+p+`"`); got <= 0 {
					t.Errorf("%s: compile seconds %v", p, got)
				}
			}
			if err := srv.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestInvalidResultOutcome: a plugin result the server refuses is a
// failed plugin call (outcome "error"), whether the registry refused it
// (not JSON) or the engine did (a result that does not conform to its
// method's MCP result type, answered as a tool error to tools/call and as
// -32603 to the others); error.type stays what the client got. A result
// that conforms is "ok".
func TestInvalidResultOutcome(t *testing.T) {
	noOTEL(t)
	srv, logs := newServer(t, `
[server]
kv_dir = ":memory:"
[telemetry]
metrics = "127.0.0.1:0"
audit = true
[[plugins]]
name = "garbage"
path = `+quote(hostile("garbage"))+`
`)
	base := serveMetrics(t, srv)
	c := startStdio(t, srv)
	c.initialize()
	calls := []struct {
		name, method string
		params       map[string]any
		errType      string // the semconv histogram's error_type
		outcome      string
	}{
		{"conforming", "tools/call", tool("alive", nil, nil), "", "ok"},
		{"not JSON", "tools/call", tool("notjson", nil, nil), "tool_error", "error"},
		{"content not an array", "tools/call", tool("shape", nil, nil), "tool_error", "error"},
		{"contents not an array", "resources/read", map[string]any{"uri": "garbage://res"}, "-32603", "error"},
		{"messages not an array", "prompts/get", map[string]any{"name": "garbage_prompt"}, "-32603", "error"},
	}
	for _, tc := range calls {
		c.call(tc.method, tc.params)
	}
	body := get(t, base+"/metrics")
	want := map[string]float64{}
	for _, tc := range calls {
		want[tc.outcome]++
	}
	for _, o := range []string{"ok", "error", "tool_error"} {
		if got, _ := scrape(t, body, "wasmcp_plugin_calls_total", `plugin="garbage"`, `outcome="`+o+`"`); got != want[o] {
			t.Errorf("wasmcp_plugin_calls_total{outcome=%q} = %v, want %v", o, got, want[o])
		}
	}
	var audited []string
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["audit"] == "call" {
			audited = append(audited, fmt.Sprint(rec["outcome"]))
		}
	}
	for i, tc := range calls {
		if got, _ := scrape(t, body, "mcp_server_operation_duration_seconds_count", `mcp_method_name="`+tc.method+`"`, `error_type="`+tc.errType+`"`); got < 1 {
			t.Errorf("%s: no %s with error_type %q", tc.name, tc.method, tc.errType)
		}
		if i >= len(audited) || audited[i] != tc.outcome {
			t.Errorf("%s: audit outcomes %v, want %q at %d", tc.name, audited, tc.outcome, i)
		}
	}
}

// TestMetricsToolRenames: a plugin that renames its tool on every call
// (it re-describes through notify/list_changed) does not grow /metrics:
// the series of a tool the plugin no longer serves are dropped, so the
// line count after 200 renames is what it was after 20. Before, every
// name kept its histogram (17 lines) for the process's life.
func TestMetricsToolRenames(t *testing.T) {
	noOTEL(t)
	const manifest = `{"abi":1,"tools":[{"name":"ok"},{"name":"relie","inputSchema":{"type":"object","properties":{"manifest":{"type":"string"}}}}]}`
	srv, _ := newServer(t, `
[server]
kv_dir = ":memory:"
[telemetry]
metrics = "127.0.0.1:0"
[[plugins]]
name = "liar"
path = `+quote(hostile("liar"))+`
[plugins.grants]
kv = true
config = { manifest = '`+manifest+`' }
`)
	base := serveMetrics(t, srv)
	c := startStdio(t, srv)
	c.initialize()
	rename := func(i int) {
		t.Helper()
		name := fmt.Sprintf("renamed_%d", i)
		m := `{"abi":1,"tools":[{"name":"ok"},{"name":"relie","inputSchema":{"type":"object"}},{"name":"` + name + `"}]}`
		if got := text(t, c.call("tools/call", tool("relie", map[string]any{"manifest": m}, nil))); got != "relied" {
			t.Fatalf("relie %d: %q", i, got)
		}
		c.note("notifications/tools/list_changed")
		if got := text(t, c.call("tools/call", tool(name, nil, nil))); got != "ok" {
			t.Fatalf("%s: %q", name, got)
		}
	}
	lines := func() (int, string) {
		body := get(t, base+"/metrics")
		return strings.Count(body, "\n"), body
	}
	const first, total = 20, 200
	for i := range first {
		rename(i)
	}
	before, _ := lines()
	for i := first; i < total; i++ {
		rename(i)
	}
	after, body := lines()
	t.Logf("/metrics: %d lines after %d renames, %d after %d", before, first, after, total)
	// A few lines of slack: the Go runtime's own series vary.
	if after > before+10 {
		t.Errorf("/metrics grew from %d to %d lines over %d renames", before, after, total-first)
	}
	if strings.Contains(body, `gen_ai_tool_name="renamed_5"`) {
		t.Error("the series of a tool the plugin no longer serves are still there")
	}
	last := fmt.Sprintf(`gen_ai_tool_name="renamed_%d"`, total-1)
	if n, _ := scrape(t, body, "mcp_server_operation_duration_seconds_count", last); n != 1 {
		t.Errorf("%s: count %v, want 1 (the tool it serves keeps its series)", last, n)
	}
	if n, _ := scrape(t, body, "wasmcp_plugin_calls_total", `plugin="liar"`, `outcome="ok"`); n != 2*total {
		t.Errorf("liar's ok calls = %v, want %d (its counters are kept)", n, 2*total)
	}
}
