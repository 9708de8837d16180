package wasmcp

import (
	"errors"
	"fmt"
)

// JSON-RPC error codes a plugin may answer with.
const (
	CodeInvalidRequest   = -32600
	CodeMethodNotFound   = -32601
	CodeInvalidParams    = -32602
	CodeInternalError    = -32603
	CodeResourceNotFound = -32002
)

// RPCError is a JSON-RPC error. A handler that returns one (possibly
// wrapped) makes the request fail with it, instead of producing a result.
type RPCError struct {
	// Code is the JSON-RPC error code, e.g. CodeInvalidParams.
	Code int
	// Message is a short description.
	Message string
	// Data is optional extra information, any JSON-marshalable value.
	Data any
}

// NewRPCError returns a JSON-RPC error.
func NewRPCError(code int, message string, data any) *RPCError {
	return &RPCError{Code: code, Message: message, Data: data}
}

// Error returns the message and code.
func (e *RPCError) Error() string { return fmt.Sprintf("%s (code %d)", e.Message, e.Code) }

// MarshalJSON encodes e as a JSON-RPC error object.
func (e *RPCError) MarshalJSON() ([]byte, error) {
	return marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    any    `json:"data,omitempty"`
	}{e.Code, e.Message, e.Data})
}

// ErrResourceNotFound, returned (possibly wrapped) by a resource handler,
// answers "resource not found" for the requested URI: JSON-RPC -32002
// with data {"uri": ...}, which the host adapts to the protocol version.
var ErrResourceNotFound = errors.New("resource not found")
