// Package jsonrpc is the JSON-RPC 2.0 wire layer of wasmcp: message types,
// ids, error objects and codes, notifications, and a strict decoder. Of
// wasmcp's own packages it imports only internal/jsonscan, the byte-level
// JSON toolkit it is built on.
package jsonrpc
