package telemetry_test

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/wasmcp/wasmcp/internal/telemetry"
)

// receiver is an in-process OTLP/HTTP traces endpoint: it decodes every
// export request's protobuf and keeps the spans.
type receiver struct {
	srv      *httptest.Server
	mu       sync.Mutex
	spans    []*tracepb.Span
	service  []string
	metrics  []string // metric names of the OTLP metrics exports
	requests int
	apiKey   []string // the x-api-key header of each traces export
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var rd io.Reader = req.Body
		if req.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(req.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			rd = zr
		}
		body, _ := io.ReadAll(rd)
		if req.URL.Path == "/v1/metrics" {
			var ex collectormetrics.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &ex); err != nil {
				t.Errorf("metrics export request: %v", err)
			}
			r.mu.Lock()
			r.requests++
			for _, rm := range ex.ResourceMetrics {
				for _, sm := range rm.ScopeMetrics {
					for _, m := range sm.Metrics {
						r.metrics = append(r.metrics, m.Name)
					}
				}
			}
			r.mu.Unlock()
			out, _ := proto.Marshal(&collectormetrics.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(out)
			return
		}
		if req.URL.Path != "/v1/traces" || req.Header.Get("Content-Type") != "application/x-protobuf" {
			t.Errorf("export to %s as %q", req.URL.Path, req.Header.Get("Content-Type"))
		}
		var ex collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &ex); err != nil {
			t.Errorf("export request: %v", err)
			w.WriteHeader(400)
			return
		}
		r.mu.Lock()
		r.requests++
		r.apiKey = append(r.apiKey, req.Header.Get("x-api-key"))
		for _, rs := range ex.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					r.service = append(r.service, a.GetValue().GetStringValue())
				}
			}
			for _, ss := range rs.ScopeSpans {
				r.spans = append(r.spans, ss.Spans...)
			}
		}
		r.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) all() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

func attrs(s *tracepb.Span) map[string]string {
	m := map[string]string{}
	for _, a := range s.Attributes {
		switch v := a.GetValue().GetValue().(type) {
		case *commonpb.AnyValue_StringValue:
			m[a.Key] = v.StringValue
		case *commonpb.AnyValue_IntValue:
			m[a.Key] = strconv.FormatInt(v.IntValue, 10)
		case *commonpb.AnyValue_DoubleValue:
			m[a.Key] = strconv.FormatFloat(v.DoubleValue, 'g', -1, 64)
		case *commonpb.AnyValue_BoolValue:
			m[a.Key] = strconv.FormatBool(v.BoolValue)
		}
	}
	return m
}

// find returns the spans named name.
func find(spans []*tracepb.Span, name string) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func children(spans []*tracepb.Span, parent *tracepb.Span) []*tracepb.Span {
	var out []*tracepb.Span
	for _, s := range spans {
		if hex.EncodeToString(s.ParentSpanId) == hex.EncodeToString(parent.SpanId) && len(s.ParentSpanId) > 0 {
			out = append(out, s)
		}
	}
	return out
}

const (
	metaTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	metaParent = "00f067aa0ba902b7"
	hdrTrace   = "0af7651916cd43dd8448eb211c80319c"
	hdrParent  = "b7ad6b7169203331"
)

// TestTraces: with OTEL_EXPORTER_OTLP_ENDPOINT set, each MCP request is
// one SERVER span named and attributed per the MCP semantic conventions,
// its parent from params._meta.traceparent (stdio) or the HTTP
// traceparent header; the plugin call is its child, an http/fetch a
// CLIENT span below that whose traceparent reaches the web server, and
// each kv operation a span below it; resources/read has the URI as
// mcp.resource.uri, not in its name; a
// timeout has error.type "timeout" and an error status; a 2026-07-28
// request has no mcp.session.id; a request whose parent is not sampled
// exports nothing; Close flushes everything, the metrics too (OTLP).
func TestTraces(t *testing.T) {
	noOTEL(t)
	rcv := newReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "wasmcp-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "10000") // only Close flushes
	w := newWeb(t)
	srv, _ := newServer(t, testConfig(w, "")+"[[plugins]]\nname = \"rogue\"\npath = "+quote(hostile("rogue"))+"\n")
	c := startStdio(t, srv)
	c.initialize()
	meta := map[string]any{"traceparent": "00-" + metaTrace + "-" + metaParent + "-01", "tracestate": "vendor=x"}
	if got := text(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}, meta))); got != "x" {
		t.Fatalf("echo: %q", got)
	}
	if got := text(t, c.call("tools/call", tool("counter", nil, nil))); got != "1" {
		t.Fatalf("counter: %q", got)
	}
	unsampled := map[string]any{"traceparent": "00-" + strings.Repeat("ab", 16) + "-" + metaParent + "-00"}
	if got := text(t, c.call("tools/call", tool("echo", map[string]any{"text": "u"}, unsampled))); got != "u" {
		t.Fatalf("unsampled echo: %q", got)
	}
	if got := text(t, c.call("tools/call", tool("spin", nil, nil))); !strings.Contains(got, "-32001") {
		t.Fatalf("spin: %q", got)
	}
	if got := text(t, c.call("tools/call", tool("fetch", map[string]any{"url": "http://public.test:" + w.port + "/x?q=secret"}, nil))); !strings.Contains(got, "status 200") {
		t.Fatalf("fetch: %q", got)
	}
	c.call("resources/read", map[string]any{"uri": "rogue://mine"})
	body := modernPost(t, serveHTTP(t, srv), "echo", map[string]any{"text": "y"}, map[string]string{"traceparent": "00-" + hdrTrace + "-" + hdrParent + "-01"})
	if !strings.Contains(body, `"y"`) {
		t.Fatalf("modern echo: %s", body)
	}
	if n := len(rcv.all()); n != 0 {
		t.Fatalf("%d spans exported before Close, with a 10s schedule delay", n)
	}
	start := time.Now()
	if err := srv.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.all()
	t.Logf("Close flushed %d spans in %v", len(spans), time.Since(start).Round(time.Millisecond))
	for _, s := range spans {
		t.Logf("  %s kind=%v %v", s.Name, s.Kind, attrs(s))
	}
	if rcv.service[0] != "wasmcp-test" {
		t.Errorf("service.name %q", rcv.service)
	}

	for _, s := range spans {
		if hex.EncodeToString(s.TraceId) == strings.Repeat("ab", 16) {
			t.Errorf("span %q of a request whose parent was not sampled", s.Name)
		}
	}
	rcv.mu.Lock()
	names := strings.Join(rcv.metrics, " ")
	rcv.mu.Unlock()
	for _, m := range []string{"mcp_server_operation_duration_seconds", "wasmcp_plugin_calls_total", "wasmcp_plugin_run_seconds_total"} {
		if !strings.Contains(names, m) {
			t.Errorf("OTLP metrics export without %s: %s", m, names)
		}
	}
	echoes := find(spans, "tools/call echo")
	if len(echoes) != 2 {
		t.Fatalf("%d 'tools/call echo' spans, want 2", len(echoes))
	}
	var stdioEcho, httpEcho *tracepb.Span
	for _, s := range echoes {
		if attrs(s)["network.transport"] == "pipe" {
			stdioEcho = s
		} else {
			httpEcho = s
		}
	}
	if stdioEcho == nil || httpEcho == nil {
		t.Fatal("want one echo span on pipe and one on tcp")
	}
	checks := []struct {
		name        string
		span        *tracepb.Span
		trace, prnt string
		want        map[string]string
		absent      []string
	}{
		{"stdio, parent from _meta", stdioEcho, metaTrace, metaParent, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
			"mcp.protocol.version": "2025-11-25", "jsonrpc.request.id": "2", "network.transport": "pipe",
		}, []string{"error.type"}},
		{"2026-07-28 over HTTP, parent from the header", httpEcho, hdrTrace, hdrParent, map[string]string{
			"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "mcp.protocol.version": "2026-07-28",
			"jsonrpc.request.id": "7", "network.transport": "tcp",
		}, []string{"mcp.session.id", "error.type"}},
	}
	for _, ck := range checks {
		s := ck.span
		if s.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: kind %v", ck.name, s.Kind)
		}
		if got := hex.EncodeToString(s.TraceId); got != ck.trace {
			t.Errorf("%s: trace %s, want %s", ck.name, got, ck.trace)
		}
		if got := hex.EncodeToString(s.ParentSpanId); got != ck.prnt {
			t.Errorf("%s: parent %s, want %s", ck.name, got, ck.prnt)
		}
		a := attrs(s)
		for k, v := range ck.want {
			if a[k] != v {
				t.Errorf("%s: %s = %q, want %q", ck.name, k, a[k], v)
			}
		}
		for _, k := range ck.absent {
			if _, ok := a[k]; ok {
				t.Errorf("%s: has %s = %q", ck.name, k, a[k])
			}
		}
		kids := children(spans, s)
		if len(kids) != 1 || kids[0].Name != "plugin good" || attrs(kids[0])["wasmcp.plugin.name"] != "good" {
			t.Errorf("%s: children %v, want the plugin call", ck.name, kids)
		} else if _, ok := attrs(kids[0])["wasmcp.queue.wait_seconds"]; !ok {
			t.Errorf("%s: plugin span without queue wait: %v", ck.name, attrs(kids[0]))
		} else if k := kids[0]; k.StartTimeUnixNano < s.StartTimeUnixNano || k.EndTimeUnixNano <= k.StartTimeUnixNano ||
			k.EndTimeUnixNano > s.EndTimeUnixNano {
			t.Errorf("%s: plugin span %d..%d, not within its request's %d..%d", ck.name, k.StartTimeUnixNano, k.EndTimeUnixNano,
				s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
	}
	if s := stdioEcho; attrs(s)["mcp.session.id"] == "" {
		t.Error("legacy stdio session: no mcp.session.id")
	}

	counters := find(spans, "tools/call counter")
	if len(counters) != 1 {
		t.Fatalf("%d counter spans", len(counters))
	}
	if pl := children(spans, counters[0]); len(pl) != 1 {
		t.Errorf("counter: %d children", len(pl))
	} else {
		var kv []string
		for _, s := range children(spans, pl[0]) {
			kv = append(kv, s.Name)
		}
		if strings.Join(kv, ",") != "kv/get,kv/set" {
			t.Errorf("counter: kv spans %q, want kv/get,kv/set", kv)
		}
	}
	if reads := find(spans, "resources/read"); len(reads) != 1 || attrs(reads[0])["mcp.resource.uri"] != "rogue://mine" ||
		attrs(reads[0])["mcp.method.name"] != "resources/read" || len(children(spans, reads[0])) != 1 {
		t.Errorf("resources/read spans %v, want one with mcp.resource.uri rogue://mine and its plugin call", reads)
	}
	spins := find(spans, "tools/call spin")
	if len(spins) != 1 {
		t.Fatalf("%d spin spans", len(spins))
	}
	if a := attrs(spins[0]); a["error.type"] != "timeout" || spins[0].Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR {
		t.Errorf("timeout span: error.type %q status %v", a["error.type"], spins[0].Status)
	}
	if len(spins[0].TraceId) == 0 || hex.EncodeToString(spins[0].TraceId) == metaTrace {
		t.Error("a request without traceparent joined another trace")
	}

	fetches := find(spans, "tools/call fetch")
	if len(fetches) != 1 {
		t.Fatalf("%d fetch spans", len(fetches))
	}
	plugin := children(spans, fetches[0])
	if len(plugin) != 1 {
		t.Fatalf("fetch: %d children", len(plugin))
	}
	client := children(spans, plugin[0])
	if len(client) != 1 || client[0].Kind != tracepb.Span_SPAN_KIND_CLIENT || client[0].Name != "GET" {
		t.Fatalf("fetch: plugin span children %v, want one CLIENT GET", client)
	}
	a := attrs(client[0])
	if a["url.full"] != "http://public.test:"+w.port+"/x" || a["http.response.status_code"] != "200" || a["server.address"] != "public.test" {
		t.Errorf("client span attributes: %v", a)
	}
	seen := w.traceparents()
	want := "00-" + hex.EncodeToString(client[0].TraceId) + "-" + hex.EncodeToString(client[0].SpanId) + "-01"
	if len(seen) != 1 || seen[0] != want {
		t.Errorf("web server saw traceparent %q, want %q", seen, want)
	}
}

// TestTracesOff: with no OTEL_* variable set (and metrics on), nothing is
// exported and the outbound request carries no traceparent.
func TestTracesOff(t *testing.T) {
	noOTEL(t)
	rcv := newReceiver(t)
	w := newWeb(t)
	srv, _ := newServer(t, testConfig(w, `metrics = "127.0.0.1:0"`))
	c := startStdio(t, srv)
	c.initialize()
	meta := map[string]any{"traceparent": "00-" + metaTrace + "-" + metaParent + "-01"}
	c.call("tools/call", tool("echo", map[string]any{"text": "x"}, meta))
	if got := text(t, c.call("tools/call", tool("fetch", map[string]any{"url": "http://public.test:" + w.port + "/"}, meta))); !strings.Contains(got, "status 200") {
		t.Fatalf("fetch: %q", got)
	}
	if err := srv.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	rcv.mu.Lock()
	n := rcv.requests
	rcv.mu.Unlock()
	if n != 0 {
		t.Errorf("%d export requests with tracing off", n)
	}
	if seen := w.traceparents(); len(seen) != 1 || seen[0] != "" {
		t.Errorf("outbound traceparent with tracing off: %q", seen)
	}
}

// TestTracesExportSettings: the OTLP/HTTP exporter applies
// OTEL_EXPORTER_OTLP_HEADERS (percent-decoded; an invalid header field is
// refused) and gzip compression, the
// traces variables over the general ones, and refuses bad values at
// start.
func TestTracesExportSettings(t *testing.T) {
	for _, c := range []struct {
		name    string
		env     map[string]string
		wantKey string
		wantErr string
	}{
		{"headers, gzip", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=s%20ecret,bad", "OTEL_EXPORTER_OTLP_COMPRESSION": "gzip"}, "s ecret", ""},
		{"traces headers win", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x-api-key=a", "OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-api-key=b"}, "b", ""},
		{"bad compression", map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, "", "compression"},
		{"bad header", map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "x y=1"}, "", "header"},
		{"bad timeout", map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, "", "timeout"},
		{"bad sampler argument", map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "2"}, "", "ratio"},
		{"bad queue size", map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "0"}, "", "OTEL_BSP_MAX_QUEUE_SIZE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			noOTEL(t)
			rcv := newReceiver(t)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.srv.URL)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			if c.wantErr != "" {
				_, err := telemetry.New(context.Background(), telemetry.Config{})
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("New: %v, want an error about %s", err, c.wantErr)
				}
				return
			}
			echoOnce(t)
			if n := len(find(rcv.all(), "tools/call echo")); n != 1 {
				t.Errorf("%d echo spans", n)
			}
			rcv.mu.Lock()
			defer rcv.mu.Unlock()
			if len(rcv.apiKey) == 0 || rcv.apiKey[0] != c.wantKey {
				t.Errorf("x-api-key %q, want %q", rcv.apiKey, c.wantKey)
			}
		})
	}
}
