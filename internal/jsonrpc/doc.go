// Package jsonrpc is the JSON-RPC 2.0 wire layer of wasmcp: message types,
// ids, error objects and codes, and a strict decoder. It imports nothing of
// wasmcp's own.
package jsonrpc
