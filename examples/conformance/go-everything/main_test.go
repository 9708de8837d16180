package main

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

// newSession returns a session with a host that grants kv; its client
// answers like the conformance suite's.
func newSession() (*wasmcptest.Session, *wasmcptest.Host) {
	h := wasmcptest.NewHost()
	h.KVEnabled = true
	return wasmcptest.NewSession(plugin, h), h
}

func text(r *wasmcp.Result) string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == wasmcp.TypeText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestSimpleTools(t *testing.T) {
	tests := []struct {
		tool, args, want string
		isError          bool
	}{
		{"test_simple_text", `{}`, "This is a simple text response for testing.", false},
		{"test_error_handling", `{}`, "This tool intentionally returns an error for testing", true},
		{"test_x_mcp_header", `{"region":"eu-west","level":3}`, `region="eu-west" level=3`, false},
		{"test_x_mcp_header", `{}`, `region="" level=unset`, false},
		{"json_schema_2020_12_tool", `{"name":"Ann","email":"a@b.c"}`, `Arguments accepted: {"name":"Ann","email":"a@b.c"}`, false},
		{"test_x_mcp_header", `{"region":7}`, "invalid arguments", true},
	}
	s, _ := newSession()
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			r, err := s.CallTool(tt.tool, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if got := text(r); r.IsError != tt.isError || !strings.HasPrefix(got, tt.want) {
				t.Errorf("%s = %q (isError %v), want %q (isError %v)", tt.tool, got, r.IsError, tt.want, tt.isError)
			}
		})
	}
}

func TestEmbeddedResource(t *testing.T) {
	s, _ := newSession()
	r, err := s.CallTool("test_embedded_resource", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Content) != 1 || r.Content[0].Type != wasmcp.TypeResource {
		t.Fatalf("content %+v", r.Content)
	}
	out, _ := json.Marshal(r.Content[0])
	if want := `{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}`; string(out) != want {
		t.Errorf("content %s, want %s", out, want)
	}
}

func TestProgressAndLogging(t *testing.T) {
	s, h := newSession()
	s.ProgressToken = "progress-test-1"
	if _, err := s.CallTool("test_tool_with_progress", nil); err != nil {
		t.Fatal(err)
	}
	got := h.CallsTo("progress")
	want := []string{`{"progress":0,"total":100,"message":"0% done"}`, `{"progress":50,"total":100,"message":"50% done"}`, `{"progress":100,"total":100,"message":"100% done"}`}
	if len(got) != len(want) {
		t.Fatalf("progress calls %s", got)
	}
	for i := range want {
		if string(got[i]) != want[i] {
			t.Errorf("progress %d = %s, want %s", i, got[i], want[i])
		}
	}
	for _, tool := range []string{"test_tool_with_logging", "test_logging_tool"} {
		before := len(h.Logs())
		if _, err := s.CallTool(tool, nil); err != nil {
			t.Fatal(err)
		}
		logs := h.Logs()[before:]
		if len(logs) != 3 || logs[0].Message != "Tool execution started" || logs[2].Message != "Tool execution completed" || logs[1].Level != int32(wasmcp.LevelInfo) {
			t.Errorf("%s logged %+v", tool, logs)
		}
	}
}

func TestReconnectionClosesStream(t *testing.T) {
	s, h := newSession()
	r, err := s.CallTool("test_reconnection", nil)
	if err != nil || text(r) != "Reconnection test completed" {
		t.Fatalf("result %+v, %v", r, err)
	}
	if n := len(h.CallsTo("stream/close")); n != 1 {
		t.Errorf("%d stream/close calls, want 1", n)
	}
}

// inputRequired calls a tool and returns its input_required result.
func inputRequired(t *testing.T, s *wasmcptest.Session, tool string, args any, retry *wasmcptest.Retry) *wasmcptest.InputRequired {
	t.Helper()
	_, err := s.CallToolRetry(tool, args, retry)
	var ir *wasmcptest.InputRequired
	if !errors.As(err, &ir) {
		t.Fatalf("%s: %v, want input_required", tool, err)
	}
	return ir
}

func params(t *testing.T, r wasmcp.InputRequest) string {
	t.Helper()
	b, err := json.Marshal(r.Params)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	accept = func(content map[string]any) map[string]any {
		return map[string]any{"action": "accept", "content": content}
	}
	sampled = map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "test-model", "stopReason": "endTurn"}
	roots   = map[string]any{"roots": []map[string]any{{"uri": "file:///test/root", "name": "Test Root"}}}
)

func TestClientRequestTools(t *testing.T) {
	tests := []struct {
		tool       string
		args       any
		key        string
		method     string
		paramsHas  string
		answer     any
		wantPrefix string
	}{
		{"test_sampling", map[string]any{"prompt": "Capital?"}, "llm", "sampling/createMessage",
			`{"maxTokens":100,"messages":[{"content":{"text":"Capital?","type":"text"},"role":"user"}]}`, sampled, "LLM response: Paris"},
		{"test_elicitation", map[string]any{"message": "Who?"}, "user", "elicitation/create", `"message":"Who?"`,
			accept(map[string]any{"username": "testuser", "email": "test@example.com"}), `User response: action=accept, content={"email":"test@example.com","username":"testuser"}`},
		{"test_elicitation_sep1034_defaults", nil, "defaults", "elicitation/create", `"age":{"default":30,"type":"integer"}`,
			accept(map[string]any{"name": "John Doe"}), "Elicitation completed: action=accept"},
		{"test_elicitation_sep1330_enums", nil, "enums", "elicitation/create", `"enumNames":["Option One","Option Two","Option Three"]`,
			map[string]any{"action": "decline"}, "Elicitation completed: action=decline, content={}"},
		{"test_missing_capability", nil, "llm", "sampling/createMessage", `"maxTokens":20`, sampled, "Sampling is available: Paris"},
		{"test_streaming_elicitation", nil, "name", "elicitation/create", `"What is your name?"`, accept(map[string]any{"name": "Ann"}), "Streaming elicitation completed"},
		{"test_input_required_result_elicitation", nil, "user_name", "elicitation/create", `"required":["name"]`, accept(map[string]any{"name": "Alice"}), "Hello, Alice!"},
		{"test_input_required_result_sampling", nil, "capital_question", "sampling/createMessage", "What is the capital of France?", sampled, "The model answered: Paris"},
		{"test_input_required_result_list_roots", nil, "client_roots", "roots/list", `{}`, roots, "The client has 1 roots: file:///test/root (Test Root)"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			s, _ := newSession()
			// Params as the test sees them: decoded and encoded again,
			// so keys are sorted.
			ir := inputRequired(t, s, tt.tool, tt.args, nil)
			req, ok := ir.InputRequests[tt.key]
			if !ok || len(ir.InputRequests) != 1 || req.Method != tt.method || !strings.Contains(params(t, req), tt.paramsHas) {
				t.Fatalf("round 1: %+v, want %s %s with %s", ir.InputRequests, tt.key, tt.method, tt.paramsHas)
			}
			r, err := s.CallToolRetry(tt.tool, tt.args, &wasmcptest.Retry{Responses: map[string]any{tt.key: tt.answer}, State: ir.RequestState})
			if err != nil || !strings.HasPrefix(text(r), tt.wantPrefix) {
				t.Fatalf("round 2: %q, %v; want %q", text(r), err, tt.wantPrefix)
			}
		})
	}
}

func TestInputRequiredEdgeCases(t *testing.T) {
	s, _ := newSession()
	const tool = "test_input_required_result_elicitation"
	// A wrong key is asked again; extra keys are ignored.
	inputRequired(t, s, tool, nil, &wasmcptest.Retry{Responses: map[string]any{"wrong_key": accept(map[string]any{"name": "X"})}})
	r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{Responses: map[string]any{
		"user_name": accept(map[string]any{"name": "Alice"}), "unknown_extra_key": "x", "another_unexpected": 1}})
	if err != nil || text(r) != "Hello, Alice!" {
		t.Errorf("extra keys: %q, %v", text(r), err)
	}
	// A malformed answer is a protocol error.
	_, err = s.CallToolRetry(tool, nil, &wasmcptest.Retry{Responses: map[string]any{"user_name": 12345}})
	var rpc *wasmcp.RPCError
	if !errors.As(err, &rpc) || rpc.Code != wasmcp.CodeInvalidParams {
		t.Errorf("malformed answer: %v, want -32602", err)
	}
}

func TestInputRequiredState(t *testing.T) {
	s, _ := newSession()
	for _, tool := range []string{"test_input_required_result_request_state", "test_input_required_result_tampered_state"} {
		ir := inputRequired(t, s, tool, nil, nil)
		if ir.RequestState == "" || ir.InputRequests["confirm"].Method != "elicitation/create" {
			t.Fatalf("%s round 1: %+v", tool, ir)
		}
		answer := map[string]any{"confirm": accept(map[string]any{"ok": true})}
		// The answer without the state is asked again.
		inputRequired(t, s, tool, nil, &wasmcptest.Retry{Responses: answer})
		r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{Responses: answer, State: ir.RequestState})
		if err != nil || !strings.HasPrefix(text(r), "state-ok") {
			t.Errorf("%s round 2: %q, %v", tool, text(r), err)
		}
	}

	ir := inputRequired(t, s, "test_input_required_result_multiple_inputs", nil, nil)
	if len(ir.InputRequests) != 3 || ir.InputRequests["user_name"].Method != "elicitation/create" ||
		ir.InputRequests["greeting"].Method != "sampling/createMessage" || ir.InputRequests["client_roots"].Method != "roots/list" || ir.RequestState == "" {
		t.Fatalf("multiple inputs: %+v", ir)
	}
	r, err := s.CallToolRetry("test_input_required_result_multiple_inputs", nil, &wasmcptest.Retry{State: ir.RequestState, Responses: map[string]any{
		"user_name": accept(map[string]any{"name": "Ann"}), "greeting": sampled, "client_roots": roots}})
	if err != nil || text(r) != `name=Ann greeting="Paris" roots=file:///test/root (Test Root)` {
		t.Errorf("multiple inputs round 2: %q, %v", text(r), err)
	}
}

func TestMultiRound(t *testing.T) {
	s, _ := newSession()
	const tool = "test_input_required_result_multi_round"
	r1 := inputRequired(t, s, tool, nil, nil)
	if _, ok := r1.InputRequests["step1"]; !ok || r1.RequestState == "" {
		t.Fatalf("round 1: %+v", r1)
	}
	r2 := inputRequired(t, s, tool, nil, &wasmcptest.Retry{State: r1.RequestState, Responses: map[string]any{"step1": accept(map[string]any{"name": "Ann"})}})
	if _, ok := r2.InputRequests["step2"]; !ok || r2.RequestState == "" || r2.RequestState == r1.RequestState {
		t.Fatalf("round 2: %+v (round 1 state %q)", r2, r1.RequestState)
	}
	r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{State: r2.RequestState, Responses: map[string]any{"step2": accept(map[string]any{"color": "blue"})}})
	if err != nil || text(r) != "Ann likes blue." {
		t.Errorf("round 3: %q, %v", text(r), err)
	}
}

func TestCapabilities(t *testing.T) {
	tests := []struct {
		caps map[string]any
		want string
	}{
		{map[string]any{"sampling": map[string]any{}}, "capital_question"},
		{map[string]any{"elicitation": map[string]any{}, "roots": map[string]any{}}, "client_roots,user_name"},
		{map[string]any{}, "user_name"}, // the host refuses it with -32021
	}
	for _, tt := range tests {
		s, _ := newSession()
		s.ClientCapabilities = tt.caps
		ir := inputRequired(t, s, "test_input_required_result_capabilities", nil, nil)
		var keys []string
		for k := range ir.InputRequests {
			keys = append(keys, k)
		}
		if got := strings.Join(sorted(keys), ","); got != tt.want {
			t.Errorf("caps %v: asked %s, want %s", tt.caps, got, tt.want)
		}
	}
}

func sorted(s []string) []string {
	sort.Strings(s)
	return s
}

func names(m *wasmcptest.Manifest) (tools, prompts []string) {
	for _, t := range m.Tools {
		tools = append(tools, t.Name)
	}
	for _, p := range m.Prompts {
		prompts = append(prompts, p.Name)
	}
	return tools, prompts
}

func TestListChangeTriggers(t *testing.T) {
	s, h := newSession()
	m, err := s.Describe()
	if err != nil {
		t.Fatal(err)
	}
	tools, prompts := names(m)
	if tools[0] != "test_simple_text" || slices.Contains(tools, transientTool) || slices.Contains(prompts, transientPrompt) {
		t.Fatalf("initial lists: %v %v", tools, prompts)
	}
	for _, tc := range []string{"test_trigger_tool_change", "test_trigger_prompt_change"} {
		if r, err := s.CallTool(tc, nil); err != nil || r.IsError {
			t.Fatalf("%s: %+v, %v", tc, r, err)
		}
	}
	if got := h.CallsTo("notify/list_changed"); len(got) != 2 || string(got[0]) != `{"kind":"tools"}` || string(got[1]) != `{"kind":"prompts"}` {
		t.Errorf("notifications %s", got)
	}
	m, _ = s.Describe()
	tools, prompts = names(m)
	if !slices.Contains(tools, transientTool) || !slices.Contains(prompts, transientPrompt) {
		t.Errorf("after one trigger each: %v %v", tools, prompts)
	}
	s.CallTool("test_trigger_tool_change", nil)
	m, _ = s.Describe()
	tools, prompts = names(m)
	if slices.Contains(tools, transientTool) || !slices.Contains(prompts, transientPrompt) {
		t.Errorf("after the second tool trigger: %v %v", tools, prompts)
	}

	// Without kv the trigger says why it cannot change the list.
	s2 := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	if r, err := s2.CallTool("test_trigger_tool_change", nil); err != nil || !r.IsError || !strings.Contains(text(r), "kv grant") {
		t.Errorf("without kv: %+v, %v", r, err)
	}
}

func TestSchemasVerbatim(t *testing.T) {
	s, _ := newSession()
	m, err := s.Describe()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(m.Tool("json_schema_2020_12_tool").InputSchema); got != JSONSchema202012 {
		t.Errorf("json_schema_2020_12_tool inputSchema\n got %s\nwant %s", got, JSONSchema202012)
	}
	if got := string(m.Tool("test_x_mcp_header").InputSchema); !strings.Contains(got, `"x-mcp-header":"Region"`) {
		t.Errorf("test_x_mcp_header inputSchema %s", got)
	}
	for _, tool := range m.Tools {
		if tool.Description == "" || len(tool.Name) > 64 {
			t.Errorf("tool %q: no description or name too long", tool.Name)
		}
	}
}

func TestResources(t *testing.T) {
	s, h := newSession()
	tests := []struct{ uri, mime, text string }{
		{"test://static-text", "text/plain", "This is the content of the static text resource."},
		{"test://template/123/data", "application/json", `{"id":"123","templateTest":true,"data":"Data for ID: 123"}`},
		{watchedURI, "text/plain", "Watched resource content, revision 0."},
	}
	for _, tt := range tests {
		c, err := s.ReadResource(tt.uri)
		if err != nil || len(c) != 1 || c[0].URI != tt.uri || c[0].MIMEType != tt.mime || c[0].Text != tt.text {
			t.Errorf("read %s = %+v, %v", tt.uri, c, err)
		}
	}
	if r, err := s.CallTool("test_update_watched_resource", nil); err != nil || r.IsError {
		t.Fatalf("update: %+v, %v", r, err)
	}
	if got := h.CallsTo("notify/resource_updated"); len(got) != 1 || string(got[0]) != `{"uri":"test://watched-resource"}` {
		t.Errorf("notifications %s", got)
	}
	if c, err := s.ReadResource(watchedURI); err != nil || c[0].Text != "Watched resource content, revision 1." {
		t.Errorf("after update: %+v, %v", c, err)
	}
	_, err := s.ReadResource("test://nonexistent")
	var rpc *wasmcp.RPCError
	if !errors.As(err, &rpc) || rpc.Code != wasmcp.CodeResourceNotFound {
		t.Errorf("unknown resource: %v, want -32002", err)
	}
}

func TestPrompts(t *testing.T) {
	s, _ := newSession()
	tests := []struct {
		name string
		args map[string]string
		want string
	}{
		{"test_simple_prompt", nil, `[{"role":"user","content":{"type":"text","text":"This is a simple prompt for testing."}}]`},
		{"test_prompt_with_arguments", map[string]string{"arg1": "testValue1", "arg2": "testValue2"},
			`[{"role":"user","content":{"type":"text","text":"Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}]`},
		{"test_prompt_with_embedded_resource", map[string]string{"resourceUri": "test://example-resource"},
			`[{"role":"user","content":{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}},{"role":"user","content":{"type":"text","text":"Please process the embedded resource above."}}]`},
	}
	for _, tt := range tests {
		r, err := s.GetPrompt(tt.name, tt.args)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got, _ := json.Marshal(r.Messages); string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
	if _, err := s.GetPrompt("test_prompt_with_arguments", map[string]string{"arg1": "x"}); err == nil {
		t.Error("missing arg2 accepted")
	}

	// The input_required prompt.
	resp := s.Do("prompts/get", map[string]any{"name": "test_input_required_result_prompt"}, nil)
	var ir *wasmcptest.InputRequired
	if err := resp.Decode(&struct{}{}); !errors.As(err, &ir) || ir.InputRequests["user_context"].Method != "elicitation/create" {
		t.Fatalf("round 1: %v", err)
	}
	resp = s.Do("prompts/get", map[string]any{"name": "test_input_required_result_prompt"},
		&wasmcptest.Retry{Responses: map[string]any{"user_context": accept(map[string]any{"context": "testing"})}})
	var pr wasmcp.PromptResult
	if err := resp.Decode(&pr); err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.Text != `Use this context: "testing" (accept).` {
		t.Errorf("round 2: %+v, %v", pr, err)
	}
}

func TestCompletion(t *testing.T) {
	s, _ := newSession()
	c, err := s.CompletePrompt("test_prompt_with_arguments", "arg1", "test")
	if err != nil || strings.Join(c.Values, ",") != "testValue1,testValue2" {
		t.Errorf("arg1: %+v, %v", c, err)
	}
	c, err = s.CompleteResource("test://template/{id}/data", "id", "12")
	if err != nil || strings.Join(c.Values, ",") != "123" {
		t.Errorf("template id: %+v, %v", c, err)
	}
}
