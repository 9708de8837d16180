package mcp_test

import (
	"bufio"
	"context"
	"net/http/httptest"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// BenchmarkStdioToolsCall measures full tools/call round trips over stdio
// pipes, as a client process sees them: one at a time, and with 8 requests
// in flight.
func BenchmarkStdioToolsCall(b *testing.B) {
	for _, tc := range []struct {
		name     string
		inflight int
		modern   bool
	}{
		{"sequential", 1, false},
		{"inflight8", 8, false},
		{"stateless_inflight8", 8, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchStdio(b, tc.inflight, tc.modern)
		})
	}
}

func benchStdio(b *testing.B, inflight int, modern bool) {
	s := mcp.NewServer(mcp.NewConstProvider(), nil)
	defer s.Close()
	cw, sr, done := mcptest.ServeStdio(context.Background(), s)
	br := bufio.NewReaderSize(sr, 1<<16)
	bw := bufio.NewWriterSize(cw, 1<<16)
	if !modern {
		bw.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}` + "\n")
		bw.Flush()
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
	}
	suffix := `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n"
	if modern {
		suffix = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}` + "\n"
	}
	testutil.BenchStdioCalls(b, br, bw, inflight, suffix)
	cw.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}

// BenchmarkHTTPToolsCall measures stateless (2026-07-28) tools/call round
// trips over Streamable HTTP with keep-alive and 64 concurrent clients.
func BenchmarkHTTPToolsCall(b *testing.B) {
	s := mcp.NewServer(mcp.NewConstProvider(), nil)
	defer s.Close()
	ts := httptest.NewServer(s.HTTPHandler(nil))
	defer ts.Close()
	testutil.BenchHTTPCalls(b, ts.URL+"/mcp")
}
