package jsonrpc

import "testing"

var benchMsg = []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world, this is a benchmark"},"_meta":{"progressToken":"tok-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchMsg)))
	for b.Loop() {
		if _, err := Parse(benchMsg); err != nil {
			b.Fatal(err)
		}
	}
}
