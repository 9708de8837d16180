package mcp

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
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
	// Parsed is Params parsed, for tools/call, prompts/get,
	// resources/read and completion/complete (see ParseParams); its raw
	// members alias Params.
	Parsed mcpreq.Params
	// Client is what the request tells of the client (protocol version,
	// capabilities, progress token) and of the caller (principal, scopes).
	mcpreq.Client
	// SessionID identifies a legacy session (HTTP Mcp-Session-Id, or a
	// per-process id on stdio); empty for stateless requests.
	SessionID string
	// TaskID is the id of the task this call runs for, in the background
	// and under Options.TaskTimeout; empty for a call answered directly.
	TaskID string

	peer peer
	// meta is params._meta as admission found it (a part of Params), nil
	// for none; metaKnown is false for a request admission did not scan.
	meta      json.RawMessage
	metaKnown bool
}

// Meta returns the params._meta object of r as admission read it (nil
// when there is none, or it is not an object); known is false for a
// request admission did not scan. An Observer reads it instead of
// scanning Params again.
func (r *Request) Meta() (meta json.RawMessage, known bool) {
	return r.meta, r.metaKnown
}

// setMeta records meta (a part of r.Params, or nil) as r's _meta.
func (r *Request) setMeta(meta []byte) {
	r.meta, r.metaKnown = nil, true
	if len(meta) >= 2 {
		r.meta = meta
	}
}

// peer is the engine side of a request: where its notifications and
// server-to-client requests go.
type peer interface {
	progress(r *Request, progress float64, total *float64, message string)
	log(r *Request, level, logger string, data json.RawMessage)
	clientCall(ctx context.Context, r *Request, method string, params json.RawMessage) (json.RawMessage, error)
	closeStream(r *Request)
	startTask(r *Request)
	yieldSlot()
	resumeSlot(ctx context.Context) error
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

// YieldSlot gives back the run slot the request holds in the server-wide
// call limiter (Options.MaxConcurrentCalls) while the Provider waits for
// something that runs no provider code, such as a free instance of a
// plugin. The request keeps its place among the admitted calls. It does
// nothing when the request holds no run slot (methods the limiter does not
// bound, a slot paused by ClientCall). A Provider that yields must call
// ResumeSlot before it runs provider code again.
func (r *Request) YieldSlot() {
	if r.peer != nil {
		r.peer.yieldSlot()
	}
}

// ResumeSlot takes a run slot again after YieldSlot, ahead of the calls
// that have not started, waiting at most Options.CallWaitTimeout and while
// ctx and the request last. It returns nil at once when the request has no
// yielded slot; otherwise it fails with the busy -32001 *jsonrpc.Error
// (data {"busy":true}) after the wait timeout, or with the error of the
// context that ended. After a failure the request holds no run slot.
func (r *Request) ResumeSlot(ctx context.Context) error {
	if r.peer == nil {
		return nil
	}
	return r.peer.resumeSlot(ctx)
}

// StartTask tells the engine that a call running as a 2026-07-28 task
// (TaskID set) is under way: the client gets its CreateTaskResult now
// instead of after the first round or Options.TaskStartWait. Until then
// an input_required first round is answered as it is, with no task (the
// input gathered before a task starts). It does nothing outside tasks.
func (r *Request) StartTask() {
	if r.peer != nil {
		r.peer.startTask(r)
	}
}
