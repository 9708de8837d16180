package jsonrpc

import (
	"strconv"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// The Append functions write one compact JSON-RPC message to dst without
// reflection. Raw JSON arguments (params, result, error data) are copied
// verbatim and must be valid, compact JSON (no raw newlines).

// AppendRequest appends a request.
func AppendRequest(dst []byte, id ID, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"method":`...)
	return appendMethod(dst, method, params)
}

// AppendNotification appends a notification; params may be nil.
func AppendNotification(dst []byte, method string, params []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	return appendMethod(dst, method, params)
}

// appendMethod ends a request or notification: the method's name, the
// params unless empty, and the closing brace.
func appendMethod(dst []byte, method string, params []byte) []byte {
	dst = jsonscan.AppendString(dst, method)
	if len(params) > 0 {
		dst = append(dst, `,"params":`...)
		dst = append(dst, params...)
	}
	return append(dst, '}')
}

// AppendResult appends a success response carrying result.
func AppendResult(dst []byte, id ID, result []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"result":`...)
	dst = append(dst, result...)
	return append(dst, '}')
}

// AppendError appends an error response; a zero id is written as null.
func AppendError(dst []byte, id ID, e *Error) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"error":`...)
	dst = e.AppendJSON(dst)
	return append(dst, '}')
}

// AppendJSON appends the error object e.
func (e *Error) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(e.Code), 10)
	dst = append(dst, `,"message":`...)
	dst = jsonscan.AppendString(dst, e.Message)
	if len(e.Data) > 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, e.Data...)
	}
	return append(dst, '}')
}
