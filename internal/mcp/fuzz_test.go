package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// FuzzDispatch feeds arbitrary lines through a stdio session and checks
// that the server neither panics nor hangs, and writes only well-formed
// JSON-RPC messages, one per line.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"elicitation":{}}}}` + "\n" +
			`[{"jsonrpc":"2.0","id":2,"method":"tools/list"},{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo"}}]`,
		`{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"elicit"}}` + "\n" + `{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"name":"x"}}}`,
		`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
		"\x00\xff\n[[[[\n{}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := mcptest.New(&mcptest.Options{ExtraTools: 3})
		s := mcp.NewServer(p, &mcp.Options{DrainTimeout: 20 * time.Millisecond, MaxMessageBytes: 1 << 16, PageSize: 2})
		p.SetServer(s)
		var out testutil.Buffer
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(context.Background(), bytes.NewReader(data), &out) }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("ServeStdio = %v", err)
			}
		case <-time.After(wait):
			t.Fatal("ServeStdio hung")
		}
		s.Close()
		for _, line := range bytes.Split([]byte(out.String()), []byte("\n")) {
			if len(line) == 0 {
				continue
			}
			var one map[string]json.RawMessage
			var many []map[string]json.RawMessage
			switch {
			case json.Unmarshal(line, &one) == nil:
				many = append(many, one)
			case json.Unmarshal(line, &many) == nil:
			default:
				t.Fatalf("invalid output line %q", line)
			}
			for _, m := range many {
				if string(m["jsonrpc"]) != `"2.0"` {
					t.Fatalf("not JSON-RPC 2.0: %q", line)
				}
				_, hasResult := m["result"]
				_, hasError := m["error"]
				_, hasMethod := m["method"]
				if hasResult == hasError && !hasMethod {
					t.Fatalf("neither a response nor a request: %q", line)
				}
			}
		}
	})
}
