package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// TestCheckShape: results the client could not decode as the method's
// result type are refused, naming the member; conforming ones (with
// members the engine does not know) pass. (This check was the plugin
// registry's; the engine now makes it for every Provider.)
func TestCheckShape(t *testing.T) {
	tests := []struct {
		method, out string
		want        string // in the error; "" for none
	}{
		{methodToolsCall, `{"content":[{"type":"text","text":"hi"}],"x-extra":1}`, ""},
		{methodToolsCall, `{"content":[],"structuredContent":{"a":1},"isError":false}`, ""},
		{methodToolsCall, `{"content":[],"structuredContent":null}`, ""},
		{methodToolsCall, `{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`, ""},
		{methodToolsCall, `{}`, "content is missing or not an array"},
		{methodToolsCall, `{"content":"nope"}`, "content is missing or not an array"},
		{methodToolsCall, `{"content":[1]}`, "content[0] is not an object"},
		{methodToolsCall, `{"content":[{"type":"text"},{"text":"no type"}]}`, "content[1].type is missing or not a string"},
		{methodToolsCall, `{"content":[],"structuredContent":[1]}`, "structuredContent is not an object"},
		{methodToolsCall, `{"content":[],"isError":"yes"}`, "isError is not a boolean"},
		{methodResRead, `{"contents":[{"uri":"a://b","text":"x"}]}`, ""},
		{methodResRead, `{"contents":5}`, "contents is missing or not an array"},
		{methodResRead, `{"contents":[{"text":"x"}]}`, "contents[0].uri is missing or not a string"},
		{methodPromptsGet, `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`, ""},
		{methodPromptsGet, `{"messages":"nope"}`, "messages is missing or not an array"},
		{methodPromptsGet, `{"messages":[{"role":"user","content":"x"}]}`, "messages[0].content is not an object"},
		{methodComplete, `{"completion":{"values":["a"],"hasMore":false}}`, ""},
		{methodComplete, `{"completion":{"values":[1]}}`, "completion.values[0] is not a string"},
		{methodComplete, `{"completion":[]}`, "completion is missing or not an object"},
		{methodComplete, `{"completion":{}}`, "completion.values is missing or not an array"},
	}
	for _, tt := range tests {
		f, ok := scanResult([]byte(tt.out))
		if !ok {
			t.Fatalf("%s: not an object", tt.out)
		}
		var err error
		if f.resultType != "input_required" {
			err = checkShape(tt.method, &f.shape)
		}
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s: %v", tt.method, tt.out, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s: error %v, want %q", tt.method, tt.out, err, tt.want)
		}
	}
}

// FuzzCheckShape: any JSON object is checked without a panic, and a
// tools/call or resources/read result the check accepts decodes as the
// result type with encoding/json.
func FuzzCheckShape(f *testing.F) {
	f.Add(`{"content":[{"type":"text","text":"hi"}]}`)
	f.Add(`{"contents":[{"uri":"a://b","text":"x"}]}`)
	f.Add(`{"content":[{"type":1}],"contents":[{}],"messages":[{"content":[]}],"completion":{"values":[1]}}`)
	f.Fuzz(func(t *testing.T, result string) {
		if !jsonscan.Valid([]byte(result)) {
			return
		}
		sc, ok := scanResult([]byte(result))
		if !ok {
			return
		}
		for _, m := range []string{methodToolsCall, methodResRead, methodPromptsGet, methodComplete} {
			if checkShape(m, &sc.shape) != nil {
				continue
			}
			// Maps, not structs: encoding/json matches struct fields
			// without regard to case, MCP keys are exact.
			var top map[string]json.RawMessage
			var items []map[string]json.RawMessage
			arr, key := "content", "type"
			if m == methodResRead {
				arr, key = "contents", "uri"
			} else if m != methodToolsCall {
				continue
			}
			var str string
			if json.Unmarshal([]byte(result), &top) != nil || json.Unmarshal(top[arr], &items) != nil {
				t.Fatalf("%s accepted %s, whose %s is not an array of objects", m, result, arr)
			}
			for _, it := range items {
				if json.Unmarshal(it[key], &str) != nil {
					t.Fatalf("%s accepted %s, whose %s has an item without a string %s", m, result, arr, key)
				}
			}
		}
	})
}
