// Package plugins is the host-side plugin model of wasmcp: it loads Wasm
// plugins (compile, describe, validate the manifest), applies the
// operator's grants and limits, keeps the registry of every tool, resource,
// resource template and prompt they expose (names, prefixes, collisions),
// validates tool arguments and structured results against their schemas,
// runs the input_required flow of the ABI, and reloads plugins when their
// files change. Extism plugins (hyper-mcp v1 and v2, mcp.run servlets) are
// served through an adapter that speaks wasmcp/1 to the registry (see
// extism.go). It knows nothing about MCP transports and never imports
// wazero: Wasm runs through package runtime, host functions through
// package hostapi.
package plugins
