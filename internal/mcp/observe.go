package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// Observer watches the requests the engine runs, for telemetry (traces,
// metrics, audit). A nil Options.Observer, the default, costs nothing.
// Its methods are called from many goroutines at once and must not block.
type Observer interface {
	// RequestStart is called when a request starts running, before the
	// Provider sees it. The context it returns, which must derive from
	// ctx, is the one the Provider gets: it may carry a span.
	RequestStart(ctx context.Context, ri *RequestInfo) context.Context
	// RequestEnd is called once when the request has run, with the
	// context RequestStart returned and the request's result (valid
	// JSON) or error, before the response is written.
	RequestEnd(ctx context.Context, ri *RequestInfo, result []byte, err error)
	// RequestAnswered is called instead of both for a request answered
	// without running: initialize (err nil when it succeeded), and a
	// request admission refused (a bad session, version or 2026-07-28
	// header, the limiter, a request a batch may not hold, a message
	// that is not JSON and a batch refused whole: Method "", an HTTP body
	// or stdio line refused unread: see HeaderRequest), with the error
	// answered.
	RequestAnswered(ri *RequestInfo, err *jsonrpc.Error)
}

// RequestInfo is what an Observer sees of a request.
type RequestInfo struct {
	// Request is the request as the Provider sees it.
	Request *Request
	// ID is the JSON-RPC id as sent (a number, or a JSON string with its
	// quotes); "" for a batch refused whole.
	ID string
	// Transport is "pipe" on stdio and "tcp" on HTTP (the values of the
	// OpenTelemetry network.transport attribute).
	Transport string
	// Header is the HTTP request's header; nil on stdio. It must not be
	// modified.
	Header http.Header
	// Remote is the client's address without its port on HTTP; empty on
	// stdio and for requests answered without running.
	Remote string
	// Start is when the request started running.
	Start time.Time
	// Status is the HTTP status a request refused over HTTP was answered
	// with; 0 for the others.
	Status int
	// Nonconforming is set before RequestEnd when the Provider's result
	// did not have its method's MCP result type: the engine answered a
	// tool error (tools/call) or a -32603 error in its place.
	Nonconforming bool
	// ToolError is set before RequestEnd when the result is a tool result
	// with isError true (the engine read it: the Observer need not scan
	// the result again).
	ToolError bool
}

// HeaderRequest is the request the headers of an HTTP POST announce, as
// observed when it is refused before its body is read: the method and
// target of its Mcp-Method and Mcp-Name headers (sent with 2026-07-28
// requests; none: Method "") and its MCP-Protocol-Version.
func HeaderRequest(h http.Header) *Request {
	v := h.Get("Mcp-Protocol-Version")
	r := &Request{Method: h.Get("Mcp-Method"), Client: mcpreq.Client{ProtocolVersion: v, Stateless: v == version20260728}}
	if n := h.Get("Mcp-Name"); n != "" {
		r.Params, _ = json.Marshal(map[string]string{"name": n, "uri": n})
	}
	return r
}

// observeStart tells the Observer that cl starts; it returns nil when
// there is none.
func (s *Server) observeStart(cl *call) *RequestInfo {
	o := s.opts.Observer
	if o == nil {
		return nil
	}
	cl.ri = RequestInfo{Request: &cl.req, ID: cl.id.Raw(), Transport: "pipe", Header: cl.header, Start: startTime()}
	ri := &cl.ri
	if cl.header != nil {
		ri.Transport, ri.Remote = "tcp", cl.remote
	}
	cl.ctx = o.RequestStart(cl.ctx, ri)
	return ri
}

// clockBase is a time.Now of at most a second ago, for startTime.
var clockBase atomic.Pointer[time.Time]

// startTime is time.Now for a request's start, with one clock read instead
// of two (a clock read costs 50-100 ns on a VM): the monotonic time since
// clockBase, whose wall time is read again once a second, so that a step
// of the wall clock shows within a second.
func startTime() time.Time {
	if b := clockBase.Load(); b != nil {
		if d := time.Since(*b); d < time.Second {
			return b.Add(d)
		}
	}
	now := time.Now()
	clockBase.Store(&now)
	return now
}

// observeAnswered tells the Observer of request r (id, header: nil on
// stdio), taken at start and answered without running, with err (and,
// over HTTP, the status of reason; answered when the response is not a
// refusal of the request's own).
func (s *Server) observeAnswered(start time.Time, r *Request, id jsonrpc.ID, header http.Header, reason refusalReason, err *jsonrpc.Error) {
	ri := &RequestInfo{Request: r, Transport: "pipe", Header: header, Start: start}
	if !id.IsZero() {
		ri.ID = id.Raw()
	}
	if header != nil {
		ri.Transport, ri.Status = "tcp", reason.httpStatus()
	}
	s.opts.Observer.RequestAnswered(ri, err)
}

// observeRefused tells the Observer of request m refused by admission
// (in says where it came from; reason as for observeAnswered).
func (s *Server) observeRefused(start time.Time, m *jsonrpc.Message, mi *metaInfo, in *inbound, reason refusalReason, err *jsonrpc.Error) {
	r := &Request{Method: m.Method, Params: m.Params, Client: mcpreq.Client{ProtocolVersion: mi.version, Stateless: isModernRequest(m, mi)}}
	if !r.Stateless && in.c != nil {
		r.SessionID = in.c.id
		if _, v, _, _ := in.c.snapshot(); v != "" {
			r.ProtocolVersion = v
		}
	}
	s.observeAnswered(start, r, m.ID, in.header, reason, err)
}
