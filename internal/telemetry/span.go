package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"time"
)

// wasmcp records its spans itself instead of through the OpenTelemetry
// SDK: a span is a value inside the request's state (no allocation), its
// attributes are set only when it is sampled, and it is encoded as OTLP
// protobuf once, when it ends, into the batch the exporter sends. The
// SDK's spans cost about 12 µs of CPU per traced request (two spans
// created, ended, converted to protobuf structs and marshalled); these
// cost well under one (docs/performance.md).

// Span kinds (the OTLP enum).
const (
	kindInternal = 1
	kindServer   = 2
	kindClient   = 3
)

// spanContext identifies a span and what its children inherit.
type spanContext struct {
	traceID    [16]byte
	spanID     [8]byte
	sampled    bool
	traceState string // W3C tracestate as received
}

func (sc *spanContext) valid() bool { return sc.traceID != [16]byte{} && sc.spanID != [8]byte{} }

// span is one span in flight. The zero span is not started. Its
// attributes and status are not kept: they are encoded after it when it
// ends (spanWriter), so that a request's state stays small.
type span struct {
	spanContext
	parentID [8]byte
	remote   bool // the parent came from the request
	kind     byte
	name     string
	target   string // the name is name + " " + target when set

	start, end int64 // Unix nanoseconds
}

// sampler decides whether a new root or child span is recorded.
type sampler struct {
	parentBased bool
	// root: always (ratio 1), never (0), or by trace ID below bound.
	bound uint64
	all   bool
}

// sample reports whether a span of traceID with parent (valid or not)
// is recorded, as the OpenTelemetry samplers of the same names do.
func (s *sampler) sample(traceID *[16]byte, parent *spanContext, hasParent bool) bool {
	if s.parentBased && hasParent {
		return parent.sampled
	}
	if s.all {
		return true
	}
	return binary.BigEndian.Uint64(traceID[8:16])>>1 < s.bound
}

func newSampler(parentBased bool, ratio float64) sampler {
	if ratio >= 1 {
		return sampler{parentBased: parentBased, all: true}
	}
	return sampler{parentBased: parentBased, bound: uint64(ratio * (1 << 63))}
}

// tracer starts spans and batches the ended ones for its exporter.
type tracer struct {
	sampler  sampler
	exp      exporter
	resource []byte // the encoded Resource
	scope    []byte // the encoded InstrumentationScope
	delay    time.Duration
	maxQueue int
	batch    int
	onError  func(error)

	mu      sync.Mutex
	buf     []byte // encoded Span messages, each as a ScopeSpans.spans field
	spare   []byte
	queued  int
	dropped uint64
	closed  bool

	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	exportMu sync.Mutex // one export at a time (the loop, Shutdown)
	out      []byte     // the head of the request being sent, reused
}

// exporter sends one encoded ExportTraceServiceRequest, head then spans
// (not copied into one buffer).
type exporter interface {
	export(ctx context.Context, head, spans []byte) error
	shutdown(ctx context.Context) error
}

func newTracer(s sampler, exp exporter, resource, scope []byte, delay time.Duration, maxQueue, batch int, onError func(error)) *tracer {
	tr := &tracer{sampler: s, exp: exp, resource: resource, scope: scope, delay: delay, maxQueue: maxQueue, batch: batch,
		onError: onError, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go tr.loop()
	return tr
}

// newID fills the IDs of a new span: a new trace unless parent is valid.
func newIDs(sc *spanContext, parent *spanContext) {
	if parent != nil && parent.valid() {
		sc.traceID = parent.traceID
		sc.traceState = parent.traceState
	} else {
		for sc.traceID == [16]byte{} {
			binary.BigEndian.PutUint64(sc.traceID[:8], rand.Uint64())
			binary.BigEndian.PutUint64(sc.traceID[8:], rand.Uint64())
		}
	}
	sc.spanID = newSpanID()
}

// newSpanID is a new span ID (never zero).
func newSpanID() [8]byte {
	var id [8]byte
	for id == [8]byte{} {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// startRoot starts s as the request's span below parent (a remote span
// context, or zero). Whether it is sampled is decided here.
func (tr *tracer) startRoot(s *span, parent *spanContext, name string, kind byte, start time.Time) {
	hasParent := parent.valid()
	newIDs(&s.spanContext, parent)
	if hasParent {
		s.parentID, s.remote = parent.spanID, true
	}
	s.sampled = tr.sampler.sample(&s.traceID, parent, hasParent)
	s.name, s.kind, s.start = name, kind, start.UnixNano()
}

// startChild starts s as a child of the recording span parent.
func (tr *tracer) startChild(s *span, parent *spanContext, name string, kind byte, start time.Time) {
	*s = span{}
	newIDs(&s.spanContext, parent)
	s.parentID, s.sampled = parent.spanID, true
	s.name, s.kind, s.start = name, kind, start.UnixNano()
}

// The batch's bytes are bounded too: at maxBatchBytes it is exported
// without waiting for a full batch, past maxQueueBytes spans are dropped.
const (
	maxBatchBytes = 4 << 20
	maxQueueBytes = 16 << 20
)

// queue queues the n spans in *bp (spanWriter.end's) for export and puts the
// buffer back; they are dropped when the queue is full or closed.
func (tr *tracer) queue(bp *[]byte, n int) {
	b := *bp
	tr.mu.Lock()
	if tr.closed || tr.queued+n > tr.maxQueue || len(tr.buf)+len(b) > maxQueueBytes {
		tr.dropped += uint64(n)
		tr.mu.Unlock()
		scratch.Put(bp)
		return
	}
	tr.buf = append(tr.buf, b...)
	tr.queued += n
	full := tr.queued >= tr.batch || len(tr.buf) >= maxBatchBytes
	tr.mu.Unlock()
	scratch.Put(bp)
	if full {
		select {
		case tr.kick <- struct{}{}:
		default:
		}
	}
}

func (tr *tracer) loop() {
	defer close(tr.done)
	t := time.NewTimer(tr.delay)
	defer t.Stop()
	for {
		select {
		case <-tr.stop:
			return
		case <-tr.kick:
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		tr.flush(ctx)
		cancel()
		t.Reset(tr.delay)
	}
}

// flush exports the queued spans in one request.
func (tr *tracer) flush(ctx context.Context) error {
	tr.exportMu.Lock()
	defer tr.exportMu.Unlock()
	tr.mu.Lock()
	spans, n := tr.buf, tr.queued
	tr.buf, tr.spare, tr.queued = tr.spare[:0], nil, 0
	dropped := tr.dropped
	tr.dropped = 0
	tr.mu.Unlock()
	defer func() {
		tr.mu.Lock()
		if tr.spare == nil {
			tr.spare = spans[:0]
		}
		tr.mu.Unlock()
	}()
	if dropped > 0 && tr.onError != nil {
		tr.onError(errDropped(dropped))
	}
	if n == 0 {
		return nil
	}
	tr.out = appendRequestHead(tr.out[:0], tr.resource, tr.scope, len(spans))
	err := tr.exp.export(ctx, tr.out, spans)
	if err != nil && tr.onError != nil {
		tr.onError(err)
	}
	return err
}

// shutdown exports what is queued and stops the exporter.
func (tr *tracer) shutdown(ctx context.Context) error {
	tr.mu.Lock()
	if tr.closed {
		tr.mu.Unlock()
		return nil
	}
	tr.closed = true
	tr.mu.Unlock()
	close(tr.stop)
	<-tr.done
	err := tr.flush(ctx) // closed refuses new spans, the queued ones go out
	if e := tr.exp.shutdown(ctx); err == nil {
		err = e
	}
	return err
}
