package wasip2

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/wasmcp/wasmcp/hostapi"
	cm "github.com/wasmcp/wasmcp/internal/component"
)

// HTTPClient sends the requests of wasi:http/outgoing-handler. It owns
// the policy: which URLs and addresses may be reached, redirects, body
// and time caps; *hostapi.Host is one, with http/fetch's. The response
// it returns must have its body read already (hostapi.Host.Do does), so
// that reading it does not block. An error wrapping hostapi.ErrHTTPDenied
// is HTTP-request-denied, hostapi.ErrHTTPTooBig a body-size error.
type HTTPClient interface {
	Do(ctx context.Context, req *http.Request) (*http.Response, error)
}

// Bounds on the headers a component builds.
const (
	maxFields     = 256      // entries of one fields
	maxFieldBytes = 64 << 10 // their names and values
)

// fields is a wasi:http fields (headers or trailers): entries in order,
// names lower-cased.
type fields struct {
	entries   []field
	immutable bool
}

type field struct {
	name  string
	value []byte
}

func (f *fields) size() int {
	n := 0
	for _, e := range f.entries {
		n += len(e.name) + len(e.value)
	}
	return n
}

func (f *fields) clone() *fields {
	return &fields{entries: append([]field(nil), f.entries...)}
}

// headerErr is a header-error case.
type headerErr string

func (e headerErr) Error() string { return "wasi:http header-error " + string(e) }

// check validates a name and value as a request header hostapi would
// send.
func checkField(name string, value []byte) error {
	if !hostapi.ValidHeader(name, string(value)) {
		return headerErr("invalid-syntax")
	}
	if hostapi.ForbiddenHeader(name) {
		return headerErr("forbidden")
	}
	return nil
}

// add appends entries, within the bounds (past them a trap).
func (f *fields) add(name string, values ...[]byte) error {
	if f.immutable {
		return headerErr("immutable")
	}
	for _, v := range values {
		if err := checkField(name, v); err != nil {
			return err
		}
	}
	n := f.size()
	for _, v := range values {
		n += len(name) + len(v)
	}
	if len(f.entries)+len(values) > maxFields || n > maxFieldBytes {
		return fmt.Errorf("wasip2: headers over %d entries or %d bytes", maxFields, maxFieldBytes)
	}
	for _, v := range values {
		f.entries = append(f.entries, field{strings.ToLower(name), v})
	}
	return nil
}

func (f *fields) del(name string) error {
	if f.immutable {
		return headerErr("immutable")
	}
	name = strings.ToLower(name)
	f.entries = deleteFunc(f.entries, func(e field) bool { return e.name == name })
	return nil
}

func deleteFunc(es []field, drop func(field) bool) []field {
	out := es[:0]
	for _, e := range es {
		if !drop(e) {
			out = append(out, e)
		}
	}
	return out
}

// outgoingRequest is an outgoing-request being built.
type outgoingRequest struct {
	method    cm.Case
	scheme    any // nil or a scheme Case
	authority any // nil or cm.Some of a string
	path      any
	headers   *fields
	body      *outgoingBody
	bodyTaken bool
}

// outgoingBody is a request (or response) body, buffered up to its cap.
type outgoingBody struct {
	buf      bytes.Buffer
	max      int
	over     bool
	finished chan struct{} // closed by finish
	streamed bool
}

func (b *outgoingBody) write(p []byte) *streamErr {
	select {
	case <-b.finished:
		return errClosed
	default:
	}
	if b.buf.Len()+len(p) > b.max {
		b.over = true
		return failed(httpErr{code: cm.Case{Name: "HTTP-request-body-size", Value: nil}})
	}
	b.buf.Write(p)
	return nil
}

func (b *outgoingBody) flush() *streamErr { return nil }

// httpErr is a wasi:http error-code, for stream errors and futures.
type httpErr struct{ code cm.Case }

func (e httpErr) Error() string { return "wasi:http " + e.code.Name }

type requestOptions struct{ connect, firstByte, betweenBytes any }

// futureResponse is a future-incoming-response: done is closed when
// resp or err is set.
type futureResponse struct {
	done   chan struct{}
	resp   *incomingResponse
	err    cm.Case
	taken  bool
	cancel context.CancelFunc
}

func (f *futureResponse) close() { f.cancel() }

type incomingResponse struct {
	status   int
	headers  *fields
	body     []byte
	consumed bool
}

type incomingBody struct {
	r        *bytes.Reader
	streamed bool
}

type futureTrailers struct{}

// outgoingResponse exists for the types' sake: no component served by
// wasmcp is given a response-outparam to set it in.
type outgoingResponse struct {
	status    uint64
	headers   *fields
	body      *outgoingBody
	bodyTaken bool
}

// bodyReader is the input-stream of an incoming-body.
type bodyReader struct{ r *bytes.Reader }

func (b bodyReader) read(n int) ([]byte, *streamErr) {
	if b.r.Len() == 0 {
		return nil, errClosed
	}
	p := make([]byte, min(n, b.r.Len()))
	k, _ := b.r.Read(p)
	return p[:k], nil
}

func (b bodyReader) blockingRead(_ context.Context, n int) ([]byte, *streamErr) { return b.read(n) }

// errorCode maps an error of the HTTPClient to an error-code.
func errorCode(err error) cm.Case {
	var he httpErr
	var dns *net.DNSError
	switch {
	case errors.As(err, &he):
		return he.code
	case errors.Is(err, hostapi.ErrHTTPDenied):
		return cm.Case{Name: "HTTP-request-denied"}
	case errors.Is(err, hostapi.ErrHTTPTooBig):
		return cm.Case{Name: "HTTP-response-body-size", Value: nil}
	case errors.Is(err, context.DeadlineExceeded):
		return cm.Case{Name: "connection-timeout"}
	case errors.As(err, &dns):
		return cm.Case{Name: "DNS-error", Value: map[string]any{"rcode": nil, "info-code": nil}}
	}
	msg := err.Error()
	if len(msg) > 256 {
		msg = msg[:256]
	}
	return cm.Case{Name: "internal-error", Value: cm.Some{Value: msg}}
}

// fieldsArg returns the live fields of argument i.
func fieldsArg(st *State, args []any, i int) (*fields, error) {
	r, err := repArg(args, i)
	if err != nil {
		return nil, err
	}
	return get[*fields](st, r)
}

// headerResult is a result<_, header-error>, or a trap.
func headerResult(err error) (any, error) {
	var he headerErr
	if errors.As(err, &he) {
		return fail(cm.Case{Name: string(he)}), nil
	}
	if err != nil {
		return nil, err
	}
	return ok(nil), nil
}

// unit is a result with neither side typed.
func unit(good bool) any { return cm.ResultValue{Err: !good} }

func httpFuncs() map[string]impl {
	const t = "wasi:http/types#"
	f := map[string]impl{}
	f[t+"[constructor]fields"] = func(ctx context.Context, st *State, args []any) (any, error) {
		return st.add(&fields{})
	}
	f[t+"[static]fields.from-list"] = func(ctx context.Context, st *State, args []any) (any, error) {
		v, err := arg(args, 0)
		if err != nil {
			return nil, err
		}
		list, isList := v.([]any)
		if !isList {
			return nil, fmt.Errorf("wasip2: from-list of a %T", v)
		}
		fs := &fields{}
		for _, e := range list {
			kv, _ := e.([]any)
			if len(kv) != 2 {
				return nil, errors.New("wasip2: a fields entry is not a pair")
			}
			name, _ := kv[0].(string)
			val, err := bytesArg(kv, 1)
			if err != nil {
				return nil, err
			}
			if err := fs.add(name, val); err != nil {
				var he headerErr
				if errors.As(err, &he) {
					return fail(cm.Case{Name: string(he)}), nil
				}
				return nil, err
			}
		}
		r, err := st.add(fs)
		if err != nil {
			return nil, err
		}
		return ok(r), nil
	}
	f[t+"[method]fields.get"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		name, err := stringArg(args, 1)
		if err != nil {
			return nil, err
		}
		name = strings.ToLower(name)
		out := []any{}
		for _, e := range fs.entries {
			if e.name == name {
				out = append(out, e.value)
			}
		}
		return out, nil
	}
	f[t+"[method]fields.has"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		name, err := stringArg(args, 1)
		if err != nil {
			return nil, err
		}
		name = strings.ToLower(name)
		for _, e := range fs.entries {
			if e.name == name {
				return true, nil
			}
		}
		return false, nil
	}
	f[t+"[method]fields.set"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		name, err := stringArg(args, 1)
		if err != nil {
			return nil, err
		}
		v, err := arg(args, 2)
		if err != nil {
			return nil, err
		}
		list, _ := v.([]any)
		vals := make([][]byte, len(list))
		for i := range list {
			if vals[i], err = bytesArg(list, i); err != nil {
				return nil, err
			}
		}
		if fs.immutable {
			return headerResult(headerErr("immutable"))
		}
		next := &fields{entries: append([]field(nil), fs.entries...)}
		_ = next.del(name)
		if err := next.add(name, vals...); err != nil {
			return headerResult(err)
		}
		fs.entries = next.entries
		return ok(nil), nil
	}
	f[t+"[method]fields.delete"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		name, err := stringArg(args, 1)
		if err != nil {
			return nil, err
		}
		return headerResult(fs.del(name))
	}
	f[t+"[method]fields.append"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		name, err := stringArg(args, 1)
		if err != nil {
			return nil, err
		}
		val, err := bytesArg(args, 2)
		if err != nil {
			return nil, err
		}
		return headerResult(fs.add(name, val))
	}
	f[t+"[method]fields.entries"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		out := make([]any, len(fs.entries))
		for i, e := range fs.entries {
			out[i] = []any{e.name, e.value}
		}
		return out, nil
	}
	f[t+"[method]fields.clone"] = func(ctx context.Context, st *State, args []any) (any, error) {
		fs, err := self[*fields](st, args)
		if err != nil {
			return nil, err
		}
		return st.add(fs.clone())
	}

	// Server-side resources: no component run by wasmcp is given one.
	for _, m := range []string{"method", "path-with-query", "scheme", "authority", "headers", "consume"} {
		f[t+"[method]incoming-request."+m] = func(ctx context.Context, st *State, args []any) (any, error) {
			return nil, errors.New("wasip2: wasi:http: there are no incoming requests")
		}
	}
	f[t+"[static]response-outparam.set"] = func(ctx context.Context, st *State, args []any) (any, error) {
		return nil, errors.New("wasip2: wasi:http: there are no response outparams")
	}

	// outgoing-request.
	f[t+"[constructor]outgoing-request"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := repArg(args, 0)
		if err != nil {
			return nil, err
		}
		fs, err := take[*fields](st, r)
		if err != nil {
			return nil, err
		}
		h := fs.clone()
		h.immutable = true
		return st.add(&outgoingRequest{method: cm.Case{Name: "get"}, headers: h})
	}
	req := func(g func(st *State, r *outgoingRequest, args []any) (any, error)) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			r, err := self[*outgoingRequest](st, args)
			if err != nil {
				return nil, err
			}
			return g(st, r, args)
		}
	}
	f[t+"[method]outgoing-request.body"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		if r.bodyTaken {
			return unit(false), nil
		}
		r.bodyTaken = true
		r.body = &outgoingBody{max: st.lim.MaxHTTPBody, finished: make(chan struct{})}
		rep, err := st.add(r.body)
		if err != nil {
			return nil, err
		}
		return ok(rep), nil
	})
	f[t+"[method]outgoing-request.method"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		return r.method, nil
	})
	f[t+"[method]outgoing-request.set-method"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		v, err := arg(args, 1)
		if err != nil {
			return nil, err
		}
		c, isCase := v.(cm.Case)
		if !isCase {
			return nil, fmt.Errorf("wasip2: a method is a %T", v)
		}
		if s, isStr := c.Value.(string); c.Name == "other" && (!isStr || !validToken(s)) || c.Name == "connect" {
			return unit(false), nil
		}
		r.method = c
		return unit(true), nil
	})
	f[t+"[method]outgoing-request.path-with-query"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		return r.path, nil
	})
	f[t+"[method]outgoing-request.set-path-with-query"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		v, err := arg(args, 1)
		if err != nil {
			return nil, err
		}
		if s, isSome := v.(cm.Some); isSome {
			p, _ := s.Value.(string)
			if u, err := url.ParseRequestURI(p); err != nil || u.Host != "" || len(p) > 8<<10 {
				return unit(false), nil
			}
		}
		r.path = v
		return unit(true), nil
	})
	f[t+"[method]outgoing-request.scheme"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		return r.scheme, nil
	})
	f[t+"[method]outgoing-request.set-scheme"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		v, err := arg(args, 1)
		if err != nil {
			return nil, err
		}
		if s, isSome := v.(cm.Some); isSome {
			if c, _ := s.Value.(cm.Case); c.Name == "other" {
				return unit(false), nil // http and https only
			}
		}
		r.scheme = v
		return unit(true), nil
	})
	f[t+"[method]outgoing-request.authority"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		return r.authority, nil
	})
	f[t+"[method]outgoing-request.set-authority"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		v, err := arg(args, 1)
		if err != nil {
			return nil, err
		}
		if s, isSome := v.(cm.Some); isSome {
			a, _ := s.Value.(string)
			if u, err := url.Parse("http://" + a); err != nil || u.Host != a || a == "" {
				return unit(false), nil
			}
		}
		r.authority = v
		return unit(true), nil
	})
	f[t+"[method]outgoing-request.headers"] = req(func(st *State, r *outgoingRequest, args []any) (any, error) {
		// A child resource: the request's headers, immutable.
		return st.add(r.headers)
	})

	// request-options: timeouts the HTTPClient's policy bounds anyway.
	f[t+"[constructor]request-options"] = func(ctx context.Context, st *State, args []any) (any, error) {
		return st.add(&requestOptions{})
	}
	for _, o := range []struct {
		name string
		at   func(*requestOptions) *any
	}{
		{"connect-timeout", func(o *requestOptions) *any { return &o.connect }},
		{"first-byte-timeout", func(o *requestOptions) *any { return &o.firstByte }},
		{"between-bytes-timeout", func(o *requestOptions) *any { return &o.betweenBytes }},
	} {
		f[t+"[method]request-options."+o.name] = func(ctx context.Context, st *State, args []any) (any, error) {
			x, err := self[*requestOptions](st, args)
			if err != nil {
				return nil, err
			}
			return *o.at(x), nil
		}
		f[t+"[method]request-options.set-"+o.name] = func(ctx context.Context, st *State, args []any) (any, error) {
			x, err := self[*requestOptions](st, args)
			if err != nil {
				return nil, err
			}
			v, err := arg(args, 1)
			if err != nil {
				return nil, err
			}
			*o.at(x) = v
			return unit(true), nil
		}
	}

	// Bodies.
	f[t+"[method]outgoing-body.write"] = func(ctx context.Context, st *State, args []any) (any, error) {
		b, err := self[*outgoingBody](st, args)
		if err != nil {
			return nil, err
		}
		if b.streamed {
			return unit(false), nil
		}
		b.streamed = true
		rep, err := st.add(&outStream{w: b})
		if err != nil {
			return nil, err
		}
		return ok(rep), nil
	}
	f[t+"[static]outgoing-body.finish"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := repArg(args, 0)
		if err != nil {
			return nil, err
		}
		b, err := take[*outgoingBody](st, r)
		if err != nil {
			return nil, err
		}
		if v, _ := arg(args, 1); v != nil {
			if s, isSome := v.(cm.Some); isSome {
				if tr, isRep := s.Value.(uint32); isRep {
					_, _ = take[*fields](st, tr) // trailers are not sent
				}
			}
		}
		b.finish()
		if b.over {
			return fail(cm.Case{Name: "HTTP-request-body-size", Value: nil}), nil
		}
		return ok(nil), nil
	}
	f[t+"[method]incoming-response.status"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := self[*incomingResponse](st, args)
		if err != nil {
			return nil, err
		}
		return uint64(r.status), nil
	}
	f[t+"[method]incoming-response.headers"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := self[*incomingResponse](st, args)
		if err != nil {
			return nil, err
		}
		return st.add(r.headers)
	}
	f[t+"[method]incoming-response.consume"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := self[*incomingResponse](st, args)
		if err != nil {
			return nil, err
		}
		if r.consumed {
			return unit(false), nil
		}
		r.consumed = true
		rep, err := st.add(&incomingBody{r: bytes.NewReader(r.body)})
		if err != nil {
			return nil, err
		}
		return ok(rep), nil
	}
	f[t+"[method]incoming-body.stream"] = func(ctx context.Context, st *State, args []any) (any, error) {
		b, err := self[*incomingBody](st, args)
		if err != nil {
			return nil, err
		}
		if b.streamed {
			return unit(false), nil
		}
		b.streamed = true
		rep, err := st.add(&inStream{r: bodyReader{b.r}})
		if err != nil {
			return nil, err
		}
		return ok(rep), nil
	}
	f[t+"[static]incoming-body.finish"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := repArg(args, 0)
		if err != nil {
			return nil, err
		}
		if _, err := take[*incomingBody](st, r); err != nil {
			return nil, err
		}
		return st.add(&futureTrailers{})
	}
	f[t+"[method]future-trailers.subscribe"] = subscribeAlways[*futureTrailers]()
	f[t+"[method]future-trailers.get"] = func(ctx context.Context, st *State, args []any) (any, error) {
		if _, err := self[*futureTrailers](st, args); err != nil {
			return nil, err
		}
		return cm.Some{Value: ok(ok(nil))}, nil // no trailers
	}

	// outgoing-response (for the types' sake).
	f[t+"[constructor]outgoing-response"] = func(ctx context.Context, st *State, args []any) (any, error) {
		r, err := repArg(args, 0)
		if err != nil {
			return nil, err
		}
		fs, err := take[*fields](st, r)
		if err != nil {
			return nil, err
		}
		fs.immutable = true
		return st.add(&outgoingResponse{status: 200, headers: fs})
	}
	resp := func(g func(st *State, r *outgoingResponse, args []any) (any, error)) impl {
		return func(ctx context.Context, st *State, args []any) (any, error) {
			r, err := self[*outgoingResponse](st, args)
			if err != nil {
				return nil, err
			}
			return g(st, r, args)
		}
	}
	f[t+"[method]outgoing-response.status-code"] = resp(func(st *State, r *outgoingResponse, args []any) (any, error) {
		return r.status, nil
	})
	f[t+"[method]outgoing-response.set-status-code"] = resp(func(st *State, r *outgoingResponse, args []any) (any, error) {
		n, err := u64Arg(args, 1)
		if err != nil {
			return nil, err
		}
		if n < 100 || n > 599 {
			return unit(false), nil
		}
		r.status = n
		return unit(true), nil
	})
	f[t+"[method]outgoing-response.headers"] = resp(func(st *State, r *outgoingResponse, args []any) (any, error) {
		return st.add(r.headers)
	})
	f[t+"[method]outgoing-response.body"] = resp(func(st *State, r *outgoingResponse, args []any) (any, error) {
		if r.bodyTaken {
			return unit(false), nil
		}
		r.bodyTaken = true
		r.body = &outgoingBody{max: st.lim.MaxHTTPBody, finished: make(chan struct{})}
		rep, err := st.add(r.body)
		if err != nil {
			return nil, err
		}
		return ok(rep), nil
	})

	// The future of handle.
	f[t+"[method]future-incoming-response.subscribe"] = func(ctx context.Context, st *State, args []any) (any, error) {
		x, err := self[*futureResponse](st, args)
		if err != nil {
			return nil, err
		}
		return st.newPollable(&pollable{done: x.done})
	}
	f[t+"[method]future-incoming-response.get"] = func(ctx context.Context, st *State, args []any) (any, error) {
		x, err := self[*futureResponse](st, args)
		if err != nil {
			return nil, err
		}
		select {
		case <-x.done:
		default:
			return nil, nil
		}
		if x.taken {
			return cm.Some{Value: unit(false)}, nil
		}
		x.taken = true
		if x.resp == nil {
			return cm.Some{Value: ok(fail(x.err))}, nil
		}
		rep, err := st.add(x.resp)
		if err != nil {
			return nil, err
		}
		return cm.Some{Value: ok(ok(rep))}, nil
	}
	f[t+"http-error-code"] = func(ctx context.Context, st *State, args []any) (any, error) {
		e, err := self[*ioError](st, args)
		if err != nil {
			return nil, err
		}
		if e.http == nil {
			return nil, nil
		}
		return cm.Some{Value: *e.http}, nil
	}
	f["wasi:http/outgoing-handler#handle"] = func(ctx context.Context, st *State, args []any) (any, error) {
		return st.handle(ctx, args)
	}
	return f
}

// subscribeAlways is the subscribe of a resource that is always ready.
func subscribeAlways[T any]() impl {
	return func(ctx context.Context, st *State, args []any) (any, error) {
		if _, err := self[T](st, args); err != nil {
			return nil, err
		}
		return st.newPollable(&pollable{})
	}
}

func (b *outgoingBody) finish() {
	select {
	case <-b.finished:
	default:
		close(b.finished)
	}
}

func validToken(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return true
}

// handle is outgoing-handler.handle(request, options): the request goes
// to the HTTPClient once its body is finished (at once without a body),
// in the background; the future is ready when the response, read whole,
// or an error is in. It ends with the call that made it.
func (st *State) handle(ctx context.Context, args []any) (any, error) {
	r, err := repArg(args, 0)
	if err != nil {
		return nil, err
	}
	req, err := take[*outgoingRequest](st, r)
	if err != nil {
		return nil, err
	}
	if v, _ := arg(args, 1); v != nil {
		if s, isSome := v.(cm.Some); isSome {
			if o, isRep := s.Value.(uint32); isRep {
				if _, err := take[*requestOptions](st, o); err != nil {
					return nil, err
				}
			}
		}
	}
	hreq, code := st.httpRequest(ctx, req)
	if code != nil {
		return fail(*code), nil
	}
	if st.opts.HTTP == nil {
		return fail(cm.Case{Name: "HTTP-request-denied"}), nil
	}
	fctx, cancel := context.WithCancel(ctx)
	fut := &futureResponse{done: make(chan struct{}), cancel: cancel}
	rep, err := st.add(fut)
	if err != nil {
		cancel()
		return nil, err
	}
	go func() {
		defer close(fut.done)
		if req.body != nil {
			select {
			case <-req.body.finished:
			case <-fctx.Done():
				fut.err = errorCode(fctx.Err())
				return
			}
			if req.body.over {
				fut.err = cm.Case{Name: "HTTP-request-body-size", Value: nil}
				return
			}
			hreq.Body = io.NopCloser(bytes.NewReader(req.body.buf.Bytes()))
		}
		resp, err := st.opts.HTTP.Do(fctx, hreq.WithContext(fctx))
		if err != nil {
			fut.err = errorCode(err)
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(st.lim.MaxHTTPBody)+1))
		if err != nil || len(body) > st.lim.MaxHTTPBody {
			fut.err = cm.Case{Name: "HTTP-response-body-size", Value: nil}
			return
		}
		h := &fields{immutable: true}
		for k, vs := range resp.Header {
			for _, v := range vs {
				if len(h.entries) < maxFields {
					h.entries = append(h.entries, field{strings.ToLower(k), []byte(v)})
				}
			}
		}
		fut.resp = &incomingResponse{status: resp.StatusCode, headers: h, body: body}
	}()
	return ok(rep), nil
}

// httpRequest builds the http.Request of an outgoing-request, or gives
// the error-code of one that cannot be sent.
func (st *State) httpRequest(ctx context.Context, r *outgoingRequest) (*http.Request, *cm.Case) {
	bad := func(name string) (*http.Request, *cm.Case) { return nil, &cm.Case{Name: name} }
	method := strings.ToUpper(r.method.Name)
	if r.method.Name == "other" {
		method, _ = r.method.Value.(string)
	}
	scheme := "https"
	if s, isSome := r.scheme.(cm.Some); isSome {
		if c, _ := s.Value.(cm.Case); c.Name == "HTTP" {
			scheme = "http"
		}
	}
	s, isSome := r.authority.(cm.Some)
	if !isSome {
		return bad("HTTP-request-URI-invalid")
	}
	authority, _ := s.Value.(string)
	pq := "/"
	if p, isSome := r.path.(cm.Some); isSome {
		pq, _ = p.Value.(string)
	}
	u, err := url.Parse(scheme + "://" + authority + pq)
	if err != nil || u.Host == "" || u.User != nil {
		return bad("HTTP-request-URI-invalid")
	}
	hreq, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return bad("HTTP-request-method-invalid")
	}
	for _, e := range r.headers.entries {
		hreq.Header.Add(e.name, string(e.value))
	}
	return hreq, nil
}
