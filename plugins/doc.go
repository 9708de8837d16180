// Package plugins is the host-side plugin model of wasmcp: it loads Wasm
// plugins (compile, describe, validate the manifest), applies the
// operator's grants and limits, keeps the registry of every tool, resource,
// resource template and prompt they expose (names, prefixes, collisions),
// validates tool arguments and structured results against their schemas,
// runs the input_required flow of the ABI, and reloads plugins when their
// files change. It knows nothing about MCP transports and never imports
// wazero: Wasm runs through package runtime, host functions through
// package hostapi.
package plugins
