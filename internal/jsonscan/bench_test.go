package jsonscan

import (
	"encoding/json"
	"testing"
)

var benchMsg = []byte(`{"jsonrpc":"2.0","id":12345,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello world, this is a benchmark"},"_meta":{"progressToken":"tok-1","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)

func BenchmarkValid(b *testing.B) {
	b.Run("jsonscan", func(b *testing.B) {
		b.SetBytes(int64(len(benchMsg)))
		for b.Loop() {
			if !Valid(benchMsg) {
				b.Fatal("invalid")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(benchMsg)))
		for b.Loop() {
			if !json.Valid(benchMsg) {
				b.Fatal("invalid")
			}
		}
	})
}
