package wasmcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Host is the host side of the wasmcp imports, as a plugin sees it. In a
// plugin built for wasip1 it is the real host; tests supply their own
// (see [Plugin.HandleWith] and the wasmcptest package).
type Host interface {
	// Call performs a host request (ABI §5): method and JSON params in;
	// the JSON result and errno 0, or a negative errno (abi.Err*) and,
	// with abi.ErrFailed, the error JSON {"code","message"} as result.
	Call(method string, params []byte) (result []byte, errno int32)
	// Log writes one log line at level (0 debug ... 7 emergency).
	Log(level int32, msg []byte)
}

// Errors returned by host calls, wrapped with the method name; test them
// with errors.Is.
var (
	// ErrDenied means the operator did not grant what the call needs.
	ErrDenied = errors.New("not granted by the server's operator")
	// ErrBadParams means the host rejected the call's parameters.
	ErrBadParams = errors.New("invalid parameters")
	// ErrCanceled means the request was cancelled or is past its deadline;
	// return at once.
	ErrCanceled = errors.New("request cancelled or past its deadline")
	// ErrTooBig means the request or its result is over the host's limit.
	ErrTooBig = errors.New("over the host's size limit")
	// ErrUnsupported means the client or connection cannot do this (for
	// example a blocking elicitation on a stateless request; use
	// input_required instead).
	ErrUnsupported = errors.New("not supported by this client or connection")
	// ErrUnknownMethod means the host does not know the method.
	ErrUnknownMethod = errors.New("unknown host method")
)

// HostError is a host call that failed with details (errno abi.ErrFailed):
// for example an HTTP transport failure or a client's JSON-RPC error
// answer to an elicitation.
type HostError struct {
	// Method is the host method that failed, e.g. "http/fetch".
	Method string
	// Code is the error code the host gave (a JSON-RPC code when the
	// client answered with an error).
	Code int
	// Message describes the failure.
	Message string
	// Data is optional detail, as JSON.
	Data json.RawMessage
}

// Error returns "wasmcp: <method>: <message> (code <code>)".
func (e *HostError) Error() string {
	return fmt.Sprintf("wasmcp: %s: %s (code %d)", e.Method, e.Message, e.Code)
}

// errnoErrors are the errors of the negative errnos that carry no
// result.
var errnoErrors = map[int32]error{
	abi.ErrDenied:      ErrDenied,
	abi.ErrBadParams:   ErrBadParams,
	abi.ErrCanceled:    ErrCanceled,
	abi.ErrTooBig:      ErrTooBig,
	abi.ErrUnsupported: ErrUnsupported,
	abi.ErrUnknown:     ErrUnknownMethod,
}

// errnoError maps a negative errno of method to an error.
func errnoError(method string, errno int32, result []byte) error {
	if base, ok := errnoErrors[errno]; ok {
		return fmt.Errorf("wasmcp: %s: %w", method, base)
	}
	if errno != abi.ErrFailed {
		return fmt.Errorf("wasmcp: %s: unexpected host status %d", method, errno)
	}
	he := &HostError{Method: method, Code: abi.ErrFailed, Message: "failed"}
	var w struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(result, &w) == nil {
		if w.Code != 0 {
			he.Code = w.Code
		}
		if w.Message != "" {
			he.Message = w.Message
		}
		he.Data = w.Data
	}
	return he
}

// call performs a host request: params are marshalled, and the result is
// unmarshalled into result unless it is nil.
func (c *Context) call(method string, params, result any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("wasmcp: %s: %w", method, err)
	}
	res, errno := c.host.Call(method, p)
	if errno < 0 {
		return errnoError(method, errno, res)
	}
	if result == nil || len(res) == 0 {
		return nil
	}
	if err := json.Unmarshal(res, result); err != nil {
		return fmt.Errorf("wasmcp: %s: invalid result from the host: %w", method, err)
	}
	return nil
}

// CallHost performs any host request by method name, for methods this SDK
// has no helper for: params is marshalled to JSON and the raw JSON result
// is returned. Errors are as for the typed helpers.
func (c *Context) CallHost(method string, params any) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := c.call(method, params, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// unsupportedHost answers every request with abi.ErrUnsupported and
// drops log lines: the host outside a wasm call.
type unsupportedHost struct{}

func (unsupportedHost) Call(string, []byte) ([]byte, int32) { return nil, abi.ErrUnsupported }
func (unsupportedHost) Log(int32, []byte)                   {}
