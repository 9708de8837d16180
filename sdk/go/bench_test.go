package wasmcp_test

import (
	"testing"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// BenchmarkHandleEcho measures the SDK's dispatch cost for a trivial typed
// tool: envelope decoding, argument decoding, structured result encoding.
func BenchmarkHandleEcho(b *testing.B) {
	p := wasmcp.New(wasmcp.Info{Name: "bench"})
	type in struct {
		Text string `json:"text"`
	}
	wasmcp.AddTool(p, wasmcp.Tool{Name: "echo"}, func(c *wasmcp.Context, i in) (*wasmcp.Result, error) {
		return wasmcp.TextResult(i.Text), nil
	})
	env := []byte(`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":1}},` +
		`"context":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"},"clientCapabilities":{"sampling":{}},"progressToken":1}}`)
	b.ReportAllocs()
	for b.Loop() {
		if status, _ := p.HandleWith(nil, env); status != 0 {
			b.Fatal(status)
		}
	}
}
