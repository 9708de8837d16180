package testutil

import "encoding/json"

// RPCError is a JSON-RPC error object as a test client decodes it. Unlike
// jsonrpc.Error it is no error value, so %+v prints its data too.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}
