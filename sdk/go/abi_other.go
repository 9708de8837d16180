//go:build !wasip1

package wasmcp

// defaultHost is the host outside a wasip1 build: it supports nothing, so
// handlers run natively get ErrUnsupported from host calls unless a test
// passes its own Host to Plugin.HandleWith.
func defaultHost() Host { return unsupportedHost{} }
