package interop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	wmcp "github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// BenchmarkHTTPToolsCall compares stateless 2026-07-28 tools/call round
// trips over Streamable HTTP (keep-alive, 64 concurrent clients): wasmcp's
// handler against the official Go SDK's stateless handler (JSON replies).
func BenchmarkHTTPToolsCall(b *testing.B) {
	handlers := []struct {
		name string
		h    func() (http.Handler, func())
	}{
		{"wasmcp", func() (http.Handler, func()) {
			s := wmcp.NewServer(constProvider{}, nil)
			return s.HTTPHandler(nil), func() { s.Close() }
		}},
		{"gosdk", func() (http.Handler, func()) {
			s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			type in struct {
				Text string `json:"text"`
			}
			mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
			})
			h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
			mux := http.NewServeMux()
			mux.Handle("/mcp", h)
			return mux, func() {}
		}},
	}
	for _, hc := range handlers {
		b.Run(hc.name, func(b *testing.B) {
			h, done := hc.h()
			defer done()
			ts := httptest.NewServer(h)
			defer ts.Close()
			testutil.BenchHTTPCalls(b, ts.URL+"/mcp")
		})
	}
}
