package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/runtime"
)

// Outcomes of a plugin call, the values of the outcome label and, for
// failures, of error.type. Outcome values are set by the composition root
// (SetOutcome), which knows the error types.
const (
	OutcomeOK        = "ok"
	OutcomeToolError = "tool_error" // a tool result with isError
	OutcomeTimeout   = "timeout"
	OutcomeTrap      = "trap" // trap, exit, bad status or module
	OutcomeMemory    = "memory"
	OutcomeOutput    = "output_cap"
	OutcomeBusy      = "busy"
	OutcomeDenied    = "denied" // a grant refused something the call asked for
	OutcomeCancelled = "cancelled"
	OutcomeError     = "error" // any other failure (invalid result, plugin error...)
)

// Observer returns the mcp.Observer of t (nil when t is nil).
func (t *Telemetry) Observer() mcp.Observer {
	if t == nil {
		return nil
	}
	return t
}

// reqState is what one request accumulates; it rides in the context the
// provider gets. Its fields are written by the request's own goroutine
// (the provider, the plugin call and its host calls run on it). Its
// times are durations since ri.Start, and with its spans (tracedState)
// it stays within 320 bytes, a size class of the allocator (224 without
// them: TestStateSize).
type reqState struct {
	// The request's context, its Value answering stateKey with the
	// reqState itself (one allocation less than context.WithValue).
	context.Context

	t      *Telemetry
	ri     *mcp.RequestInfo
	sp     *reqSpans // nil without tracing
	target string    // tool or prompt name, or resource URI (see readTarget)

	plugin    string // the plugin that served it, once known
	outcome   string
	waitStart time.Duration // since ri.Start
	queueWait time.Duration
	runTime   time.Duration // plugin calls, queue wait excluded
	httpSent  int64
	httpRecv  int64
	calls     int32
	hostCalls int32
	denials   int32
	httpReqs  int32
	read      bool // target is known
	queued    bool

	// Embedded so that a plugin call allocates none of them.
	cur   callInfo
	host  runtime.Host      // the plugin call's, which callHost wraps
	queue runtime.QueueHook // the plugin call's, which queueHook wraps
}

// reqSpans are a traced request's spans, allocated with its reqState.
type reqSpans struct {
	// req is the SERVER span, not recording when sampled out; reqCtx is
	// a context of it (and of the trace context and baggage received),
	// the parent of the plugin call spans.
	req    trace.Span
	reqCtx context.Context
	// call is the span of the plugin call in flight, nil when none or
	// sampled out; callCtx is a context of it, the parent of its spans.
	call    trace.Span
	callCtx context.Context
}

type tracedState struct {
	st reqState
	sp reqSpans
}

// now is the time: the request's start plus the monotonic time since
// (half the cost of time.Now, which reads the wall clock too).
func (st *reqState) now() time.Time { return st.ri.Start.Add(st.elapsed()) }

// elapsed is the time since the request started.
func (st *reqState) elapsed() time.Duration { return time.Since(st.ri.Start) }

// unix is the time d after the request started, in Unix nanoseconds.
func (st *reqState) unix(d time.Duration) int64 { return st.ri.Start.UnixNano() + int64(d) }

// sampled reports whether the request's span is recorded.
func (st *reqState) sampled() bool { return st.sp != nil && st.sp.req.SpanContext().IsSampled() }

type stateKey struct{}

// Value implements context.Context.
func (st *reqState) Value(key any) any {
	if _, ok := key.(stateKey); ok {
		return st
	}
	return st.Context.Value(key)
}

func stateFrom(ctx context.Context) *reqState {
	st, _ := ctx.Value(stateKey{}).(*reqState)
	return st
}

// RequestStart implements mcp.Observer: it starts the SERVER span, its
// parent from params._meta (traceparent, tracestate, baggage: SEP-414)
// else from the HTTP traceparent header.
func (t *Telemetry) RequestStart(ctx context.Context, ri *mcp.RequestInfo) context.Context {
	var st *reqState
	if t.tr != nil {
		ts := &tracedState{}
		st = &ts.st
		st.sp = &ts.sp
	} else {
		st = &reqState{}
	}
	st.t, st.ri = t, ri
	st.start()
	st.Context = ctx
	return st
}

// readTarget reads the target of the request from its params, unless
// the plugin call told it (callTarget): most requests never parse it.
func (st *reqState) readTarget() {
	if st.read {
		return
	}
	st.read = true
	r := st.ri.Request
	switch r.Method {
	case "tools/call", "prompts/get":
		st.target = stringMember(r.Params, "name")
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		st.target = stringMember(r.Params, "uri")
	}
}

// callTarget takes the target of the request from its plugin call (the
// name the registry found).
func (st *reqState) callTarget(target string) {
	if st.read {
		return
	}
	st.read = true
	switch st.ri.Request.Method {
	case "tools/call", "prompts/get", "resources/read":
		st.target = target
	default:
		st.read = false
	}
}

// start starts the span of the request, its parent the trace context
// the request came with (extract). Whether it is sampled is decided here;
// its name and attributes are set when it ends.
func (st *reqState) start() {
	t, ri := st.t, st.ri
	if t.tr != nil {
		st.sp.reqCtx, st.sp.req = t.tr.tr.Start(t.extract(ri), "mcp", serverKind, trace.WithTimestamp(ri.Start))
	}
}

// endSpan ends the request's span el after its start, with the
// request's attributes, rpc.response.status_code code when set,
// http.response.status_code when the request has a status, and
// error.type and an error status when errType is set.
func (st *reqState) endSpan(el time.Duration, errType, code string) {
	st.readTarget()
	name := st.ri.Request.Method
	if name == "" {
		name = "mcp" // a batch refused whole, a request refused unread
	}
	name = clean(name)
	switch name {
	case "tools/call", "prompts/get":
		if st.target != "" {
			name += " " + clean(st.target)
		}
	} // a resource URI is an attribute, not part of the name
	s := st.sp.req
	s.SetName(name)
	setAttributes(s, func(attrs []attribute.KeyValue) []attribute.KeyValue {
		attrs = st.requestAttrs(attrs)
		if code != "" {
			attrs = append(attrs, attribute.String("rpc.response.status_code", code))
		}
		if st.ri.Status != 0 {
			attrs = append(attrs, attribute.Int("http.response.status_code", st.ri.Status))
		}
		if errType != "" {
			attrs = append(attrs, attribute.String("error.type", errType))
		}
		return attrs
	})
	if errType != "" {
		s.SetStatus(codes.Error, errType)
	}
	s.End(trace.WithTimestamp(st.ri.Start.Add(el)))
}

// RequestAnswered implements mcp.Observer: the SERVER span and the
// operation duration of a request answered without running (initialize,
// refusals before dispatch); error.type is "busy" for the limiter's busy
// answers, else errorType's for the JSON-RPC error.
func (t *Telemetry) RequestAnswered(ri *mcp.RequestInfo, err *jsonrpc.Error) {
	errType, code := "", ""
	if err != nil {
		code = strconv.Itoa(err.Code)
		errType = errorType(err, false, "")
		if v, ok := jsonscan.Member(err.Data, "busy"); ok && string(v) == "true" {
			errType = OutcomeBusy
		}
	}
	t.answered(ri, errType, code)
}

// answered records request ri answered now without running: its span
// (with rpc.response.status_code code, if any) and its duration.
func (t *Telemetry) answered(ri *mcp.RequestInfo, errType, code string) {
	if t.tr == nil && t.metrics == nil {
		return
	}
	el := time.Since(ri.Start)
	if t.tr != nil {
		st := &tracedState{}
		st.st.t, st.st.ri, st.st.sp = t, ri, &st.sp
		st.st.start()
		if st.st.sampled() {
			st.st.endSpan(el, errType, code)
		}
	}
	if t.metrics != nil {
		t.metrics.operation(ri.Request.Method, "", errType, el)
	}
}

// WrapAccessControl wraps mw, the HTTP access control in front of the
// MCP endpoint path, so that a POST it refuses itself (401, 403) is
// observed as an MCP request answered with the HTTP status as error.type;
// its method is the Mcp-Method header's (the body is not read). mw itself
// when t records neither traces nor metrics.
func (t *Telemetry) WrapAccessControl(path string, mw func(http.Handler) http.Handler) func(http.Handler) http.Handler {
	if t == nil || (t.tr == nil && t.metrics == nil) {
		return mw
	}
	return func(next http.Handler) http.Handler {
		passed := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if p, ok := r.Context().Value(passKey{}).(*passState); ok {
				p.reached = true
				w = p.w // the MCP handler writes to the connection's writer
			}
			next.ServeHTTP(w, r)
		})
		inner := mw(passed)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodPost || r.URL.Path != path {
				inner.ServeHTTP(w, r)
				return
			}
			p := &passState{w: w}
			start := time.Now()
			rec := &statusWriter{ResponseWriter: w}
			inner.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), passKey{}, p)))
			if p.reached || rec.status < 400 {
				return
			}
			ri := &mcp.RequestInfo{Request: mcp.HeaderRequest(r.Header), Transport: "tcp", Header: r.Header, Start: start, Status: rec.status}
			t.answered(ri, strconv.Itoa(rec.status), "")
		})
	}
}

type passKey struct{}

// passState is what WrapAccessControl learns of one request.
type passState struct {
	reached bool                // the access control passed it on
	w       http.ResponseWriter // the writer it came with
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// requestAttrs appends the semconv attributes of the request's span to
// attrs.
func (st *reqState) requestAttrs(attrs []attribute.KeyValue) []attribute.KeyValue {
	ri, r := st.ri, st.ri.Request
	if r.Method != "" {
		attrs = append(attrs, attribute.String("mcp.method.name", clean(r.Method)))
	}
	if ri.ID != "" {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", clean(ri.ID)))
	}
	attrs = append(attrs, attribute.String("network.transport", ri.Transport))
	if r.ProtocolVersion != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", clean(r.ProtocolVersion)))
	}
	if !r.Stateless && r.SessionID != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", clean(r.SessionID)))
	}
	switch r.Method {
	case "tools/call":
		if st.target != "" {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", clean(st.target)))
		}
		attrs = append(attrs, attribute.String("gen_ai.operation.name", "execute_tool"))
	case "prompts/get":
		if st.target != "" {
			attrs = append(attrs, attribute.String("gen_ai.prompt.name", clean(st.target)))
		}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		if st.target != "" {
			attrs = append(attrs, attribute.String("mcp.resource.uri", clean(st.target)))
		}
	}
	return attrs
}

// extract returns a context of the trace context and baggage request ri
// came with: from params._meta (as the engine read it, else scanned for)
// when it has a traceparent, else from the HTTP header; with neither, or
// an invalid one, the request starts a new trace.
func (t *Telemetry) extract(ri *mcp.RequestInfo) context.Context {
	meta, ok := ri.Request.Meta()
	if !ok {
		meta, ok = member(ri.Request.Params, "_meta")
	}
	if !ok || jsonscan.Kind(meta) != 'o' {
		meta = nil
	}
	return extractFrom(context.Background(), meta, ri.Header)
}

// RequestEnd implements mcp.Observer: it ends the span and records the
// operation duration and the plugin call's outcome.
func (t *Telemetry) RequestEnd(ctx context.Context, ri *mcp.RequestInfo, result []byte, err error) {
	st := stateFrom(ctx)
	if st == nil {
		return
	}
	dur := st.elapsed()
	toolErr := ri.ToolError
	outcome := ""
	if st.plugin != "" { // a plugin ran: its outcome (set, or from the result)
		outcome = st.outcome
	}
	if st.plugin != "" && outcome == "" {
		outcome = OutcomeOK
		if err != nil || ri.Nonconforming { // the engine refused the result
			outcome = OutcomeError
		} else if toolErr {
			outcome = OutcomeToolError
		}
	}
	if st.denials > 0 && (outcome == OutcomeOK || outcome == OutcomeToolError) {
		outcome = OutcomeDenied
	}
	errType := errorType(err, toolErr, outcome)
	if st.sampled() {
		code := ""
		if err != nil {
			if je := (*jsonrpc.Error)(nil); errors.As(err, &je) {
				code = strconv.Itoa(je.Code)
			}
		}
		st.endSpan(dur, errType, code)
	}
	if m := t.metrics; m != nil {
		if st.plugin != "" {
			m.call(st, ri.Request.Method, outcome, errType, dur)
		} else {
			m.operation(ri.Request.Method, "", errType, dur)
		}
	}
	if t.cfg.Audit && st.plugin != "" {
		st.readTarget()
		t.log.Info("call", "audit", "call", "plugin", st.plugin, "method", ri.Request.Method, "target", st.target,
			"principal", principal(ri.Request), "outcome", outcome, "duration_ms", dur.Milliseconds())
	}
}

// principal names the caller for the audit log: the authenticated
// principal, else the legacy session.
func principal(r *mcp.Request) string {
	if r.Principal != "" {
		return r.Principal
	}
	if r.SessionID != "" {
		return "session:" + r.SessionID
	}
	return ""
}

// errorType is the error.type of a request: the outcome of a failed
// plugin call (timeout, trap...), tool_error for a tool result with
// isError, else the JSON-RPC error code; "" on success.
func errorType(err error, toolErr bool, outcome string) string {
	switch outcome {
	case "", OutcomeOK, OutcomeDenied, OutcomeError: // the error says more
	case OutcomeToolError:
		return outcome
	default:
		if err != nil || toolErr {
			return outcome
		}
	}
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			if !jsonrpc.Defined(je.Code) {
				return "_OTHER" // a plugin's own code: one series, however many codes it makes up
			}
			return strconv.Itoa(je.Code)
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return OutcomeCancelled
		}
		return "_OTHER"
	}
	if toolErr {
		return OutcomeToolError
	}
	return ""
}

// member is jsonscan.Member without the scan when obj cannot have the
// member name, holding neither name nor an escape: most params have no
// _meta, most results no isError.
func member(obj []byte, name string) ([]byte, bool) {
	if !bytes.Contains(obj, []byte(name)) && bytes.IndexByte(obj, '\\') < 0 {
		return nil, false
	}
	return jsonscan.Member(obj, name)
}

// stringMember returns the string member name of the JSON object obj, or
// "".
func stringMember(obj []byte, name string) string {
	v, ok := jsonscan.Member(obj, name)
	if !ok || jsonscan.Kind(v) != 's' {
		return ""
	}
	if n := len(v); n >= 2 && v[0] == '"' && v[n-1] == '"' && !bytes.ContainsAny(v[1:n-1], "\\\"") {
		return string(v[1 : n-1])
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return ""
	}
	return s
}

// SetOutcome records the outcome of the plugin call behind the request of
// ctx (the composition root classifies its error); it does nothing
// outside an observed request.
func SetOutcome(ctx context.Context, outcome string) {
	if st := stateFrom(ctx); st != nil {
		st.outcome = outcome
	}
}
