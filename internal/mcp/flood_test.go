package mcp_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// Tests of clients that flood the host with work or output: each fails if
// the bound it names is removed.

// batchOf returns a 2025-03-26 batch of n requests made by req(i).
func batchOf(n int, req func(i int) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(req(i))
	}
	b.WriteByte(']')
	return b.String()
}

// batchResponses decodes a batch response.
func batchResponses(t *testing.T, raw string) []*msg {
	t.Helper()
	var arr []*msg
	if err := json.Unmarshal([]byte(raw), &arr); err != nil {
		t.Fatalf("want a batch response, got %.300s", raw)
	}
	return arr
}

// checkBigBatch checks the answer to a batch of 20 "big" calls of 100 KB
// each under a 256 KiB response bound: every request is answered, the
// responses past the bound are -32600 errors, and the whole stays near the
// bound.
func checkBigBatch(t *testing.T, raw string) {
	t.Helper()
	arr := batchResponses(t, raw)
	if len(arr) != 20 {
		t.Fatalf("%d responses, want 20", len(arr))
	}
	refused := 0
	for _, m := range arr {
		if m.Error != nil {
			if m.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(m.Error.Message, "batch") {
				t.Fatalf("error %d %q", m.Error.Code, m.Error.Message)
			}
			refused++
		}
	}
	if refused == 0 || refused == 20 {
		t.Errorf("%d of 20 responses refused, want some", refused)
	}
	if len(raw) > 256<<10+200<<10 {
		t.Errorf("batch response of %d bytes under a 256 KiB bound", len(raw))
	}
}

func bigCall(i int) string {
	return request(i, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": 100000}})
}

func TestStdioBatchBounds(t *testing.T) {
	t.Run("length", func(t *testing.T) {
		c := startStdio(t, nil, nil) // default: 100
		c.initialize("2025-03-26", nil)
		c.send(batchOf(101, func(i int) string { return request(i, "tools/list", nil) }))
		m := c.next()
		if m.Method == "(batch)" {
			t.Fatalf("a batch of 101 was served: %.200s", m.raw)
		}
		wantError(t, m, jsonrpc.CodeInvalidRequest)
		if !strings.Contains(m.Error.Message, "at most 100") {
			t.Errorf("message %q", m.Error.Message)
		}
		// The session goes on, batches within the bound too.
		c.send(batchOf(100, func(i int) string { return request(i, "ping", nil) }))
		if arr := batchResponses(t, c.next().raw); len(arr) != 100 {
			t.Fatalf("%d responses to a batch of 100", len(arr))
		}
		m, _ = c.rpc("after", "ping", nil)
		wantResult(t, m)
	})
	t.Run("response size", func(t *testing.T) {
		c := startStdio(t, nil, &mcp.Options{MaxBatchBytes: 256 << 10})
		c.initialize("2025-03-26", nil)
		c.send(batchOf(20, bigCall))
		checkBigBatch(t, c.next().raw)
		m, _ := c.rpc("after", "ping", nil)
		wantResult(t, m)
	})
}

func TestHTTPBatchBounds(t *testing.T) {
	e := startHTTPWith(t, &mcp.Options{MaxBatchBytes: 256 << 10}, nil, nil)
	h := e.legacySession("2025-03-26", nil)
	resp := e.post(batchOf(101, func(i int) string { return request(i, "tools/list", nil) }), h)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"code":-32600`) || !strings.Contains(string(b), "at most 100") {
		t.Fatalf("batch of 101: %d %.300s", resp.StatusCode, b)
	}
	resp = e.post(batchOf(20, bigCall), h)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch of big calls: %d %.300s", resp.StatusCode, b)
	}
	checkBigBatch(t, string(b))
	// The session survives.
	resp = e.post(request("after", "ping", nil), h)
	wantResult(t, lastMsg(t, resp))
}

var _ = fmt.Sprint
