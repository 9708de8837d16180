package mcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// slowEcho limits echo, under two names, to 0.01 calls a second in
// bursts of 2 (one bucket: key "e"), and nothing else.
func slowEcho(tool string) (string, float64, int) {
	if tool == "echo" || tool == "echo_alias" {
		return "e", 0.01, 2
	}
	return "", 0, 0
}

// TestToolRate checks Options.ToolRate: past a tool's burst a principal
// is refused as the principal rate limit refuses (HTTP 429 with
// Retry-After, -32001 busy on stdio), another principal and another tool
// are not, and names sharing a key share a bucket.
func TestToolRate(t *testing.T) {
	t.Run("http", func(t *testing.T) {
		e := startHTTPWith(t, &mcp.Options{ToolRate: slowEcho}, nil, &mcp.HTTPOptions{Middleware: identityMiddleware})
		for i := range 2 {
			if st, _, body, err := principalPost(context.Background(), e.url, "carol", "echo", nil); err != nil || st != http.StatusOK {
				t.Fatalf("call %d within the burst: %d %s %v", i, st, body, err)
			}
		}
		for _, tool := range []string{"echo", "echo_alias"} {
			st, ra, body, _ := principalPost(context.Background(), e.url, "carol", tool, nil)
			if st != http.StatusTooManyRequests || ra == "" || ra == "0" || !strings.Contains(body, "Rate limit") || !strings.Contains(body, `"busy":true`) {
				t.Fatalf("%s past the burst: %d Retry-After=%q %s", tool, st, ra, body)
			}
		}
		if st, _, body, _ := principalPost(context.Background(), e.url, "dave", "echo", nil); st != http.StatusOK {
			t.Fatalf("another principal: %d %s", st, body)
		}
		if st, _, body, _ := principalPost(context.Background(), e.url, "carol", "add", map[string]any{"a": 1, "b": 2}); st != http.StatusOK {
			t.Fatalf("another tool: %d %s", st, body)
		}
	})
	t.Run("stdio", func(t *testing.T) {
		c := startStdio(t, nil, &mcp.Options{ToolRate: slowEcho})
		c.initialize("2025-11-25", nil)
		for i := range 2 {
			m, _ := c.rpc(i, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}})
			wantResult(t, m)
		}
		m, _ := c.rpc("past", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}})
		wantError(t, m, jsonrpc.CodeRequestTimeout)
		if !strings.Contains(m.Error.Message, "Rate limit") || !strings.Contains(string(m.Error.Data), `"retryAfterMs"`) {
			t.Errorf("refusal %q %s", m.Error.Message, m.Error.Data)
		}
		m, _ = c.rpc("other", "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}})
		wantResult(t, m)
	})
}
