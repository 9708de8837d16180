package mcp

import (
	"context"
	"net/http"
	"time"
)

// Observer watches the requests the engine runs, for telemetry (traces,
// metrics, audit). A nil Options.Observer, the default, costs nothing.
// Its methods are called from many goroutines at once and must not block.
type Observer interface {
	// RequestStart is called when a request starts running, before the
	// Provider sees it (initialize and requests refused before dispatch
	// are not observed). The context it returns, which must derive from
	// ctx, is the one the Provider gets: it may carry a span.
	RequestStart(ctx context.Context, ri *RequestInfo) context.Context
	// RequestEnd is called once when the request has run, with the
	// context RequestStart returned and the request's result (valid
	// JSON) or error, before the response is written.
	RequestEnd(ctx context.Context, ri *RequestInfo, result []byte, err error)
}

// RequestInfo is what an Observer sees of a request.
type RequestInfo struct {
	// Request is the request as the Provider sees it.
	Request *Request
	// ID is the JSON-RPC id as sent (a number, or a JSON string with its
	// quotes).
	ID string
	// Transport is "pipe" on stdio and "tcp" on HTTP (the values of the
	// OpenTelemetry network.transport attribute).
	Transport string
	// Header is the HTTP request's header; nil on stdio. It must not be
	// modified.
	Header http.Header
	// Start is when the request started running.
	Start time.Time
}

// observeStart tells the Observer that cl starts; it returns nil when
// there is none.
func (s *Server) observeStart(cl *call) *RequestInfo {
	o := s.opts.Observer
	if o == nil {
		return nil
	}
	ri := &RequestInfo{Request: &cl.req, ID: cl.id.Raw(), Transport: "pipe", Header: cl.header, Start: time.Now()}
	if cl.header != nil {
		ri.Transport = "tcp"
	}
	cl.ctx = o.RequestStart(cl.ctx, ri)
	return ri
}
