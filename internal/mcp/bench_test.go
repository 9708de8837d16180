package mcp_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
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
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), cr, sw) }()
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
	tokens := make(chan struct{}, inflight)
	b.ReportAllocs()
	b.ResetTimer()
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		buf := make([]byte, 0, 256)
		for i := 0; i < b.N; i++ {
			tokens <- struct{}{}
			buf = append(buf[:0], `{"jsonrpc":"2.0","id":`...)
			buf = strconv.AppendInt(buf, int64(i+1), 10)
			buf = append(buf, suffix...)
			bw.Write(buf)
			if len(tokens) == cap(tokens) || i == b.N-1 {
				bw.Flush()
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		if _, err := br.ReadSlice('\n'); err != nil {
			b.Fatal(err)
		}
		<-tokens
	}
	b.StopTimer()
	<-writerDone
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
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}}
	defer client.CloseIdleConnections()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
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
			if resp.StatusCode != 200 || n == 0 {
				b.Errorf("status %d", resp.StatusCode)
				return
			}
		}
	})
}
