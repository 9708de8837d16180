package jsonrpc

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		code   int    // 0: success
		kind   string // request, notification, response
		id     string // raw id literal expected ("null" when absent)
		method string
	}{
		{name: "request int id", in: `{"jsonrpc":"2.0","id":1,"method":"ping"}`, kind: "request", id: "1", method: "ping"},
		{name: "request string id", in: `{"jsonrpc":"2.0","id":"a","method":"ping","params":{}}`, kind: "request", id: `"a"`, method: "ping"},
		{name: "huge number id kept", in: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"x"}`, kind: "request", id: "123456789012345678901234567890", method: "x"},
		{name: "negative id", in: `{"jsonrpc":"2.0","id":-7,"method":"x"}`, kind: "request", id: "-7", method: "x"},
		{name: "escaped string id canonical", in: `{"jsonrpc":"2.0","id":"a\u0062","method":"x"}`, kind: "request", id: `"ab"`, method: "x"},
		{name: "string id that looks numeric", in: `{"jsonrpc":"2.0","id":"1","method":"x"}`, kind: "request", id: `"1"`, method: "x"},
		{name: "notification", in: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, kind: "notification", id: "null", method: "notifications/initialized"},
		{name: "params array", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`, kind: "request", id: "1", method: "x"},
		{name: "unknown member ignored", in: `{"jsonrpc":"2.0","id":1,"method":"x","extra":{"a":[1,2]}}`, kind: "request", id: "1", method: "x"},
		{name: "whitespace", in: " \t{ \"jsonrpc\" : \"2.0\" , \"id\" : 2 , \"method\" : \"x\" }\r\n", kind: "request", id: "2", method: "x"},
		{name: "result response", in: `{"jsonrpc":"2.0","id":3,"result":{"ok":true}}`, kind: "response", id: "3"},
		{name: "error response", in: `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}`, kind: "response", id: "3"},
		{name: "error response null id", in: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}`, kind: "response", id: "null"},

		{name: "truncated", in: `{"jsonrpc":"2.0","id":1,"met`, code: CodeParseError},
		{name: "empty", in: ``, code: CodeParseError},
		{name: "garbage", in: "\x00\x01\x02", code: CodeParseError},
		{name: "invalid utf8", in: "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\xff\"}", code: CodeParseError},
		{name: "two values", in: `{"jsonrpc":"2.0","id":1,"method":"x"}{}`, code: CodeParseError},
		{name: "deep nesting", in: strings.Repeat("[", 100000), code: CodeParseError},
		{name: "deep valid nesting", in: strings.Repeat("[", 20000) + strings.Repeat("]", 20000), code: CodeParseError},

		{name: "not an object", in: `[]`, code: CodeInvalidRequest},
		{name: "number", in: `42`, code: CodeInvalidRequest},
		{name: "null", in: `null`, code: CodeInvalidRequest},
		{name: "missing jsonrpc", in: `{"id":1,"method":"x"}`, code: CodeInvalidRequest, id: "1"},
		{name: "wrong jsonrpc", in: `{"jsonrpc":"1.0","id":1,"method":"x"}`, code: CodeInvalidRequest, id: "1"},
		{name: "jsonrpc number", in: `{"jsonrpc":2.0,"id":1,"method":"x"}`, code: CodeInvalidRequest, id: "1"},
		{name: "id null request", in: `{"jsonrpc":"2.0","id":null,"method":"x"}`, code: CodeInvalidRequest},
		{name: "id object", in: `{"jsonrpc":"2.0","id":{},"method":"x"}`, code: CodeInvalidRequest},
		{name: "id array", in: `{"jsonrpc":"2.0","id":[1],"method":"x"}`, code: CodeInvalidRequest},
		{name: "id bool", in: `{"jsonrpc":"2.0","id":true,"method":"x"}`, code: CodeInvalidRequest},
		{name: "method number", in: `{"jsonrpc":"2.0","id":1,"method":5}`, code: CodeInvalidRequest, id: "1"},
		{name: "method empty", in: `{"jsonrpc":"2.0","id":1,"method":""}`, code: CodeInvalidRequest, id: "1"},
		{name: "method case", in: `{"jsonrpc":"2.0","id":1,"Method":"x"}`, code: CodeInvalidRequest, id: "1"},
		{name: "params string", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":"a"}`, code: CodeInvalidRequest, id: "1"},
		{name: "params null", in: `{"jsonrpc":"2.0","id":1,"method":"x","params":null}`, code: CodeInvalidRequest, id: "1"},
		{name: "request with result", in: `{"jsonrpc":"2.0","id":1,"method":"x","result":{}}`, code: CodeInvalidRequest, id: "1"},
		{name: "result and error", in: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, code: CodeInvalidRequest, id: "1"},
		{name: "response without id", in: `{"jsonrpc":"2.0","result":{}}`, code: CodeInvalidRequest},
		{name: "result with null id", in: `{"jsonrpc":"2.0","id":null,"result":{}}`, code: CodeInvalidRequest},
		{name: "bad error object", in: `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`, code: CodeInvalidRequest, id: "1"},
		{name: "error code float", in: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, code: CodeInvalidRequest, id: "1"},
		{name: "duplicate method", in: `{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`, code: CodeInvalidRequest, id: "1"},
		{name: "empty object", in: `{}`, code: CodeInvalidRequest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse([]byte(tt.in))
			if tt.code != 0 {
				if err == nil {
					t.Fatalf("Parse(%.60q) succeeded, want code %d", tt.in, tt.code)
				}
				if err.Code != tt.code {
					t.Fatalf("code = %d (%s), want %d", err.Code, err.Message, tt.code)
				}
				if tt.id != "" && m.ID.Raw() != tt.id {
					t.Errorf("id on error = %s, want %s", m.ID.Raw(), tt.id)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			kind := map[bool]string{true: "request"}[m.IsRequest()]
			if m.IsNotification() {
				kind = "notification"
			}
			if m.IsResponse() {
				kind = "response"
			}
			if kind != tt.kind {
				t.Errorf("kind = %q, want %q", kind, tt.kind)
			}
			if m.ID.Raw() != tt.id {
				t.Errorf("id = %s, want %s", m.ID.Raw(), tt.id)
			}
			if m.Method != tt.method {
				t.Errorf("method = %q, want %q", m.Method, tt.method)
			}
		})
	}
}

func TestParseBatch(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		code int
	}{
		{name: "two", in: `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`, n: 2},
		{name: "mixed garbage elements", in: `[1,"x",{}]`, n: 3},
		{name: "empty", in: `[]`, code: CodeInvalidRequest},
		{name: "truncated", in: `[{"jsonrpc":"2.0"`, code: CodeParseError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !IsBatch([]byte(tt.in)) {
				t.Fatal("IsBatch = false")
			}
			elems, err := ParseBatch([]byte(tt.in))
			if tt.code != 0 {
				if err == nil || err.Code != tt.code {
					t.Fatalf("err = %v, want code %d", err, tt.code)
				}
				return
			}
			if err != nil || len(elems) != tt.n {
				t.Fatalf("got %d elements, %v; want %d", len(elems), err, tt.n)
			}
		})
	}
}

func TestIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		id   ID
		want string
	}{
		{name: "string", id: StringID("a\"b"), want: `"a\"b"`},
		{name: "int", id: IntID(-42), want: `-42`},
		{name: "zero", id: ID{}, want: `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.id)
			if err != nil || string(b) != tt.want {
				t.Fatalf("Marshal = %s, %v; want %s", b, err, tt.want)
			}
			var back ID
			if err := json.Unmarshal(b, &back); err != nil || back != tt.id {
				t.Fatalf("Unmarshal = %v, %v; want %v", back, err, tt.id)
			}
		})
	}
	var id ID
	if err := json.Unmarshal([]byte(`true`), &id); err == nil {
		t.Error("Unmarshal(true) succeeded")
	}
}

func TestAppendMessages(t *testing.T) {
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{name: "request", got: AppendRequest(nil, IntID(1), "roots/list", nil), want: `{"jsonrpc":"2.0","id":1,"method":"roots/list"}`},
		{name: "notification", got: AppendNotification(nil, "n", []byte(`{"a":1}`)), want: `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`},
		{name: "result", got: AppendResult(nil, StringID("x"), []byte(`{}`)), want: `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{name: "error", got: AppendError(nil, ID{}, NewError(CodeParseError, "bad \"json\"\n", map[string]int{"a": 1})), want: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad \"json\"\n","data":{"a":1}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Fatalf("got  %s\nwant %s", tt.got, tt.want)
			}
			if !jsonscan.Valid(tt.got) {
				t.Fatal("output is not valid JSON")
			}
		})
	}
}
