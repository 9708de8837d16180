// Command nativeserver is the baseline of wasmcp's benchmarks: an MCP server
// built with the official Go SDK (github.com/modelcontextprotocol/go-sdk)
// exposing the same trivial tool as the benchmark plugins, "echo", which
// returns its "text" argument as one text content block.
//
// By default it serves MCP on stdio. With -http ADDR it serves the SDK's
// stateless Streamable HTTP handler (JSON responses) at /mcp on ADDR and
// prints the bound URL on stderr, as `wasmcp serve --http` does.
package main

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmcp/wasmcp/bench/internal/baseline"
	"github.com/wasmcp/wasmcp/bench/internal/native"
)

func main() {
	s := native.NewServer()
	baseline.Main("nativeserver", "stateless Streamable HTTP",
		func() error { return s.Run(context.Background(), &mcp.StdioTransport{}) }, native.HTTPHandler(s))
}
