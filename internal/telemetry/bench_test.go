package telemetry

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"
	"unsafe"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// encodeOnly is an exporter that encodes each batch as the OTLP/HTTP
// exporter does and sends it nowhere.
type encodeOnly struct{ buf []byte }

func (e *encodeOnly) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.buf = appendRequest(e.buf[:0], spans)
	return nil
}

func (e *encodeOnly) Shutdown(context.Context) error { return nil }

// BenchmarkObserve measures what telemetry adds to one tools/call of a
// legacy stdio session: the request's state, its span and the plugin
// call's, their batching and their encoding as the OTLP exporter encodes
// them (exported to nowhere), and the metrics: the server's share of
// docs/performance.md's "Telemetry" without the call itself or the
// export's network.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct {
		name            string
		traces, metrics bool
		ratio           string // the sampler's ratio, "" for all
	}{{"traces+metrics", true, true, ""}, {"traces", true, false, ""}, {"traces-10%", true, false, "0.1"}, {"metrics", false, true, ""}} {
		b.Run(tc.name, func(b *testing.B) {
			t := &Telemetry{log: slog.New(slog.DiscardHandler)}
			if tc.traces {
				smp, err := parseSampler("parentbased_traceidratio", tc.ratio)
				if err != nil {
					b.Fatal(err)
				}
				t.tr = newTracer(smp, &encodeOnly{}, nil, nil, nil)
				defer t.tr.shutdown(context.Background())
			}
			if tc.metrics {
				t.metrics = newMetrics(nil)
			}
			hook := t.CallHook()
			req := &mcp.Request{Method: "tools/call", Params: []byte(`{"name":"echo","arguments":{"text":"hello"}}`),
				Client: mcpreq.Client{ProtocolVersion: "2025-11-25"}, SessionID: "Z0IIsqx9DWHdu_LJ1b6GnQ"}
			result := []byte(`{"content":[{"type":"text","text":"hello"}]}`)
			b.ReportAllocs()
			cpu0 := processCPU()
			for b.Loop() {
				ri := &mcp.RequestInfo{Request: req, ID: "17", Transport: "pipe", Start: time.Now()}
				ctx := t.RequestStart(context.Background(), ri)
				cctx, _ := hook.CallStart(ctx, "echo", "tools/call", "echo", nil)
				hook.CallEnd(cctx, nil)
				t.RequestEnd(ctx, ri, result, nil)
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}

// processCPU is the CPU time (user and system) the process has used: a
// shared machine disturbs it less than the wall time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkExport measures one export of the OTLP/HTTP exporter: a
// batch of 512 spans (256 traced tools/calls, the default batch size) to
// a receiver on loopback that reads it whole. Its CPU is the receiver's
// too.
func BenchmarkExport(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"} {
		b.Setenv(k, "")
	}
	e, err := newHTTPExporter(&Config{TracesEndpoint: srv.URL + "/v1/traces"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Shutdown(context.Background())
	spans := tracedCalls(b, 256)
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if err := e.ExportSpans(context.Background(), spans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// tracedCalls returns the spans of n traced tools/calls, two each.
func tracedCalls(tb testing.TB, n int) []sdktrace.ReadOnlySpan {
	mem := tracetest.NewInMemoryExporter()
	t := &Telemetry{log: slog.New(slog.DiscardHandler), tr: newTracer(sdktrace.AlwaysSample(), mem, nil, nil, nil)}
	hook := t.CallHook()
	req := &mcp.Request{Method: "tools/call", Params: []byte(`{"name":"echo","arguments":{"text":"hello"}}`),
		Client: mcpreq.Client{ProtocolVersion: "2025-11-25"}, SessionID: "Z0IIsqx9DWHdu_LJ1b6GnQ"}
	for range n {
		ri := &mcp.RequestInfo{Request: req, ID: "17", Transport: "pipe", Start: time.Now()}
		ctx := t.RequestStart(context.Background(), ri)
		cctx, _ := hook.CallStart(ctx, "echo", "tools/call", "echo", nil)
		hook.CallEnd(cctx, nil)
		t.RequestEnd(ctx, ri, nil, nil)
	}
	if err := t.tr.tp.ForceFlush(context.Background()); err != nil {
		tb.Fatal(err)
	}
	spans := mem.GetSpans().Snapshots() // before Shutdown, which empties mem
	_ = t.tr.shutdown(context.Background())
	return spans
}

// TestStateSize: a request's state stays within the allocator's size
// classes of 224 bytes, and of 320 with its spans (the next are 256 and
// 352): each traced request allocates one.
func TestStateSize(t *testing.T) {
	if n, m := unsafe.Sizeof(reqState{}), unsafe.Sizeof(tracedState{}); n > 224 || m > 320 {
		t.Errorf("reqState %d bytes, tracedState %d: want at most 224 and 320", n, m)
	}
}
