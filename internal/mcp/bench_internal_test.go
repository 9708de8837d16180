package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// constProvider is a trivial Provider: one tool answering a constant, so
// that benchmarks measure the engine rather than the provider.
type constProvider struct{}

var (
	constTools  = []json.RawMessage{json.RawMessage(`{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`)}
	constResult = json.RawMessage(`{"content":[{"type":"text","text":"hi"}]}`)
)

func (constProvider) Features() Features { return Features{Tools: true} }
func (constProvider) Tools(context.Context, *Request) ([]json.RawMessage, error) {
	return constTools, nil
}
func (constProvider) Resources(context.Context, *Request) ([]json.RawMessage, error) {
	return nil, nil
}
func (constProvider) ResourceTemplates(context.Context, *Request) ([]json.RawMessage, error) {
	return nil, nil
}
func (constProvider) Prompts(context.Context, *Request) ([]json.RawMessage, error) { return nil, nil }
func (constProvider) CallTool(context.Context, *Request) (json.RawMessage, error) {
	return constResult, nil
}
func (constProvider) ReadResource(context.Context, *Request) (json.RawMessage, error) {
	return nil, nil
}
func (constProvider) GetPrompt(context.Context, *Request) (json.RawMessage, error) { return nil, nil }
func (constProvider) Complete(context.Context, *Request) (json.RawMessage, error)  { return nil, nil }

// BenchmarkDispatchToolsCall measures one tools/call through the
// dispatcher in-process: parse, route, run, encode the response.
func BenchmarkDispatchToolsCall(b *testing.B) {
	s := NewServer(constProvider{}, nil)
	defer s.Close()
	b.Run("legacy", func(b *testing.B) {
		c := s.newConn(s.ctx, discardSink{})
		init, _ := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`))
		if _, e := c.initialize(&init, nil); e != nil {
			b.Fatal(e)
		}
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
		benchDispatch(b, s, line, func(m *jsonrpc.Message, mi *metaInfo) *call {
			return c.newLegacyCall(m, mi, discardSink{})
		})
	})
	b.Run("stateless", func(b *testing.B) {
		line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
		benchDispatch(b, s, line, func(m *jsonrpc.Message, mi *metaInfo) *call {
			if e := checkModern(m, mi); e != nil {
				b.Fatal(e)
			}
			return s.newModernCall(s.ctx, m, mi, discardSink{})
		})
	})
}

func benchDispatch(b *testing.B, s *Server, line []byte, mk func(*jsonrpc.Message, *metaInfo) *call) {
	b.ReportAllocs()
	var out []byte
	for b.Loop() {
		m, perr := jsonrpc.Parse(line)
		if perr != nil {
			b.Fatal(perr)
		}
		var mi metaInfo
		scanMeta(m.Params, &mi)
		cl := mk(&m, &mi)
		res, err := s.invoke(cl)
		var ok bool
		out, _, ok = s.finish(cl, res, err, out[:0])
		if !ok || len(out) == 0 {
			b.Fatal("no response")
		}
	}
}
