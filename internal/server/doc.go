// Package server is wasmcp's composition root: it turns a configuration
// into a running server by wiring the Wasm runtime, the host functions, the
// plugin registry and the MCP protocol engine together. It is the one
// place where plugin failures are mapped to what a client sees (see
// errors.go).
package server
