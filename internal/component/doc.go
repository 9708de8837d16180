// Package component decodes WebAssembly components (the Component Model
// binary, preamble version 0x0d, layer 1) into a Component: the core
// modules it embeds (as bytes, for the core engine to compile), its core
// and component instances, aliases, canonical functions, types, imports,
// exports and custom sections, in index-space order.
//
// The decoder is the first line of defence against a hostile binary:
// every index is checked against its index space, every length against
// the bytes left, value types are bounded in size and depth (they can
// only refer to earlier types, so they are never recursive), and the
// count of every index space is capped. The features outside the MVP —
// WASI 0.3 async (stream, future, error-context, async functions, task
// and stream built-ins, the async and callback options), value
// definitions, start functions, fixed-length lists, GC core types — are
// refused with an *Error that wraps ErrUnsupported and names the feature.
//
// Types are decoded into *Type values shared by reference (see Kind), and
// the component's imports and exports carry theirs, which is what WIT
// describes: Describe returns that view (functions of the world and of
// its interfaces, with parameter and result types, and the doc comments
// of the `package-docs` section) for `inspect`, and World.Tools maps its
// exported functions to MCP tools as Wassette names and types them, with
// the conversion of JSON arguments and results (Tool.Args, Tool.Output)
// to and from plain Go values. Package component/canon lifts
// and lowers values of these types; runtime/component instantiates a
// decoded component on wazero.
package component
