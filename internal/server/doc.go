// Package server is wasmcp's composition root: it turns a configuration
// into a running server by wiring the Wasm runtime, the host functions, the
// plugin registry and the MCP protocol engine together. It is the one
// place where plugin failures are mapped to what a client sees (see
// errors.go), and where access control is wired: [auth] becomes the HTTP
// middleware of package auth, and the caller's scopes decide which plugins
// it sees (a plugin with scopes is hidden, not forbidden, from callers
// without one of them).
package server
