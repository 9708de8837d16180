// Package schema validates JSON values against JSON Schemas, for tool
// arguments (inputSchema) and structured results (outputSchema).
//
// A schema is compiled once with [Compile] and used many times; a compiled
// [Schema] is safe for concurrent use. Draft 2020-12 applies when the
// schema has no "$schema"; draft-07 (and the other drafts the underlying
// library knows) is used when declared. References are resolved only
// inside the schema itself: a "$ref" to any other document is refused at
// compile time, so validation never touches the network or the file
// system. Keywords the draft does not define (x-mcp-header, title, ...)
// are ignored. "format" is an annotation under 2020-12 and asserted under
// draft-07, as the underlying library does by default.
//
// Validation errors are written for a language model to act on: each
// problem names the failing value by path from a root name and says what
// is wrong, e.g.
//
//	arguments.city: missing required property; arguments.days: must be <= 16
//
// Cost is bounded by refusing oversized or deeply nested schemas and
// instances (see [Options]).
//
// For the common shape of tool input schemas (objects of typed
// properties with required names, enums, bounds, lengths and patterns),
// [Schema.Validate] accepts a valid instance by scanning its bytes,
// without decoding it; any instance that scan does not accept is decoded
// and validated as usual, so answers and messages are the same either way.
//
// This package is the only importer of
// github.com/santhosh-tekuri/jsonschema/v6.
package schema
