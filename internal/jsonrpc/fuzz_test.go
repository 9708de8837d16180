package jsonrpc

import (
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// FuzzParse checks that Parse never panics, that everything it accepts is
// valid JSON-RPC according to encoding/json, and that re-encoding a parsed
// message gives valid JSON that parses to the same message.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x","data":[1]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1e400,"method":"x"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"x"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if IsBatch(data) {
			_, _ = ParseBatch(data)
		}
		m, err := Parse(data)
		if err != nil {
			if err.Code != CodeParseError && err.Code != CodeInvalidRequest {
				t.Fatalf("unexpected code %d", err.Code)
			}
			if err.Code == CodeParseError && jsonscan.Valid(data) {
				t.Fatalf("parse error for valid JSON %q", data)
			}
			out := AppendError(nil, m.ID, err)
			if !json.Valid(out) {
				t.Fatalf("invalid error response %s", out)
			}
			return
		}
		var out []byte
		switch {
		case m.IsRequest():
			out = AppendRequest(nil, m.ID, m.Method, m.Params)
		case m.IsNotification():
			out = AppendNotification(nil, m.Method, m.Params)
		case m.Error != nil:
			out = AppendError(nil, m.ID, m.Error)
		default:
			out = AppendResult(nil, m.ID, m.Result)
		}
		if !jsonscan.Valid(out) {
			t.Fatalf("re-encoded message is invalid: %s", out)
		}
		m2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-encoded message %s does not parse: %v", out, err)
		}
		if m2.ID != m.ID || m2.Method != m.Method || string(m2.Params) != string(m.Params) {
			t.Fatalf("round trip changed the message: %s", out)
		}
	})
}
