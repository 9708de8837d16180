package server

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestErrorMapping drives every failure kind of errors.go through a real
// stdio session and checks what the client sees. It also checks that the
// server keeps answering after each failure.
func TestErrorMapping(t *testing.T) {
	srv := newTestServer(t, kitchenConfig)
	c := startSession(t, srv)

	type want struct {
		code     int    // JSON-RPC error code, 0 for a result
		isError  bool   // tool result isError
		contains string // in the error message or the result text
		absent   string // must not appear anywhere in the answer
	}
	tests := []struct {
		name   string
		method string
		params map[string]any
		want   want
	}{
		{"ok", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hey"}}, want{contains: `"length":3`}},
		{"unknown tool", "tools/call", map[string]any{"name": "nope"}, want{code: -32602, contains: "Unknown tool: nope"}},
		{"missing name", "tools/call", map[string]any{}, want{code: -32602}},
		{"arguments fail inputSchema", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"txt": 1}}, want{isError: true, contains: "arguments"}},
		{"arguments not an object", "tools/call", map[string]any{"name": "echo", "arguments": []int{1}}, want{code: -32602}},
		{"plugin isError", "tools/call", map[string]any{"name": "fail"}, want{isError: true, contains: "failed on purpose"}},
		{"outputSchema violated", "tools/call", map[string]any{"name": "bad_output"}, want{isError: true, contains: "outputSchema"}},
		{"plugin JSON-RPC error", "tools/call", map[string]any{"name": "rpc_error"}, want{code: -32602, contains: "refused by the plugin"}},
		{"deadline", "tools/call", map[string]any{"name": "loop"}, want{code: -32001, contains: "timed out"}},
		{"panic", "tools/call", map[string]any{"name": "panic"}, want{isError: true, absent: "/home/secret"}},
		{"exit", "tools/call", map[string]any{"name": "exit"}, want{isError: true, contains: "exit"}},
		{"out of memory", "tools/call", map[string]any{"name": "hog"}, want{isError: true, contains: "memory"}},
		{"output cap", "tools/call", map[string]any{"name": "flood"}, want{isError: true, contains: "output"}},
		{"kv granted", "tools/call", map[string]any{"name": "counter"}, want{contains: "1"}},
		{"config granted", "tools/call", map[string]any{"name": "greeting"}, want{contains: "hi there"}},
		{"resource", "resources/read", map[string]any{"uri": "kitchen://static"}, want{contains: "static text"}},
		{"resource template", "resources/read", map[string]any{"uri": "kitchen://item/42"}, want{contains: "item 42"}},
		{"resource not served", "resources/read", map[string]any{"uri": "nowhere://x"}, want{code: -32002}},
		{"resource not found by plugin", "resources/read", map[string]any{"uri": "kitchen://item/missing"}, want{code: -32002}},
		{"prompt", "prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Ann"}}, want{contains: "Say hello to Ann"}},
		{"prompt missing argument", "prompts/get", map[string]any{"name": "greet"}, want{code: -32602, contains: "name"}},
		{"unknown prompt", "prompts/get", map[string]any{"name": "nope"}, want{code: -32602}},
		{"completion", "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "name", "value": "al"}}, want{contains: "albert"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			r := c.call(tc.method, tc.params)
			all := string(r.Result)
			if r.Error != nil {
				all += r.Error.Message + string(r.Error.Data)
			}
			if tc.want.code != 0 {
				if r.Error == nil || r.Error.Code != tc.want.code {
					t.Fatalf("want error %d, got %s %+v", tc.want.code, r.Result, r.Error)
				}
			} else if r.Error != nil {
				t.Fatalf("unexpected error %d: %s", r.Error.Code, r.Error.Message)
			}
			if tc.method == "tools/call" && tc.want.code == 0 {
				tr := decodeTool(t, r)
				if tr.IsError != tc.want.isError {
					t.Errorf("isError = %v, want %v (%s)", tr.IsError, tc.want.isError, r.Result)
				}
			}
			if tc.want.contains != "" && !strings.Contains(strings.ToLower(all), strings.ToLower(tc.want.contains)) {
				t.Errorf("answer %q does not contain %q", all, tc.want.contains)
			}
			if tc.want.absent != "" && strings.Contains(all, tc.want.absent) {
				t.Errorf("answer %q leaks %q", all, tc.want.absent)
			}
			if tc.name == "deadline" {
				var d struct {
					TimeoutMs int `json:"timeoutMs"`
				}
				json.Unmarshal(r.Error.Data, &d)
				if d.TimeoutMs != 5000 {
					t.Errorf("data.timeoutMs = %d, want 5000", d.TimeoutMs)
				}
				if el := time.Since(start); el > 5*time.Second+3*time.Second {
					t.Errorf("loop answered after %v, deadline 5s", el)
				}
			}
			// The server must still answer after any failure.
			if r := c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}); r.Error != nil {
				t.Fatalf("server unhealthy after %s: %+v", tc.name, r.Error)
			}
		})
	}
}
