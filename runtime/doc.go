// Package runtime runs WebAssembly plugins on wazero in a sandbox: it
// compiles modules (with an on-disk cache), keeps bounded pools of
// instances per plugin, enforces memory, time and output limits, wires the
// wasmcp/1 imports to a per-call Host, and classifies every failure. It
// knows nothing about MCP.
package runtime
