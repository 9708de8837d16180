package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// shapeProvider answers tools/call and resources/read with the result
// named by the tool or the URI.
type shapeProvider struct{ *mcptest.Provider }

func (shapeProvider) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	if r.Parsed.Name == "ask" {
		// What a plugin's blocking host call to the client comes to.
		_, err := r.ClientCall(ctx, "roots/list", nil)
		return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": fmt.Sprint(err)}}})
	}
	return json.RawMessage(r.Parsed.Name), nil
}

func (shapeProvider) ReadResource(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
	return json.RawMessage(r.Parsed.URI), nil
}

// TestResultShapeOnTheWire: the engine holds every Provider's result to
// its method's MCP result type. A tools/call result that does not conform
// reaches the client as a tool error naming the member (the model can
// read it), a resources/read one as -32603; a conforming one (with members
// the engine does not know) as it is.
func TestResultShapeOnTheWire(t *testing.T) {
	s := mcp.NewServer(shapeProvider{mcptest.New(nil)}, nil)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.ServeStdio(ctx, cr, sw); sw.Close(); close(done) }()
	t.Cleanup(func() { cw.Close(); cancel(); <-done })
	lines := bufio.NewScanner(sr)
	roundTrip := func(method string, params any) string {
		t.Helper()
		if _, err := io.WriteString(cw, request(1, method, params)+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("%s: no answer: %v", method, lines.Err())
		}
		return lines.Text()
	}
	roundTrip("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	tests := []struct {
		method, result, want string
	}{
		{"tools/call", `{"content":[{"type":"text","text":"hi"}],"x-extra":1}`, `"result":{"content":[{"type":"text","text":"hi"}],"x-extra":1}`},
		{"tools/call", `{"content":"nope"}`, `"result":{"content":[{"type":"text","text":"invalid result: content is missing or not an array"}],"isError":true}`},
		{"tools/call", `{"content":[],"isError":"yes"}`, `: isError is not a boolean"}],"isError":true}`},
		{"tools/call", `{"content":[],"structuredContent":[1]}`, `: structuredContent is not an object"}],"isError":true}`},
		{"resources/read", `{"contents":[{"uri":"a://b","text":"x"}]}`, `"result":{"contents":[{"uri":"a://b","text":"x"}]}`},
		{"resources/read", `{"contents":[{"text":"x"}]}`, `"error":{"code":-32603,"message":"invalid result: contents[0].uri is missing or not a string"}`},
	}
	// The plugin registry leaves it to the engine to refuse a client
	// request on a 2026-07-28 request (and one the client has no
	// capability for).
	tests = append(tests,
		struct{ method, result, want string }{"tools/call", "ask", "cannot carry server-to-client requests"},
		struct{ method, result, want string }{"tools/call", "ask", "did not declare the \\\"roots\\\" capability"})
	for i, tt := range tests {
		params := map[string]any{"name": tt.result}
		if i == len(tests)-2 {
			params = withMeta(params, map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}}})
		}
		if tt.method == "resources/read" {
			params = map[string]any{"uri": tt.result}
		}
		if got := roundTrip(tt.method, params); !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: answered %s, want %s", tt.method, tt.result, got, tt.want)
		}
	}
}
