// Package native builds the baseline server of wasmcp's benchmarks with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk): the same trivial
// "echo" tool the benchmark plugins expose.
package native

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// echoIn are the arguments of the echo tool. The SDK infers the input
// schema {"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}
// from the type and validates every call against it, as wasmcp does with
// the plugins' declared schemas.
type echoIn struct {
	Text string `json:"text"`
}

// echo returns the text argument as one text content block.
func echo(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
}

// NewServer returns an SDK server with the echo tool.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "nativeserver", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Returns its text argument unchanged."}, echo)
	return s
}

// HTTPHandler returns the SDK's stateless Streamable HTTP handler for s,
// answering with application/json rather than SSE.
func HTTPHandler(s *mcp.Server) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}
