package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/mcp"
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
	start time.Duration // since the request's start
	wait0 time.Duration // the request's queue wait before the call
}

// CallStart implements plugins.CallHook.
func (h callHook) CallStart(ctx context.Context, plugin, method, target string, host runtime.Host) (context.Context, runtime.Host) {
	st := stateFrom(ctx)
	if st == nil {
		return ctx, host
	}
	st.plugin = plugin
	st.callTarget(target)
	st.calls++
	st.cur = callInfo{start: st.elapsed(), wait0: st.queueWait}
	if st.sampled() { // the plugin span follows its request's
		st.sp.callCtx, st.sp.call = st.t.tr.tr.Start(st.sp.reqCtx, "plugin "+clean(plugin), trace.WithTimestamp(st.ri.Start.Add(st.cur.start)))
	}
	st.host = host
	return ctx, (*callHost)(st)
}

// CallEnd implements plugins.CallHook.
func (h callHook) CallEnd(ctx context.Context, err error) {
	st := stateFrom(ctx)
	if st == nil {
		return
	}
	ci := &st.cur
	wait := st.queueWait - ci.wait0
	el := st.elapsed()
	run := max(el-ci.start-wait, 0)
	st.runTime += run
	if st.sp == nil || st.sp.call == nil {
		return
	}
	s := st.sp.call
	kind := ""
	if err != nil {
		kind = kindOf(err)
		s.SetStatus(codes.Error, kind)
	}
	setAttributes(s, func(attrs []attribute.KeyValue) []attribute.KeyValue {
		attrs = append(attrs, attribute.String("wasmcp.plugin.name", clean(st.plugin)),
			attribute.Float64("wasmcp.queue.wait_seconds", wait.Seconds()),
			attribute.Float64("wasmcp.run.seconds", run.Seconds()),
			attribute.Int("wasmcp.host_calls", int(st.hostCalls)))
		if kind != "" {
			attrs = append(attrs, attribute.String("error.type", kind))
		}
		return attrs
	})
	s.End(trace.WithTimestamp(st.ri.Start.Add(el)))
	st.sp.call, st.sp.callCtx = nil, nil
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

// callHost is the runtime.Host of a request's plugin call: st.host,
// its host calls counted, its http/fetch traffic and its capability
// denials (each audited).
type callHost reqState

func (c *callHost) Log(ctx context.Context, level int32, msg []byte) { c.host.Log(ctx, level, msg) }

// MayCall implements runtime.Granter for the host it wraps.
func (c *callHost) MayCall(method string) bool { return runtime.MayCall(c.host, method) }

func (c *callHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	st := (*reqState)(c)
	var sp trace.Span
	switch method {
	case abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList:
		if st.sp != nil && st.sp.call != nil { // a kv operation is a span of its own
			_, sp = st.t.tr.tr.Start(st.sp.callCtx, method, trace.WithTimestamp(st.now()))
		}
	}
	res, errno := st.host.Call(ctx, method, params)
	if sp != nil {
		if errno < 0 {
			name := errnoName(errno)
			sp.SetAttributes(attribute.String("error.type", name))
			sp.SetStatus(codes.Error, name)
		}
		sp.End(trace.WithTimestamp(st.now()))
	}
	st.hostCalls++
	if method == abi.HostHTTPFetch {
		st.httpReqs++
		st.httpSent += int64(len(params))
		st.httpRecv += int64(len(res))
	}
	if errno == abi.ErrDenied {
		st.denials++
		st.t.denied(st, method, deniedDetail(method, params))
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
	t.denials.write(st.plugin, kind, st.ri.Request, st.target, detail)
	if t.metrics != nil {
		t.metrics.denial(st.plugin, kind)
	}
}

// deniedDetail is what a denied host call asked for, for its record.
func deniedDetail(method string, params []byte) string {
	switch method {
	case abi.HostHTTPFetch:
		return stringMember(params, "url")
	case abi.HostConfigGet:
		return stringMember(params, "key")
	}
	return ""
}

// DenialAudit writes the audit record of each capability denial of one
// request's plugin calls on a server without telemetry (with telemetry,
// CallHook writes them and counts them too). Use it as the request's
// plugins.CallHook; it serves one request, whose calls run one after
// the other.
type DenialAudit struct {
	log    *DenialLog
	r      *mcp.Request
	plugin string
	target string
	h      runtime.Host
}

// DenialAuditOf returns the DenialAudit of request r, writing to log
// (nil writes nothing): a value, for the caller to keep with the rest of
// the request's state and use by pointer.
func DenialAuditOf(log *DenialLog, r *mcp.Request) DenialAudit {
	return DenialAudit{log: log, r: r}
}

// CallStart implements plugins.CallHook: the call's host calls are
// watched for denials.
func (d *DenialAudit) CallStart(ctx context.Context, plugin, method, target string, host runtime.Host) (context.Context, runtime.Host) {
	d.plugin, d.target, d.h = plugin, target, host
	return ctx, (*auditHost)(d)
}

// CallEnd implements plugins.CallHook.
func (d *DenialAudit) CallEnd(context.Context, error) {}

// Denied writes the record of a denial found outside the host calls (an
// input request the grants refuse); kind names the capability.
func (d *DenialAudit) Denied(kind, detail string) {
	d.log.write(d.plugin, kind, d.r, d.target, detail)
}

// auditHost is the runtime.Host of a DenialAudit's call.
type auditHost DenialAudit

func (a *auditHost) Log(ctx context.Context, level int32, msg []byte) { a.h.Log(ctx, level, msg) }

// MayCall implements runtime.Granter for the host it wraps.
func (a *auditHost) MayCall(method string) bool { return runtime.MayCall(a.h, method) }

func (a *auditHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	res, errno := a.h.Call(ctx, method, params)
	if errno == abi.ErrDenied {
		a.log.write(a.plugin, method, a.r, a.target, deniedDetail(method, params))
	}
	return res, errno
}

// QueueHook wraps h so that the request of ctx accounts the time its
// plugin call waits in the instance queue; it returns h itself outside an
// observed request.
func QueueHook(ctx context.Context, h runtime.QueueHook) runtime.QueueHook {
	st := stateFrom(ctx)
	if st == nil {
		return h
	}
	st.queue = h
	return (*queueHook)(st)
}

// queueHook is the runtime.QueueHook of a request's plugin call:
// st.queue, the wait timed.
type queueHook reqState

func (q *queueHook) Waiting() {
	q.queued = true
	q.waitStart = (*reqState)(q).elapsed()
	q.queue.Waiting()
}

func (q *queueHook) Resume(ctx context.Context) error {
	q.queueWait += (*reqState)(q).elapsed() - q.waitStart
	return q.queue.Resume(ctx)
}

// WrapTransport wraps rt (a plugin's http/fetch transport) with a CLIENT
// span per request and the traceparent header injected; rt itself when
// tracing is off.
func (t *Telemetry) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	if t == nil || t.tr == nil {
		return rt
	}
	return &tracingTransport{rt: rt, t: t}
}

type tracingTransport struct {
	rt http.RoundTripper
	t  *Telemetry
}

func (tt *tracingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	st := stateFrom(req.Context())
	if st == nil || st.sp == nil || !st.sp.req.SpanContext().IsValid() {
		return tt.rt.RoundTrip(req) // not within a traced request
	}
	out := req.Clone(req.Context())
	if st.sp.call == nil { // sampled out: the context is passed on all the same
		inject(st.sp.reqCtx, out.Header)
		return tt.rt.RoundTrip(out)
	}
	ctx, sp := tt.t.tr.tr.Start(st.sp.callCtx, req.Method, clientKind, trace.WithTimestamp(st.now()))
	inject(ctx, out.Header)
	resp, err := tt.rt.RoundTrip(out)
	end := st.now()
	u := *req.URL
	u.RawQuery, u.Fragment, u.User = "", "", nil
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attribute.String("http.request.method", clean(req.Method)), attribute.String("url.full", clean(u.String())),
		attribute.String("server.address", clean(req.URL.Hostname())))
	if p := req.URL.Port(); p != "" {
		if n, err := strconv.Atoi(p); err == nil {
			attrs = append(attrs, attribute.Int("server.port", n))
		}
	}
	switch {
	case err != nil:
		attrs = append(attrs, attribute.String("error.type", "_OTHER"))
		sp.SetStatus(codes.Error, "request failed")
	case resp.StatusCode >= 400:
		attrs = append(attrs, attribute.Int("http.response.status_code", resp.StatusCode), attribute.String("error.type", strconv.Itoa(resp.StatusCode)))
		sp.SetStatus(codes.Error, "")
	default:
		attrs = append(attrs, attribute.Int("http.response.status_code", resp.StatusCode))
	}
	sp.SetAttributes(attrs...)
	sp.End(trace.WithTimestamp(end))
	if err != nil {
		return nil, err
	}
	return resp, nil
}
