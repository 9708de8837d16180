package interop

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	wmcp "github.com/wasmcp/wasmcp/internal/mcp"
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
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, hc := range handlers {
		b.Run(hc.name, func(b *testing.B) {
			h, done := hc.h()
			defer done()
			ts := httptest.NewServer(h)
			defer ts.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}}
			defer client.CloseIdleConnections()
			url := ts.URL + "/mcp"
			b.ReportAllocs()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 4096)
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("MCP-Protocol-Version", "2026-07-28")
					req.Header.Set("Mcp-Method", "tools/call")
					req.Header.Set("Mcp-Name", "echo")
					resp, err := client.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					n, _ := io.ReadFull(resp.Body, buf)
					resp.Body.Close()
					if resp.StatusCode != 200 || n == 0 || !bytes.Contains(buf[:n], []byte(`"hi"`)) {
						b.Errorf("status %d: %s", resp.StatusCode, buf[:n])
						return
					}
				}
			})
		})
	}
}
