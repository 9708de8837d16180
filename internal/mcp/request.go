package mcp

import (
	"context"
	"encoding/json"
	"errors"
)

// ErrNoClientRequests is returned by Request.ClientCall when the request
// cannot carry a server-to-client request: a 2026-07-28 (stateless)
// request, or a connection that has no way back to the client.
var ErrNoClientRequests = errors.New("mcp: this request cannot carry server-to-client requests")

// Request is what a Provider sees of one client request. It is valid until
// the Provider method returns; its methods are safe for concurrent use.
type Request struct {
	// Method is the JSON-RPC method, e.g. "tools/call".
	Method string
	// Params is the params object as the client sent it; "{}" when absent.
	Params json.RawMessage
	// ProtocolVersion is the negotiated version (legacy sessions) or the
	// version the request declared (2026-07-28).
	ProtocolVersion string
	// Stateless is true for 2026-07-28 requests, which carry their own
	// version and capabilities in _meta and cannot receive server-to-client
	// requests.
	Stateless bool
	// ClientInfo is the client's Implementation object, or nil.
	ClientInfo json.RawMessage
	// ClientCapabilities is the client's capabilities object ("{}" when it
	// declared none): from initialize for legacy sessions, from this
	// request's _meta for 2026-07-28.
	ClientCapabilities json.RawMessage
	// ProgressToken is _meta.progressToken, or nil.
	ProgressToken json.RawMessage
	// SessionID identifies a legacy session (HTTP Mcp-Session-Id, or a
	// per-process id on stdio); empty for stateless requests.
	SessionID string
	// Principal identifies the authenticated caller on HTTP with access
	// control on; empty otherwise.
	Principal string
	// Scopes are the scopes granted to the authenticated caller (nil
	// without access control).
	Scopes []string

	peer peer
}

// peer is the engine side of a request: where its notifications and
// server-to-client requests go.
type peer interface {
	progress(r *Request, progress float64, total *float64, message string)
	log(r *Request, level, logger string, data json.RawMessage)
	clientCall(ctx context.Context, r *Request, method string, params json.RawMessage) (json.RawMessage, error)
	closeStream(r *Request)
}

// HasClientCapability reports whether the client declared the top-level
// capability name (e.g. "sampling", "elicitation", "roots").
func (r *Request) HasClientCapability(name string) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(r.ClientCapabilities, &caps) != nil {
		return false
	}
	v, ok := caps[name]
	return ok && string(v) != "null"
}

// Progress sends notifications/progress for this request if the client
// asked for progress (a progressToken) and the request is still running.
// Values that do not increase are dropped, as the protocol requires.
func (r *Request) Progress(progress float64, total *float64, message string) {
	if r.peer != nil && r.ProgressToken != nil {
		r.peer.progress(r, progress, total, message)
	}
}

// Log sends notifications/message at level (an MCP level name) if the
// session's or the request's log level lets it through. data is any JSON.
func (r *Request) Log(level, logger string, data json.RawMessage) {
	if r.peer != nil {
		r.peer.log(r, level, logger, data)
	}
}

// ClientCall sends a server-to-client request (elicitation/create,
// sampling/createMessage, roots/list) tied to this request and waits for the
// answer. It returns ErrNoClientRequests when the request cannot carry one,
// a *jsonrpc.Error when the client answered with an error, and ctx.Err()
// when ctx ends first.
func (r *Request) ClientCall(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if r.peer == nil || r.Stateless {
		return nil, ErrNoClientRequests
	}
	return r.peer.clientCall(ctx, r, method, params)
}

// CloseStream asks the transport to close the HTTP response stream that
// carries this request's messages without ending the request (SSE polling,
// 2025-11-25 Streamable HTTP): the client reconnects with Last-Event-ID and
// receives what follows, including the result. It does nothing on stdio,
// on 2026-07-28 requests, or when the request is already answered.
func (r *Request) CloseStream() {
	if r.peer != nil && !r.Stateless {
		r.peer.closeStream(r)
	}
}
