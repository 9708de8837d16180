package testutil

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// BenchStdioCalls is the timed part of a stdio round-trip benchmark: it
// writes b.N requests to w, each `{"jsonrpc":"2.0","id":N` followed by
// suffix (the rest of the request and its newline), with ids from 1 and at
// most inflight unanswered, and reads an answer line from r for each. The
// first answer must be JSON. The caller sets the session up on r and w
// first (initialize, if it is a legacy one).
func BenchStdioCalls(b *testing.B, r *bufio.Reader, w *bufio.Writer, inflight int, suffix string) {
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
			w.Write(buf)
			if len(tokens) == cap(tokens) || i == b.N-1 {
				w.Flush()
			}
		}
	}()
	for i := 0; i < b.N; i++ {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 && !json.Valid(line) {
			b.Fatalf("bad response %q", line)
		}
		<-tokens
	}
	b.StopTimer()
	<-writerDone
}

// BenchHTTPCalls posts a stateless (2026-07-28) tools/call of the tool
// echo with the text "hi" to url b.N times, from 32×GOMAXPROCS goroutines
// over keep-alive connections; every answer must be 200 and hold "hi".
func BenchHTTPCalls(b *testing.B, url string) {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	want := []byte(`"hi"`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConns: 128, MaxIdleConnsPerHost: 128}}
	defer client.CloseIdleConnections()
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
			if resp.StatusCode != 200 || n == 0 || !bytes.Contains(buf[:n], want) {
				b.Errorf("status %d: %s", resp.StatusCode, buf[:n])
				return
			}
		}
	})
}

// ReportCPU reports, as "cpu-ns/op", the process's CPU time since start
// (a CPUTime reading) divided by b.N: on a machine shared with other
// work, where ns/op counts the time the benchmark waited for a core, it
// is what one operation costs (the collector's share included).
func ReportCPU(b *testing.B, start time.Duration) {
	if start > 0 && b.N > 0 {
		b.ReportMetric(float64(CPUTime()-start)/float64(b.N), "cpu-ns/op")
	}
}
