package telemetry

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// holdExporter records the size of each export and, while hold is set,
// keeps the export waiting until release is closed.
type holdExporter struct {
	mu      sync.Mutex
	got     []int
	hold    bool
	release chan struct{}
}

func (e *holdExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	e.got = append(e.got, len(spans))
	hold := e.hold
	e.mu.Unlock()
	if hold {
		<-e.release
	}
	return nil
}

func (e *holdExporter) Shutdown(context.Context) error { return nil }

func (e *holdExporter) exports() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.got...)
}

// TestBatching: a full batch is exported without waiting for the
// schedule delay, in one export; while the exporter is stuck, spans
// beyond the queue are dropped, counted and reported, and ending a span
// never waits; shutdown exports what is left, and a span ended after it
// is not exported.
func TestBatching(t *testing.T) {
	for _, k := range []string{"OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_SCHEDULE_DELAY"} {
		t.Setenv(k, "")
	}
	exp := &holdExporter{release: make(chan struct{})}
	var errMu sync.Mutex
	var errs []error
	tr := newTracer(sdktrace.AlwaysSample(), exp, nil,
		[]sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(time.Hour), sdktrace.WithMaxQueueSize(8), sdktrace.WithMaxExportBatchSize(4)},
		func(err error) {
			errMu.Lock()
			errs = append(errs, err)
			errMu.Unlock()
		})
	end := func(n int) {
		t.Helper()
		start := time.Now()
		for range n {
			_, s := tr.tr.Start(context.Background(), "x")
			s.End()
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("ending %d spans took %v", n, d)
		}
	}
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if len(exp.exports()) >= want {
				return
			}
		}
		t.Fatalf("%d exports, want %d", len(exp.exports()), want)
	}
	end(4) // a full batch, with an hour's delay
	waitFor(1)
	exp.mu.Lock()
	exp.hold = true
	exp.mu.Unlock()
	end(4) // exported, the exporter holds it
	waitFor(2)
	end(10) // 8 queued, 2 dropped
	exp.mu.Lock()
	exp.hold = false
	exp.mu.Unlock()
	close(exp.release)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	end(1) // after shutdown: never exported
	got := exp.exports()
	total := 0
	for _, n := range got {
		total += n
	}
	if got[0] != 4 || got[1] != 4 || total != 16 {
		t.Errorf("exports of %v spans, want 4, 4 and 8 in all", got)
	}
	errMu.Lock()
	defer errMu.Unlock()
	var d errDropped
	if len(errs) != 1 || !errors.As(errs[0], &d) || d != 2 {
		t.Errorf("errors %v, want 2 spans dropped", errs)
	}
}

// TestSpanValuesCleaned: span names and string attributes from clients
// are cut to maxValueLen bytes at a character boundary and made valid
// UTF-8, so that the batch encodes (a protobuf string is UTF-8, and a
// receiver refuses a batch with one that is not).
func TestSpanValuesCleaned(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "echo", "echo"},
		{"long", strings.Repeat("a", 100_000), strings.Repeat("a", maxValueLen)},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"multibyte at the cut", strings.Repeat("a", maxValueLen-1) + "é" + "tail", strings.Repeat("a", maxValueLen-1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := tracetest.NewInMemoryExporter()
			tel := &Telemetry{tr: newTracer(sdktrace.AlwaysSample(), mem, nil, nil, nil)}
			req := &mcp.Request{Method: "tools/call", Params: []byte(`{"name":` + quoteJSON(c.in) + `}`),
				Client: mcpreq.Client{ProtocolVersion: "2025-11-25"}, SessionID: c.in}
			ri := &mcp.RequestInfo{Request: req, ID: c.in, Transport: "pipe", Start: time.Now()}
			tel.RequestEnd(tel.RequestStart(context.Background(), ri), ri, nil, nil)
			if err := tel.tr.tp.ForceFlush(context.Background()); err != nil {
				t.Fatal(err)
			}
			spans := mem.GetSpans()
			defer tel.tr.shutdown(context.Background())
			if len(spans) != 1 {
				t.Fatalf("%d spans", len(spans))
			}
			s := spans[0]
			if s.Name != "tools/call "+c.want {
				t.Errorf("name %.40q", s.Name)
			}
			for _, a := range s.Attributes {
				switch a.Key {
				case "gen_ai.tool.name", "mcp.session.id", "jsonrpc.request.id":
					if got := a.Value.AsString(); got != c.want {
						t.Errorf("%s = %.40q, want %.40q", a.Key, got, c.want)
					}
				}
			}
		})
	}
}

func quoteJSON(s string) string {
	b := []byte{'"'}
	for i := range len(s) {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		default:
			b = append(b, c)
		}
	}
	return string(append(b, '"'))
}
