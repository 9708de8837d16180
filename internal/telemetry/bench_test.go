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

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// discard is an exporter that sends nothing.
type discard struct{}

func (discard) export(context.Context, []byte, []byte) error { return nil }
func (discard) shutdown(context.Context) error               { return nil }

// BenchmarkObserve measures what telemetry adds to one tools/call of a
// legacy stdio session: the request's state, its span and the plugin
// call's, their encoding into the batch (exported to nowhere) and the
// metrics. The plugin call's times are handed over as the runtime does
// (CallTimes), without its clock reads, which are the runtime's own. The
// server's share of docs/performance.md's "Telemetry" without
// the call itself or the export's network.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct {
		name            string
		traces, metrics bool
	}{{"traces+metrics", true, true}, {"traces", true, false}, {"metrics", false, true}} {
		b.Run(tc.name, func(b *testing.B) {
			t := &Telemetry{log: slog.New(slog.DiscardHandler)}
			if tc.traces {
				t.tr = newTracer(newSampler(true, 1), discard{}, encodeResource(nil), encodeScope("bench"), time.Hour, 2048, 512, nil)
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

// BenchmarkExport measures one post of the OTLP/HTTP exporter: a batch
// of 170 KiB (about 512 spans of a traced tools/call) to a receiver on
// loopback that reads it whole. Its CPU is the receiver's too.
func BenchmarkExport(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	e, err := newHTTPExporter(&Config{TracesEndpoint: srv.URL + "/v1/traces"})
	if err != nil {
		b.Fatal(err)
	}
	defer e.shutdown(context.Background())
	spans := make([]byte, 170<<10)
	head := appendRequestHead(nil, encodeResource(nil), encodeScope("bench"), len(spans))
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if err := e.export(context.Background(), head, spans); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// TestStateSize: a request's state stays within the allocator's size
// classes of 224 bytes, and of 320 with its spans (the next are 256 and
// 352): each traced request allocates one.
func TestStateSize(t *testing.T) {
	if n, m := unsafe.Sizeof(reqState{}), unsafe.Sizeof(tracedState{}); n > 224 || m > 320 {
		t.Errorf("reqState %d bytes, tracedState %d: want at most 224 and 320", n, m)
	}
}
