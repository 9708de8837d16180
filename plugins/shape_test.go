package plugins

import (
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// TestReadHeadShape: results the client could not decode as the method's
// result type are refused, naming the member; conforming ones (with
// members the host does not know) pass.
func TestReadHeadShape(t *testing.T) {
	tests := []struct {
		method, out string
		want        string // in the error; "" for none
	}{
		{abi.MethodToolsCall, `{"content":[{"type":"text","text":"hi"}],"x-extra":1}`, ""},
		{abi.MethodToolsCall, `{"content":[],"structuredContent":{"a":1},"isError":false}`, ""},
		{abi.MethodToolsCall, `{"content":[],"structuredContent":null}`, ""},
		{abi.MethodToolsCall, `{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`, ""},
		{abi.MethodToolsCall, `{}`, "content is missing or not an array"},
		{abi.MethodToolsCall, `{"content":"nope"}`, "content is missing or not an array"},
		{abi.MethodToolsCall, `{"content":[1]}`, "content[0] is not an object"},
		{abi.MethodToolsCall, `{"content":[{"type":"text"},{"text":"no type"}]}`, "content[1].type is missing or not a string"},
		{abi.MethodToolsCall, `{"content":[],"structuredContent":[1]}`, "structuredContent is not an object"},
		{abi.MethodToolsCall, `{"content":[],"isError":"yes"}`, "isError is not a boolean"},
		{abi.MethodToolsCall, `[1,2]`, "not a JSON object"},
		{abi.MethodToolsCall, `{"content":[{"type":"text","text":"` + "\xff" + `"}]}`, "not valid UTF-8"},
		{abi.MethodToolsCall, `{"content":[]} {}`, "not valid JSON"},
		{abi.MethodToolsCall, ``, "not valid JSON"},
		{abi.MethodResourceRead, `{"contents":[{"uri":"a://b","text":"x"}]}`, ""},
		{abi.MethodResourceRead, `{"contents":5}`, "contents is missing or not an array"},
		{abi.MethodResourceRead, `{"contents":[{"text":"x"}]}`, "contents[0].uri is missing or not a string"},
		{abi.MethodPromptsGet, `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`, ""},
		{abi.MethodPromptsGet, `{"messages":"nope"}`, "messages is missing or not an array"},
		{abi.MethodPromptsGet, `{"messages":[{"role":"user","content":"x"}]}`, "messages[0].content is not an object"},
		{abi.MethodComplete, `{"completion":{"values":["a"],"hasMore":false}}`, ""},
		{abi.MethodComplete, `{"completion":{"values":[1]}}`, "completion.values[0] is not a string"},
		{abi.MethodComplete, `{"completion":[]}`, "completion is missing or not an object"},
		{abi.MethodComplete, `{"completion":{}}`, "completion.values is missing or not an array"},
	}
	for _, tt := range tests {
		_, err := readHead(tt.method, []byte(tt.out))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s %s: %v", tt.method, tt.out, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s %s: error %v, want %q", tt.method, tt.out, err, tt.want)
		}
	}
}
