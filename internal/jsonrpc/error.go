package jsonrpc

import (
	"encoding/json"
	"fmt"
)

// Standard JSON-RPC 2.0 error codes and the MCP codes built on them.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603

	// CodeRequestTimeout is what wasmcp answers when a call passes its
	// deadline (the value the MCP TypeScript SDK uses for the same case).
	CodeRequestTimeout = -32001
	// CodeResourceNotFound is the legacy (before 2026-07-28) code for a
	// resources/read of an unknown URI.
	CodeResourceNotFound = -32002
	// CodeHeaderMismatch is the 2026-07-28 code for HTTP headers that are
	// missing or disagree with the body.
	CodeHeaderMismatch = -32020
	// CodeMissingClientCapability is the 2026-07-28 code for a request that
	// needs a client capability the request did not declare.
	CodeMissingClientCapability = -32021
	// CodeUnsupportedVersion is the 2026-07-28 code for a protocol version
	// the server does not speak.
	CodeUnsupportedVersion = -32022
	// CodeURLElicitationRequired is the 2025-11-25 URL elicitation error.
	CodeURLElicitationRequired = -32042
	// CodeForbidden is wasmcp's answer to a request its authorization
	// policies refuse ([authz], docs/governance.md), HTTP 403 where the
	// response is a JSON body: the same for an item the caller may not
	// see and for arguments it may not pass.
	CodeForbidden = -32003
)

// Defined reports whether code is one of the codes above, the ones the
// protocol defines. Other codes are a handler's own (a plugin may answer
// any code), so a label set by code must map them to one value.
func Defined(code int) bool {
	switch code {
	case CodeParseError, CodeInvalidRequest, CodeMethodNotFound, CodeInvalidParams, CodeInternalError,
		CodeRequestTimeout, CodeResourceNotFound, CodeHeaderMismatch, CodeMissingClientCapability,
		CodeUnsupportedVersion, CodeURLElicitationRequired, CodeForbidden:
		return true
	}
	return false
}

// Error is a JSON-RPC error object. It implements error so handlers can
// return it; any other error is answered as CodeInternalError.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns a one-line description of e.
func (e *Error) Error() string {
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// NewError returns an Error with the given code and message. data, when not
// nil, is marshalled into the Data field.
func NewError(code int, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
}
