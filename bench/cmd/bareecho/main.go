// Command bareecho is the ceiling of wasmcp's benchmarks: it reads JSON-RPC
// lines on stdin, decodes each and writes a minimal tools/call-shaped
// response, with no MCP semantics. With -http ADDR it serves the same
// answer from a bare net/http JSON handler at /mcp and prints the bound URL
// on stderr.
package main

import (
	"os"

	"github.com/wasmcp/wasmcp/bench/internal/bare"
	"github.com/wasmcp/wasmcp/bench/internal/baseline"
)

func main() {
	baseline.Main("bareecho", "a bare net/http JSON handler",
		func() error { return bare.ServeStdio(os.Stdin, os.Stdout) }, bare.Handler())
}
