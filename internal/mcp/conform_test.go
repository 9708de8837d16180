package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// shapeProvider answers tools/call and resources/read with the result
// named by the tool or the URI.
type shapeProvider struct{ *mcptest.Provider }

func (shapeProvider) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	if r.Parsed.Name == "ask" {
		// What a plugin's blocking host call to the client comes to.
		_, err := r.ClientCall(ctx, "roots/list", nil)
		return json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": fmt.Sprint(err)}}})
	}
	return json.RawMessage(r.Parsed.Name), nil
}

func (shapeProvider) ReadResource(_ context.Context, r *mcp.Request) (json.RawMessage, error) {
	return json.RawMessage(r.Parsed.URI), nil
}

// shapeSession serves shapeProvider (with opts) on stdio pipes to an
// initialized legacy session; roundTrip sends one request and returns
// the answer's line.
func shapeSession(t *testing.T, opts *mcp.Options) (roundTrip func(method string, params any) string) {
	t.Helper()
	s := mcp.NewServer(shapeProvider{mcptest.New(nil)}, opts)
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.ServeStdio(ctx, cr, sw); sw.Close(); close(done) }()
	t.Cleanup(func() { cw.Close(); cancel(); <-done })
	lines := bufio.NewScanner(sr)
	roundTrip = func(method string, params any) string {
		t.Helper()
		if _, err := io.WriteString(cw, request(1, method, params)+"\n"); err != nil {
			t.Fatal(err)
		}
		if !lines.Scan() {
			t.Fatalf("%s: no answer: %v", method, lines.Err())
		}
		return lines.Text()
	}
	roundTrip("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	return roundTrip
}

// TestResultShapeOnTheWire: the engine holds every Provider's result to
// its method's MCP result type. A tools/call result that does not conform
// reaches the client as a tool error naming the member (the model can
// read it), a resources/read one as -32603; a conforming one (with members
// the engine does not know) as it is.
func TestResultShapeOnTheWire(t *testing.T) {
	roundTrip := shapeSession(t, nil)
	tests := []struct {
		method, result, want string
	}{
		{"tools/call", `{"content":[{"type":"text","text":"hi"}],"x-extra":1}`, `"result":{"content":[{"type":"text","text":"hi"}],"x-extra":1}`},
		{"tools/call", `{"content":"nope"}`, `"result":{"content":[{"type":"text","text":"invalid result: content is missing or not an array"}],"isError":true}`},
		{"tools/call", `{"content":[],"isError":"yes"}`, `: isError is not a boolean"}],"isError":true}`},
		{"tools/call", `{"content":[],"structuredContent":[1]}`, `: structuredContent is not an object"}],"isError":true}`},
		{"resources/read", `{"contents":[{"uri":"a://b","text":"x"}]}`, `"result":{"contents":[{"uri":"a://b","text":"x"}]}`},
		{"resources/read", `{"contents":[{"text":"x"}]}`, `"error":{"code":-32603,"message":"invalid result: contents[0].uri is missing or not a string"}`},
	}
	// The plugin registry leaves it to the engine to refuse a client
	// request on a 2026-07-28 request (and one the client has no
	// capability for).
	tests = append(tests,
		struct{ method, result, want string }{"tools/call", "ask", "cannot carry server-to-client requests"},
		struct{ method, result, want string }{"tools/call", "ask", "did not declare the \\\"roots\\\" capability"})
	for i, tt := range tests {
		params := map[string]any{"name": tt.result}
		if i == len(tests)-2 {
			params = withMeta(params, map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{}}})
		}
		if tt.method == "resources/read" {
			params = map[string]any{"uri": tt.result}
		}
		if got := roundTrip(tt.method, params); !strings.Contains(got, tt.want) {
			t.Errorf("%s %s: answered %s, want %s", tt.method, tt.result, got, tt.want)
		}
	}
}

// toolErrors is an Observer that records RequestInfo.ToolError.
type toolErrors struct {
	mu  sync.Mutex
	got []bool
}

func (o *toolErrors) RequestStart(ctx context.Context, _ *mcp.RequestInfo) context.Context {
	return ctx
}

func (o *toolErrors) RequestEnd(_ context.Context, ri *mcp.RequestInfo, _ []byte, _ error) {
	o.mu.Lock()
	o.got = append(o.got, ri.ToolError)
	o.mu.Unlock()
}

func (o *toolErrors) RequestAnswered(*mcp.RequestInfo, *jsonrpc.Error) {}

// TestObserverToolError: the Observer is told a tools/call result is a
// tool error when its isError member is true, however its key is
// written, and when the engine answered a tool error in place of a
// result that does not conform; not when "isError" is only text.
func TestObserverToolError(t *testing.T) {
	obs := &toolErrors{}
	roundTrip := shapeSession(t, &mcp.Options{Observer: obs})
	for _, c := range []struct {
		result string
		want   bool
	}{
		{`{"content":[],"isError":true}`, true},
		{`{"content":[],"\u0069sError":true}`, true},
		{`{"content":[],"isError":false}`, false},
		{`{"content":[{"type":"text","text":"isError"}]}`, false},
		{`{"content":"nope"}`, true},
	} {
		roundTrip("tools/call", map[string]any{"name": c.result})
		obs.mu.Lock()
		got := obs.got[len(obs.got)-1]
		obs.mu.Unlock()
		if got != c.want {
			t.Errorf("%s: ToolError %v, want %v", c.result, got, c.want)
		}
	}
}

// TestObserverToolErrorOfTaskResult: tasks/result answers a task's tool
// result as the tools/call would have, and the Observer is told it is a
// tool error when it is (task_ask fails without elicitation).
func TestObserverToolErrorOfTaskResult(t *testing.T) {
	obs := &toolErrors{}
	c := startStdio(t, &mcptest.Options{Tasks: true}, &mcp.Options{Observer: obs})
	c.initialize("2025-11-25", nil)
	res, _ := c.rpc("call", "tools/call", map[string]any{"name": "task_ask", "task": map[string]any{}})
	id, _ := field(t, res.Result, "task", "taskId").(string)
	res, _ = c.rpc("result", "tasks/result", map[string]any{"taskId": id})
	if field(t, res.Result, "isError") != true {
		t.Fatalf("tasks/result: %s", res.raw)
	}
	obs.mu.Lock()
	got := obs.got[len(obs.got)-1]
	obs.mu.Unlock()
	if !got {
		t.Error("tasks/result of a tool error: ToolError false")
	}
}
