package telemetry

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Spans are recorded through the OpenTelemetry SDK: its tracer provider,
// sampler and batch span processor, and an OTLP exporter (otlp.go). What
// is wasmcp's own here is what the SDK leaves to its caller: the
// [telemetry] table's sampler, a count of the spans the batch processor
// had no room for, and client-sent strings made fit for export.

// tracer is the SDK's tracer provider and the tracer of wasmcp's spans.
type tracer struct {
	tp *sdktrace.TracerProvider
	tr trace.Tracer
}

// scopeName is the instrumentation scope of wasmcp's spans.
const scopeName = "github.com/wasmcp/wasmcp"

// newTracer records spans sampled by smp, with the tracer provider's
// opts, and exports them through exp in batches: the OTEL_BSP_*
// variables, read by the SDK, then bspOpts. A span the batch processor's
// queue has no room for is dropped and counted, never waited for; onError
// hears of the drops with the next export (failed exports reach the
// OpenTelemetry error handler, which New sets).
func newTracer(smp sdktrace.Sampler, exp sdktrace.SpanExporter, opts []sdktrace.TracerProviderOption, bspOpts []sdktrace.BatchSpanProcessorOption, onError func(error)) *tracer {
	q := &bounded{max: int64(bspQueueSize(bspOpts))}
	q.SpanProcessor = sdktrace.NewBatchSpanProcessor(&countingExporter{SpanExporter: exp, q: q, onError: onError}, bspOpts...)
	tp := sdktrace.NewTracerProvider(append(opts, sdktrace.WithSampler(smp), sdktrace.WithSpanProcessor(q))...)
	return &tracer{tp: tp, tr: tp.Tracer(scopeName)}
}

// shutdown exports what is queued and stops the exporter.
func (tr *tracer) shutdown(ctx context.Context) error { return tr.tp.Shutdown(ctx) }

// bspQueueSize is the queue size the batch span processor of opts has:
// OTEL_BSP_MAX_QUEUE_SIZE, else the SDK's default.
func bspQueueSize(opts []sdktrace.BatchSpanProcessorOption) int {
	o := sdktrace.BatchSpanProcessorOptions{MaxQueueSize: sdktrace.DefaultMaxQueueSize}
	if n, err := strconv.Atoi(os.Getenv("OTEL_BSP_MAX_QUEUE_SIZE")); err == nil && n > 0 {
		o.MaxQueueSize = n
	}
	for _, opt := range opts {
		opt(&o)
	}
	return o.MaxQueueSize
}

// bounded is the span processor in front of the SDK's batch span
// processor: it counts the spans handed to it and not yet exported, and
// drops (and counts) a span that would not fit its queue. The batch
// processor would drop it too, but only counts it for a debug log.
type bounded struct {
	sdktrace.SpanProcessor // the batch span processor
	max                    int64
	held                   atomic.Int64  // ended and queued, not yet handed to the exporter
	dropped                atomic.Uint64 // since the last export
}

// OnEnd implements sdktrace.SpanProcessor.
func (q *bounded) OnEnd(s sdktrace.ReadOnlySpan) {
	if !s.SpanContext().IsSampled() {
		return // the batch processor drops it too
	}
	if q.held.Add(1) > q.max {
		q.held.Add(-1)
		q.dropped.Add(1)
		return
	}
	q.SpanProcessor.OnEnd(s)
}

// countingExporter is the exporter of a bounded queue: the spans it is
// handed leave the queue, and the drops since its last export are
// reported.
type countingExporter struct {
	sdktrace.SpanExporter
	q       *bounded
	onError func(error)
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *countingExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.q.held.Add(-int64(len(spans)))
	if n := e.q.dropped.Swap(0); n > 0 && e.onError != nil {
		e.onError(errDropped(n))
	}
	return e.SpanExporter.ExportSpans(ctx, spans)
}

// errDropped is the error reported when the export queue was full.
type errDropped uint64

func (e errDropped) Error() string {
	return fmt.Sprintf("%d spans dropped: the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE spans)", uint64(e))
}

// parseSampler is the sampler of an OTEL_TRACES_SAMPLER value and its
// argument (the [telemetry] sampler and sampler_arg keys take the same).
func parseSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("sampler argument %q: want a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	base, parent := strings.CutPrefix(name, "parentbased_")
	var s sdktrace.Sampler
	switch base {
	case "always_on":
		s = sdktrace.AlwaysSample()
	case "always_off":
		s = sdktrace.NeverSample()
	case "traceidratio":
		s = sdktrace.TraceIDRatioBased(ratio)
	default:
		return nil, fmt.Errorf("sampler %q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
	}
	if parent {
		s = sdktrace.ParentBased(s)
	}
	return s, nil
}

// The span kinds as start options, made once (an option is an interface
// value: each made at a call allocates).
var (
	serverKind = trace.WithSpanKind(trace.SpanKindServer)
	clientKind = trace.WithSpanKind(trace.SpanKindClient)
)

// attrLists hold the attribute lists a span is given when it ends:
// SetAttributes copies them, but a list on the stack would escape through
// the trace.Span interface, one allocation of 768 bytes per span.
var attrLists = sync.Pool{New: func() any { l := make([]attribute.KeyValue, 0, 12); return &l }}

// setAttributes sets the attributes add appends to an empty list on s.
func setAttributes(s trace.Span, add func([]attribute.KeyValue) []attribute.KeyValue) {
	lp := attrLists.Get().(*[]attribute.KeyValue)
	l := add((*lp)[:0])
	s.SetAttributes(l...)
	clear(l) // let the strings go
	*lp = l[:0]
	attrLists.Put(lp)
}

// maxValueLen bounds a span name's parts and a string attribute, in
// bytes: many come from the client (tool names, URIs, ids, methods).
const maxValueLen = 1024

// clean returns s cut to maxValueLen bytes (at a character boundary) and
// with invalid UTF-8 replaced: a protobuf string must be valid UTF-8, or
// the exporter cannot encode the batch it is in.
func clean(s string) string {
	if len(s) <= 32 { // most are short and ASCII: checked here, without a call
		i := 0
		for i < len(s) && s[i] < utf8.RuneSelf {
			i++
		}
		if i == len(s) {
			return s
		}
	}
	if len(s) > maxValueLen {
		i := maxValueLen
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}
