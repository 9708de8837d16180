// Command goecho is the benchmark's trivial tool as a Go wasmcp plugin
// (bench/internal/goecho): "echo" returns its "text" argument as one text
// content block, the same tool bench/cmd/nativeserver serves with the
// official Go SDK.
//
// Build with bench/plugins/build.sh, or:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o goecho.wasm .
package main

import (
	"github.com/wasmcp/wasmcp/bench/internal/goecho"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

func init() { wasmcp.Serve(goecho.New()) }

func main() {}
