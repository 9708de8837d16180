package plugins

import (
	"strings"
	"testing"
)

// TestReadHeadValid: the registry reads the members it acts on only from
// a result that is one valid JSON object (the MCP shape of the result is
// the engine's to check: internal/mcp, TestCheckShape).
func TestReadHeadValid(t *testing.T) {
	tests := []struct {
		out, want string // want in the error; "" for none
	}{
		{`{"content":[{"type":"text","text":"hi"}],"isError":true}`, ""},
		{`{"content":"nope"}`, ""}, // the engine's to refuse
		{`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"}}}`, ""},
		{`{"resultType":"input_required","inputRequests":{"a":5}}`, "invalid inputRequests"},
		{`[1,2]`, "not a JSON object"},
		{`{"content":[{"type":"text","text":"` + "\xff" + `"}]}`, "not valid UTF-8"},
		{`{"content":[]} {}`, "not valid JSON"},
		{``, "not valid JSON"},
	}
	for _, tt := range tests {
		_, err := readHead([]byte(tt.out))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.out, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: error %v, want %q", tt.out, err, tt.want)
		}
	}
}
