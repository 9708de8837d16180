package hostapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Client is the MCP side of one request, implemented by the composition
// root. Notifications must not block for long; Request blocks until the
// client answers or ctx is done.
type Client interface {
	Caller
	// NotifyListChanged reports that the plugin's "tools", "resources" or
	// "prompts" changed (the host describes it again).
	NotifyListChanged(kind string)
	// NotifyResourceUpdated reports that a resource changed.
	NotifyResourceUpdated(uri string)
}

// Caller is the part of a Client that answers to the request's own
// client: what the plugin registry needs of the engine for one request
// (package plugins adds the notifications of the plugin's lists).
type Caller interface {
	// Log sends notifications/message (subject to the session's level).
	Log(level, logger string, data json.RawMessage)
	// Progress sends notifications/progress with the request's progress
	// token; it is a no-op without one.
	Progress(progress float64, total *float64, message string)
	// CloseStream asks the transport to close the response stream that
	// carries this request (Streamable HTTP SSE polling) without ending
	// the request: the client reconnects and receives what follows,
	// including the result. It does nothing where there is no such
	// stream (stdio, stateless HTTP).
	CloseStream()
	// StartTask tells the host that a call running as a task
	// (2026-07-28 tasks extension) is under way: the client gets the task
	// now. It does nothing outside tasks.
	StartTask()
	// Request sends a server-to-client request (elicitation/create,
	// sampling/createMessage, roots/list) and returns the client's result.
	// It returns ErrUnsupported when the client or connection cannot carry
	// it; an error with an RPCError() (code, message) method is passed to
	// the plugin with that code.
	Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// ErrUnsupported is returned by Client.Request when the client did not
// declare the capability or the connection cannot carry a server-to-client
// request (stateless HTTP). The plugin gets abi.ErrUnsupported.
var ErrUnsupported = errors.New("unsupported by this client or connection")

// ErrNotGranted is a server-to-client request of a plugin whose grants do
// not allow it.
var ErrNotGranted = errors.New("not granted")

// ErrNotClientRequest is a method a plugin asked the client that is not one
// of the server-to-client requests MCP defines.
var ErrNotClientRequest = errors.New("not a client request MCP defines (elicitation/create, sampling/createMessage, roots/list)")

// MayRequest reports whether g lets the plugin have the host send the
// client method: nil, or an error wrapping ErrNotClientRequest or
// ErrNotGranted that names the grant. It is the one check of every way a
// plugin asks the client (the blocking host call, an input_required
// result).
func (g Grants) MayRequest(method string) error {
	var granted bool
	var grant string
	switch method {
	case abi.HostElicit:
		granted, grant = g.Elicitation, "elicitation"
	case abi.HostSample:
		granted, grant = g.Sampling, "sampling"
	case abi.HostRoots:
		granted, grant = g.Roots, "roots"
	default:
		return fmt.Errorf("%q is %w", method, ErrNotClientRequest)
	}
	if !granted {
		return fmt.Errorf("%s: %w (the operator grants it with grants.%s = true)", method, ErrNotGranted, grant)
	}
	return nil
}

// request handles the blocking client requests: granted (MayRequest),
// then the Client must carry them.
func (b *bound) request(ctx context.Context, method string, params []byte) ([]byte, int32) {
	if b.h.grants.MayRequest(method) != nil {
		return nil, abi.ErrDenied
	}
	if len(params) == 0 {
		params = empty
	}
	if !json.Valid(params) {
		return nil, abi.ErrBadParams
	}
	if b.c == nil {
		return nil, abi.ErrUnsupported
	}
	res, err := b.c.Request(ctx, method, append(json.RawMessage(nil), params...))
	var rpc interface{ RPCError() (int, string) }
	switch {
	case err == nil:
		if len(res) == 0 {
			return empty, 0
		}
		return res, 0
	case ctx.Err() != nil:
		return nil, abi.ErrCanceled
	case errors.Is(err, ErrUnsupported):
		return nil, abi.ErrUnsupported
	case errors.As(err, &rpc):
		code, msg := rpc.RPCError()
		return failed(code, msg)
	}
	return failed(codeInternal, err.Error())
}
