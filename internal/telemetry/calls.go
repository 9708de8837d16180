package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// CallHook returns the plugins.CallHook of t (nil when t is nil): the
// child span of each plugin call, its host calls counted and its
// capability denials audited.
func (t *Telemetry) CallHook() plugins.CallHook {
	if t == nil {
		return nil
	}
	return callHook{t}
}

type callHook struct{ t *Telemetry }

// callInfo is one plugin call in flight (a request's calls run one
// after the other: the input_required rounds).
type callInfo struct {
	span  trace.Span
	start time.Time
	wait0 time.Duration // the request's queue wait before the call
}

// CallStart implements plugins.CallHook.
func (h callHook) CallStart(ctx context.Context, plugin, method, target string, host runtime.Host) (context.Context, runtime.Host) {
	st := stateFrom(ctx)
	if st == nil {
		return ctx, host
	}
	st.plugin = plugin
	st.calls++
	st.cur = callInfo{start: time.Now(), wait0: st.queueWait}
	if st.span != nil && st.span.IsRecording() { // the plugin span follows its request's
		ctx, st.cur.span = h.t.tracer.Start(ctx, "plugin "+plugin, trace.WithSpanKind(trace.SpanKindInternal),
			trace.WithAttributes(attribute.String("wasmcp.plugin.name", plugin)))
	}
	st.host = countingHost{h: host, t: h.t, st: st}
	return ctx, &st.host
}

// CallEnd implements plugins.CallHook.
func (h callHook) CallEnd(ctx context.Context, err error) {
	st := stateFrom(ctx)
	if st == nil {
		return
	}
	ci := &st.cur
	wait := st.queueWait - ci.wait0
	run := time.Since(ci.start) - wait
	st.runTime += run
	if ci.span == nil {
		return
	}
	ci.span.SetAttributes(attribute.Float64("wasmcp.queue.wait_seconds", wait.Seconds()),
		attribute.Float64("wasmcp.run.seconds", run.Seconds()),
		attribute.Int("wasmcp.host_calls", st.hostCalls))
	if err != nil {
		ci.span.SetStatus(codes.Error, kindOf(err))
		ci.span.SetAttributes(attribute.String("error.type", kindOf(err)))
	}
	ci.span.End()
	ci.span = nil
}

// kindOf names a runtime failure.
func kindOf(err error) string {
	if re, ok := asRuntimeError(err); ok {
		return re.Kind.String()
	}
	return "_OTHER"
}

func asRuntimeError(err error) (*runtime.Error, bool) {
	for err != nil {
		if re, ok := err.(*runtime.Error); ok {
			return re, true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return nil, false
		}
		err = u.Unwrap()
	}
	return nil, false
}

// countingHost counts a call's host calls, its http/fetch traffic and
// its capability denials (each audited).
type countingHost struct {
	h  runtime.Host
	t  *Telemetry
	st *reqState
}

func (c *countingHost) Log(ctx context.Context, level int32, msg []byte) { c.h.Log(ctx, level, msg) }

func (c *countingHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	st := c.st
	var span trace.Span
	switch method {
	case abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList:
		if st.cur.span != nil { // a kv operation is a span of its own
			ctx, span = c.t.tracer.Start(ctx, method, trace.WithSpanKind(trace.SpanKindInternal))
		}
	}
	res, errno := c.h.Call(ctx, method, params)
	if span != nil {
		if errno < 0 {
			e := errnoName(errno)
			span.SetStatus(codes.Error, e)
			span.SetAttributes(attribute.String("error.type", e))
		}
		span.End()
	}
	st.hostCalls++
	if method == abi.HostHTTPFetch {
		st.httpReqs++
		st.httpSent += int64(len(params))
		st.httpRecv += int64(len(res))
	}
	if errno == abi.ErrDenied {
		st.denials++
		detail := ""
		switch method {
		case abi.HostHTTPFetch:
			detail = stringMember(params, "url")
		case abi.HostConfigGet:
			detail = stringMember(params, "key")
		}
		c.t.denied(st, method, detail)
	}
	return res, errno
}

// errnoName names a negative errno of the call import.
func errnoName(errno int32) string {
	switch errno {
	case abi.ErrDenied:
		return "denied"
	case abi.ErrBadParams:
		return "bad_params"
	case abi.ErrCanceled:
		return "canceled"
	case abi.ErrTooBig:
		return "too_big"
	case abi.ErrFailed:
		return "failed"
	case abi.ErrUnsupported:
		return "unsupported"
	case abi.ErrUnknown:
		return "unknown"
	}
	return strconv.Itoa(int(errno))
}

// Denied records a capability denial found outside the host calls (an
// input request the grants refuse) for the request of ctx: an audit
// record and the denials counter. kind names the capability.
func Denied(ctx context.Context, kind, detail string) {
	if st := stateFrom(ctx); st != nil && st.t != nil {
		st.denials++
		st.t.denied(st, kind, detail)
	}
}

// denied records a capability denial of the call behind st: an audit
// record (the plugin, what it asked for, the caller) and the denials
// counter.
func (t *Telemetry) denied(st *reqState, kind, detail string) {
	args := []any{"audit", "denial", "plugin", st.plugin, "capability", kind, "method", st.ri.Request.Method,
		"target", st.target + st.uri, "principal", principal(st.ri.Request)}
	if detail != "" {
		args = append(args, "detail", detail)
	}
	t.log.Warn("capability denied", args...)
	if t.metrics != nil {
		t.metrics.denial(st.plugin, kind)
	}
}

// QueueHook wraps h so that the request of ctx accounts the time its
// plugin call waits in the instance queue; it returns h itself outside an
// observed request.
func QueueHook(ctx context.Context, h runtime.QueueHook) runtime.QueueHook {
	st := stateFrom(ctx)
	if st == nil {
		return h
	}
	st.qhook = timedQueueHook{h: h, st: st}
	return &st.qhook
}

type timedQueueHook struct {
	h  runtime.QueueHook
	st *reqState
}

func (q *timedQueueHook) Waiting() {
	q.st.queued = true
	q.st.waitStart = time.Now()
	q.h.Waiting()
}

func (q *timedQueueHook) Resume(ctx context.Context) error {
	q.st.queueWait += time.Since(q.st.waitStart)
	return q.h.Resume(ctx)
}

// WrapTransport wraps rt (a plugin's http/fetch transport) with a CLIENT
// span per request and the traceparent header injected; rt itself when
// tracing is off.
func (t *Telemetry) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if t == nil || t.tracer == nil {
		return rt
	}
	return &tracingTransport{rt: rt, t: t}
}

type tracingTransport struct {
	rt http.RoundTripper
	t  *Telemetry
}

func (tt *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return tt.rt.RoundTrip(req) // not within a traced request
	}
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	attrs := []attribute.KeyValue{
		attribute.String("http.request.method", req.Method),
		attribute.String("url.full", u.String()),
		attribute.String("server.address", req.URL.Hostname()),
	}
	if p := req.URL.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	ctx, span := tt.t.tracer.Start(ctx, req.Method, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	defer span.End()
	out := req.Clone(ctx)
	tt.t.prop.Inject(ctx, propagation.HeaderCarrier(out.Header))
	resp, err := tt.rt.RoundTrip(out)
	if err != nil {
		span.SetStatus(codes.Error, "request failed")
		span.SetAttributes(attribute.String("error.type", "_OTHER"))
		return nil, err
	}
	span.SetAttributes(attribute.Int("http.response.status_code", resp.StatusCode))
	if resp.StatusCode >= 400 {
		span.SetStatus(codes.Error, "")
		span.SetAttributes(attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
	}
	return resp, nil
}
