package mcp_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// paramsCases are the params of the feature methods and what the engine
// parses them into, or the -32602 message it refuses them with (the
// messages the plugin registry gave before the engine parsed them).
var paramsCases = []struct {
	name, method, params string
	want                 mcpreq.Params
	err                  string
}{
	{"tool", "tools/call", `{"name":"echo","arguments":{"text":"hi"}}`, mcpreq.Params{Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)}, ""},
	{"tool without arguments", "tools/call", `{"name":"echo"}`, mcpreq.Params{Name: "echo", Arguments: json.RawMessage(`{}`)}, ""},
	{"tool with null arguments", "tools/call", `{"name":"echo","arguments":null}`, mcpreq.Params{Name: "echo", Arguments: json.RawMessage(`{}`)}, ""},
	{"tool, escaped name", "tools/call", `{"name":"e\u0063ho"}`, mcpreq.Params{Name: "echo", Arguments: json.RawMessage(`{}`)}, ""},
	{"tool, retried", "tools/call", `{"name":"ask","inputResponses":{"a":{}},"requestState":"s1"}`, mcpreq.Params{Name: "ask", Arguments: json.RawMessage(`{}`), InputResponses: json.RawMessage(`{"a":{}}`), RequestState: ptr("s1")}, ""},
	{"tool, null requestState", "tools/call", `{"name":"ask","requestState":null}`, mcpreq.Params{Name: "ask", Arguments: json.RawMessage(`{}`)}, ""},
	{"tool without a name", "tools/call", `{"arguments":{}}`, mcpreq.Params{}, "tools/call needs a tool name"},
	{"tool, name not a string", "tools/call", `{"name":5}`, mcpreq.Params{}, "params.name must be a string"},
	{"tool, arguments not an object", "tools/call", `{"name":"echo","arguments":[1]}`, mcpreq.Params{}, "tools/call arguments must be an object"},
	{"tool, requestState not a string", "tools/call", `{"name":"echo","requestState":5}`, mcpreq.Params{}, "params.requestState must be a string"},
	{"tool, malformed ref", "tools/call", `{"name":"echo","ref":"x"}`, mcpreq.Params{}, `invalid params.ref: json: cannot unmarshal string into Go value of type struct { Type string "json:\"type\""; Name string "json:\"name\""; URI string "json:\"uri\"" }`},
	{"prompt", "prompts/get", `{"name":"greet","arguments":{"who":"x"}}`, mcpreq.Params{Name: "greet", Arguments: json.RawMessage(`{"who":"x"}`)}, ""},
	{"prompt without arguments", "prompts/get", `{"name":"greet"}`, mcpreq.Params{Name: "greet"}, ""},
	{"prompt without a name", "prompts/get", `{}`, mcpreq.Params{}, "prompts/get needs a prompt name"},
	{"prompt, arguments not an object", "prompts/get", `{"name":"greet","arguments":"who"}`, mcpreq.Params{}, "prompts/get arguments must be an object of strings"},
	{"resource", "resources/read", `{"uri":"file:///a"}`, mcpreq.Params{URI: "file:///a"}, ""},
	{"resource without a uri", "resources/read", `{}`, mcpreq.Params{}, "resources/read needs a uri"},
	{"resource, uri not a string", "resources/read", `{"uri":{}}`, mcpreq.Params{}, "params.uri must be a string"},
	{"completion of a prompt", "completion/complete", `{"ref":{"type":"ref/prompt","name":"greet"},"argument":{"name":"who","value":"a"}}`, mcpreq.Params{Ref: mcpreq.Ref{Type: "ref/prompt", Name: "greet"}}, ""},
	{"completion of a template", "completion/complete", `{"ref":{"type":"ref/resource","uri":"file:///{x}"}}`, mcpreq.Params{Ref: mcpreq.Ref{Type: "ref/resource", URI: "file:///{x}"}}, ""},
	{"completion without a ref", "completion/complete", `{}`, mcpreq.Params{}, ""},
	{"completion, unknown ref type", "completion/complete", `{"ref":{"type":"ref/tool","name":"x"}}`, mcpreq.Params{}, `unknown completion ref type "ref/tool"`},
	{"completion, ref member not a string", "completion/complete", `{"ref":{"type":5}}`, mcpreq.Params{}, "invalid params.ref: json: cannot unmarshal number into Go struct field .type of type string"},
}

func ptr(s string) *string { return &s }

// TestParseParams: the engine is the one place where the params of
// tools/call, prompts/get, resources/read and completion/complete are
// read and checked.
func TestParseParams(t *testing.T) {
	for _, tc := range paramsCases {
		t.Run(tc.name, func(t *testing.T) {
			r := &mcp.Request{Method: tc.method, Params: json.RawMessage(tc.params)}
			err := r.ParseParams()
			if tc.err != "" {
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != jsonrpc.CodeInvalidParams || je.Message != tc.err {
					t.Fatalf("ParseParams = %v, want -32602 %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r.Parsed, tc.want) {
				t.Errorf("Parsed = %+v, want %+v", r.Parsed, tc.want)
			}
		})
	}
}

// TestParamsOnTheWire: a malformed feature request is answered -32602 by
// the engine, with the message of the rule, before the Provider runs
// (the test provider would answer these otherwise).
func TestParamsOnTheWire(t *testing.T) {
	c := startStdio(t, nil, nil)
	c.initialize("2025-11-25", nil)
	for i, tc := range paramsCases {
		if tc.err == "" {
			continue
		}
		var params map[string]any
		if err := json.Unmarshal([]byte(tc.params), &params); err != nil {
			t.Fatal(err)
		}
		m, _ := c.rpc(100+i, tc.method, params)
		wantError(t, m, jsonrpc.CodeInvalidParams)
		if m.Error.Message != tc.err {
			t.Errorf("%s: message %q, want %q", tc.name, m.Error.Message, tc.err)
		}
	}
}

// FuzzParseParams: any params object is parsed without a panic, and what
// is accepted agrees with encoding/json.
func FuzzParseParams(f *testing.F) {
	for _, tc := range paramsCases {
		f.Add(tc.method, tc.params)
	}
	f.Fuzz(func(t *testing.T, method, params string) {
		if !json.Valid([]byte(params)) || !utf8.ValidString(params) {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(params), &obj) != nil || obj == nil {
			return // the engine refuses params that are not an object first
		}
		r := &mcp.Request{Method: method, Params: json.RawMessage(params)}
		if r.ParseParams() != nil {
			return
		}
		str := func(key string) string {
			var s string
			if v, ok := obj[key]; ok && json.Unmarshal(v, &s) != nil {
				t.Fatalf("accepted %s, whose %s encoding/json does not decode as a string", params, key)
			}
			return s
		}
		if name, uri := str("name"), str("uri"); name != r.Parsed.Name || uri != r.Parsed.URI {
			t.Fatalf("%s: parsed name %q uri %q, encoding/json %q %q", params, r.Parsed.Name, r.Parsed.URI, name, uri)
		}
		if method == "tools/call" && (r.Parsed.Name == "" || !json.Valid(r.Parsed.Arguments) || r.Parsed.Arguments[0] != '{') {
			t.Fatalf("%s: accepted a tools/call with name %q and arguments %s", params, r.Parsed.Name, r.Parsed.Arguments)
		}
	})
}
