// Package wasmcp holds the source files of the guest SDKs, embedded in the
// binary so that `wasmcp new` writes a self-contained project without a
// wasmcp checkout (internal/scaffold). The server is cmd/wasmcp.
package wasmcp

import "embed"

// SDK is the guest SDKs' sources at their paths in this module: the C
// header pair, the Rust module, the AssemblyScript package, and the Go SDK
// with its test harness (wasmcptest) and the module's packages they import
// (every non-test .go file here is vendored into a Go project; go.mod gives
// the Go version they need).
//
//go:embed go.mod
//go:embed sdk/c/wasmcp.h sdk/c/wasmcp_json.h sdk/c/README.md
//go:embed sdk/rust/wasmcp.rs sdk/rust/README.md
//go:embed sdk/assemblyscript/README.md sdk/assemblyscript/assembly/*.ts
//go:embed sdk/go/*.go sdk/go/README.md sdk/go/wasmcptest/*.go internal/abi/*.go internal/jsonscan/*.go
var SDK embed.FS
