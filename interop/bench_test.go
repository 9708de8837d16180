package interop

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strconv"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	wmcp "github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// constProvider serves one trivial tool, like the SDK server below, so the
// two benchmarks compare protocol engines.
type constProvider struct{}

var (
	constTools  = []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)}
	constResult = json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
)

func (constProvider) Features() wmcp.Features { return wmcp.Features{Tools: true} }
func (constProvider) Tools(context.Context, *wmcp.Request) ([]json.RawMessage, error) {
	return constTools, nil
}
func (constProvider) Resources(context.Context, *wmcp.Request) ([]json.RawMessage, error) {
	return nil, nil
}
func (constProvider) ResourceTemplates(context.Context, *wmcp.Request) ([]json.RawMessage, error) {
	return nil, nil
}
func (constProvider) Prompts(context.Context, *wmcp.Request) ([]json.RawMessage, error) {
	return nil, nil
}
func (constProvider) CallTool(context.Context, *wmcp.Request) (json.RawMessage, error) {
	return constResult, nil
}
func (constProvider) ReadResource(context.Context, *wmcp.Request) (json.RawMessage, error) {
	return nil, nil
}
func (constProvider) GetPrompt(context.Context, *wmcp.Request) (json.RawMessage, error) {
	return nil, nil
}
func (constProvider) Complete(context.Context, *wmcp.Request) (json.RawMessage, error) {
	return nil, nil
}

// BenchmarkStdioToolsCall compares a trivial tools/call round trip over
// stdio pipes: wasmcp's engine against a native official-Go-SDK server,
// driven by the same raw client, one at a time and 8 in flight.
func BenchmarkStdioToolsCall(b *testing.B) {
	servers := []struct {
		name  string
		serve func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error
	}{
		{"wasmcp", func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
			s := wmcp.NewServer(constProvider{}, nil)
			defer s.Close()
			return s.ServeStdio(ctx, r, w)
		}},
		{"gosdk", func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) error {
			s := mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			type in struct {
				Text string `json:"text"`
			}
			mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, args in) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, nil
			})
			return s.Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
		}},
	}
	for _, srv := range servers {
		for _, inflight := range []int{1, 8} {
			name := srv.name + "/sequential"
			if inflight > 1 {
				name = srv.name + "/inflight" + strconv.Itoa(inflight)
			}
			b.Run(name, func(b *testing.B) {
				cr, cw := io.Pipe()
				sr, sw := io.Pipe()
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				done := make(chan error, 1)
				go func() { done <- srv.serve(ctx, cr, sw) }()
				roundTrips(b, sr, cw, inflight)
				cw.Close()
				cancel()
				<-done
			})
		}
	}
}

func roundTrips(b *testing.B, r io.Reader, w io.Writer, inflight int) {
	br := bufio.NewReaderSize(r, 1<<16)
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n")
	bw.Flush()
	if _, err := br.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	bw.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	bw.Flush()
	const suffix = `,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}` + "\n"
	testutil.BenchStdioCalls(b, br, bw, inflight, suffix)
}
