// Package jsonscan is a byte-level JSON toolkit: a strict one-pass
// validator (Valid), non-allocating scanners and iterators over JSON that
// has already been validated (ObjectIter, ArrayIter, Member, KeyIs, String,
// StringIs, Kind, SkipSpace, StringEnd, NumberEnd) and a reflection-free
// string encoder (AppendString).
//
// It is shared by the host (the JSON-RPC wire format in internal/jsonrpc,
// the schema fast path in internal/schema, plugins) and the Go guest SDK
// (sdk/go), so it imports only the standard library and nothing of
// wasmcp's own. None of its functions recurse: deeply nested input cannot
// exhaust the stack.
package jsonscan
