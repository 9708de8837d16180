package mcptest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// Everything is the fixture of the official MCP conformance suite (the
// "everything server": test_* tools, test:// resources, test_* prompts),
// served by the engine so that the suite can be run against it. Safe for
// concurrent use.
type Everything struct {
	mu     sync.Mutex
	server *mcp.Server
	extra  bool // a transient tool/prompt toggled by the trigger tools
}

// NewEverything returns the conformance fixture.
func NewEverything() *Everything { return &Everything{} }

// SetServer gives the fixture the server to notify of list changes.
func (e *Everything) SetServer(s *mcp.Server) {
	e.mu.Lock()
	e.server = s
	e.mu.Unlock()
}

// Features implements mcp.Provider.
func (e *Everything) Features() mcp.Features {
	return mcp.Features{Tools: true, Resources: true, Prompts: true, Completions: true, Subscribe: true, ListChanged: true}
}

// WAV is a tiny audio/wav file in base64.
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="

const noArgs = `{"type":"object","properties":{}}`

var everythingTools = []string{
	`{"name":"test_simple_text","description":"Returns simple text.","inputSchema":` + noArgs + `}`,
	`{"name":"test_image_content","description":"Returns an image.","inputSchema":` + noArgs + `}`,
	`{"name":"test_audio_content","description":"Returns audio.","inputSchema":` + noArgs + `}`,
	`{"name":"test_embedded_resource","description":"Returns an embedded resource.","inputSchema":` + noArgs + `}`,
	`{"name":"test_multiple_content_types","description":"Returns mixed content.","inputSchema":` + noArgs + `}`,
	`{"name":"test_error_handling","description":"Returns a tool error.","inputSchema":` + noArgs + `}`,
	`{"name":"test_tool_with_progress","description":"Reports progress.","inputSchema":` + noArgs + `}`,
	`{"name":"test_tool_with_logging","description":"Logs three messages.","inputSchema":` + noArgs + `}`,
	`{"name":"test_logging_tool","description":"Logs when asked to.","inputSchema":` + noArgs + `}`,
	`{"name":"test_sampling","description":"Asks the client's LLM.","inputSchema":{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}}`,
	`{"name":"test_elicitation","description":"Asks the user.","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`,
	`{"name":"test_elicitation_sep1034_defaults","description":"Elicitation with defaults.","inputSchema":` + noArgs + `}`,
	`{"name":"test_elicitation_sep1330_enums","description":"Elicitation with enums.","inputSchema":` + noArgs + `}`,
	`{"name":"test_reconnection","description":"Closes its SSE stream before answering.","inputSchema":` + noArgs + `}`,
	`{"name":"test_missing_capability","description":"Needs sampling.","inputSchema":` + noArgs + `}`,
	`{"name":"test_streaming_elicitation","description":"Answers without server requests.","inputSchema":` + noArgs + `}`,
	`{"name":"test_trigger_tool_change","description":"Changes the tool list.","inputSchema":` + noArgs + `}`,
	`{"name":"test_trigger_prompt_change","description":"Changes the prompt list.","inputSchema":` + noArgs + `}`,
	`{"name":"test_x_mcp_header","description":"Has an x-mcp-header parameter.","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer"}}}}`,
	`{"name":"json_schema_2020_12_tool","description":"JSON Schema 2020-12 features.","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}}`,
	`{"name":"test_input_required_result_elicitation","description":"MRTR elicitation.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_sampling","description":"MRTR sampling.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_list_roots","description":"MRTR roots.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_request_state","description":"MRTR with state.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_multiple_inputs","description":"MRTR with three inputs.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_multi_round","description":"MRTR in two rounds.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_tampered_state","description":"MRTR with protected state.","inputSchema":` + noArgs + `}`,
	`{"name":"test_input_required_result_capabilities","description":"MRTR within the declared capabilities.","inputSchema":` + noArgs + `}`,
}

// Tools implements mcp.Provider.
func (e *Everything) Tools(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	out := raws(everythingTools)
	e.mu.Lock()
	if e.extra {
		out = append(out, json.RawMessage(`{"name":"test_transient_tool","description":"Appears after a trigger.","inputSchema":`+noArgs+`}`))
	}
	e.mu.Unlock()
	return out, nil
}

func content(blocks ...string) json.RawMessage {
	return json.RawMessage(`{"content":[` + strings.Join(blocks, ",") + `]}`)
}

func textBlock(s string) string {
	return `{"type":"text","text":` + string(jsonscan.AppendString(nil, s)) + `}`
}

const imageBlock = `{"type":"image","data":"` + PNG + `","mimeType":"image/png"}`

type everythingParams struct {
	Name           string                     `json:"name"`
	Arguments      map[string]json.RawMessage `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

func (e *Everything) notify(kind string) {
	e.mu.Lock()
	e.extra = !e.extra
	s := e.server
	e.mu.Unlock()
	if s != nil {
		s.NotifyListChanged(kind)
	}
}

// CallTool implements mcp.Provider.
func (e *Everything) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var p everythingParams
	if err := json.Unmarshal(r.Params, &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params", nil)
	}
	arg := func(k string) string { s, _ := jsonscan.String(p.Arguments[k]); return s }
	switch p.Name {
	case "test_simple_text":
		return content(textBlock("This is a simple text response for testing.")), nil
	case "test_image_content":
		return content(imageBlock), nil
	case "test_audio_content":
		return content(`{"type":"audio","data":"` + WAV + `","mimeType":"audio/wav"}`), nil
	case "test_embedded_resource":
		return content(`{"type":"resource","resource":{"uri":"test://embedded-resource","mimeType":"text/plain","text":"This is an embedded resource content."}}`), nil
	case "test_multiple_content_types":
		return content(textBlock("Multiple content types test:"), imageBlock,
			`{"type":"resource","resource":{"uri":"test://mixed-content-resource","mimeType":"application/json","text":"{\"test\":\"data\",\"value\":123}"}}`), nil
	case "test_error_handling":
		return json.RawMessage(`{"content":[` + textBlock("This tool intentionally returns an error for testing") + `],"isError":true}`), nil
	case "test_tool_with_progress":
		total := 100.0
		for _, v := range []float64{0, 50, 100} {
			r.Progress(v, &total, "")
			sleep(ctx, 20*time.Millisecond)
		}
		return content(textBlock("Progress completed")), nil
	case "test_tool_with_logging", "test_logging_tool":
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			r.Log("info", "test", json.RawMessage(jsonscan.AppendString(nil, m)))
			sleep(ctx, 20*time.Millisecond)
		}
		return content(textBlock("Logging completed")), nil
	case "test_sampling":
		params := `{"messages":[{"role":"user","content":{"type":"text","text":` + string(jsonscan.AppendString(nil, arg("prompt"))) + `}}],"maxTokens":100}`
		res, err := r.ClientCall(ctx, "sampling/createMessage", json.RawMessage(params))
		if err != nil {
			return nil, err
		}
		var cm struct {
			Content struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(res, &cm)
		return content(textBlock("LLM response: " + cm.Content.Text)), nil
	case "test_elicitation":
		return e.elicit(ctx, r, `{"message":`+string(jsonscan.AppendString(nil, arg("message")))+`,"requestedSchema":{"type":"object","properties":{"username":{"type":"string"},"email":{"type":"string"}},"required":["username","email"]}}`, "User response")
	case "test_elicitation_sep1034_defaults":
		return e.elicit(ctx, r, `{"message":"Defaults test","requestedSchema":{"type":"object","properties":{"name":{"type":"string","default":"John Doe"},"age":{"type":"integer","default":30},"score":{"type":"number","default":95.5},"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},"verified":{"type":"boolean","default":true}}}}`, "Elicitation completed")
	case "test_elicitation_sep1330_enums":
		return e.elicit(ctx, r, `{"message":"Enums test","requestedSchema":{"type":"object","properties":{"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}}`, "Elicitation completed")
	case "test_reconnection":
		r.CloseStream()
		sleep(ctx, 200*time.Millisecond)
		return content(textBlock("Reconnection test completed")), nil
	case "test_missing_capability":
		if !r.HasClientCapability("sampling") {
			return nil, jsonrpc.NewError(jsonrpc.CodeMissingClientCapability, "this tool requires the sampling capability",
				map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
		}
		return content(textBlock("sampling available")), nil
	case "test_streaming_elicitation":
		return content(textBlock("Streaming elicitation is not used on this protocol version")), nil
	case "test_trigger_tool_change":
		e.notify("tools")
		return content(textBlock("Tool list changed")), nil
	case "test_trigger_prompt_change":
		e.notify("prompts")
		return content(textBlock("Prompt list changed")), nil
	case "test_x_mcp_header":
		return content(textBlock("region=" + arg("region"))), nil
	case "json_schema_2020_12_tool", "test_transient_tool":
		return content(textBlock("ok")), nil
	}
	if strings.HasPrefix(p.Name, "test_input_required_result_") {
		return mrtr(r, &p)
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: "+p.Name, nil)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// elicit asks the client (legacy sessions only) and reports its answer.
func (e *Everything) elicit(ctx context.Context, r *mcp.Request, params, prefix string) (json.RawMessage, error) {
	res, err := r.ClientCall(ctx, "elicitation/create", json.RawMessage(params))
	if err != nil {
		return nil, err
	}
	var er struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	_ = json.Unmarshal(res, &er)
	return content(textBlock(prefix + ": action=" + er.Action + ", content=" + string(er.Content))), nil
}

var stateKey = []byte("mcptest-everything-state-key")

func sign(payload string) string {
	m := hmac.New(sha256.New, stateKey)
	m.Write([]byte(payload))
	return payload + "." + hex.EncodeToString(m.Sum(nil))
}

func verify(state string) (string, bool) {
	i := strings.LastIndexByte(state, '.')
	if i < 0 {
		return "", false
	}
	payload := state[:i]
	return payload, hmac.Equal([]byte(sign(payload)), []byte(state))
}

const (
	elicitName   = `{"method":"elicitation/create","params":{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`
	sampleFrance = `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}`
	listRoots    = `{"method":"roots/list","params":{}}`
)

func inputRequired(requests map[string]string, state string) json.RawMessage {
	var b strings.Builder
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	first := true
	for _, k := range []string{"user_name", "capital_question", "client_roots", "confirm", "greeting", "step1", "step2", "user_context"} {
		if v, ok := requests[k]; ok {
			if !first {
				b.WriteByte(',')
			}
			first = false
			b.WriteString(`"` + k + `":` + v)
		}
	}
	b.WriteString("}")
	if state != "" {
		b.WriteString(`,"requestState":` + string(jsonscan.AppendString(nil, state)))
	}
	b.WriteString("}")
	return json.RawMessage(b.String())
}

// mrtr serves the multi-round-trip tools (2026-07-28).
func mrtr(r *mcp.Request, p *everythingParams) (json.RawMessage, error) {
	has := func(k string) bool {
		v, ok := p.InputResponses[k]
		return ok && jsonscan.Kind(v) == 'o'
	}
	state := ""
	if p.RequestState != nil {
		payload, ok := verify(*p.RequestState)
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid requestState", nil)
		}
		state = payload
	}
	switch strings.TrimPrefix(p.Name, "test_input_required_result_") {
	case "elicitation":
		if !has("user_name") {
			return inputRequired(map[string]string{"user_name": elicitName}, ""), nil
		}
		var er struct {
			Content struct {
				Name string `json:"name"`
			} `json:"content"`
		}
		_ = json.Unmarshal(p.InputResponses["user_name"], &er)
		return content(textBlock("Hello, " + er.Content.Name + "!")), nil
	case "sampling":
		if !has("capital_question") {
			return inputRequired(map[string]string{"capital_question": sampleFrance}, ""), nil
		}
		return content(textBlock("The model answered.")), nil
	case "list_roots":
		if !has("client_roots") {
			return inputRequired(map[string]string{"client_roots": listRoots}, ""), nil
		}
		return content(textBlock("Roots: " + string(p.InputResponses["client_roots"]))), nil
	case "request_state", "tampered_state":
		if !has("confirm") || state != "confirm" {
			return inputRequired(map[string]string{"confirm": `{"method":"elicitation/create","params":{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}}`}, sign("confirm")), nil
		}
		return content(textBlock("state-ok")), nil
	case "multiple_inputs":
		if !has("user_name") || !has("greeting") || !has("client_roots") || state != "multi" {
			return inputRequired(map[string]string{"user_name": elicitName,
				"greeting":     `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}}`,
				"client_roots": listRoots}, sign("multi")), nil
		}
		return content(textBlock("all inputs received")), nil
	case "multi_round":
		switch {
		case state == "round2" && has("step2"):
			return content(textBlock("multi-round complete")), nil
		case state == "round1" && has("step1"):
			return inputRequired(map[string]string{"step2": `{"method":"elicitation/create","params":{"message":"Step 2: What is your favorite color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}}`}, sign("round2")), nil
		}
		return inputRequired(map[string]string{"step1": `{"method":"elicitation/create","params":{"message":"Step 1: What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}}`}, sign("round1")), nil
	case "capabilities":
		if len(p.InputResponses) > 0 {
			return content(textBlock("inputs received")), nil
		}
		// One request for each capability the client declared.
		reqs := map[string]string{}
		for _, q := range []struct{ capability, key, request string }{
			{"elicitation", "user_name", elicitName},
			{"sampling", "capital_question", sampleFrance},
			{"roots", "client_roots", listRoots},
		} {
			if r.HasClientCapability(q.capability) {
				reqs[q.key] = q.request
			}
		}
		if len(reqs) == 0 {
			return nil, jsonrpc.NewError(jsonrpc.CodeMissingClientCapability, "needs elicitation, sampling or roots",
				map[string]any{"requiredCapabilities": map[string]any{"elicitation": map[string]any{}}})
		}
		return inputRequired(reqs, ""), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: "+p.Name, nil)
}

var everythingResources = []string{
	`{"uri":"test://static-text","name":"static-text","description":"A static text resource.","mimeType":"text/plain"}`,
	`{"uri":"test://static-binary","name":"static-binary","description":"A static binary resource.","mimeType":"image/png"}`,
	`{"uri":"test://watched-resource","name":"watched-resource","description":"A resource to subscribe to.","mimeType":"text/plain"}`,
}

// Resources implements mcp.Provider.
func (e *Everything) Resources(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	return raws(everythingResources), nil
}

// ResourceTemplates implements mcp.Provider.
func (e *Everything) ResourceTemplates(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	return []json.RawMessage{json.RawMessage(`{"uriTemplate":"test://template/{id}/data","name":"template","description":"A templated resource.","mimeType":"application/json"}`)}, nil
}

// ReadResource implements mcp.Provider.
func (e *Everything) ReadResource(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	uri, _ := jsonscan.String(jsonMember(r.Params, "uri"))
	item := func(mime, field, value string) json.RawMessage {
		return json.RawMessage(`{"contents":[{"uri":` + string(jsonscan.AppendString(nil, uri)) + `,"mimeType":"` + mime + `","` + field + `":` + string(jsonscan.AppendString(nil, value)) + `}]}`)
	}
	switch {
	case uri == "test://static-text":
		return item("text/plain", "text", "This is the content of the static text resource."), nil
	case uri == "test://static-binary":
		return item("image/png", "blob", PNG), nil
	case uri == "test://watched-resource":
		return item("text/plain", "text", "Watched resource content."), nil
	case strings.HasPrefix(uri, "test://template/") && strings.HasSuffix(uri, "/data"):
		id := strings.TrimSuffix(strings.TrimPrefix(uri, "test://template/"), "/data")
		return item("application/json", "text", `{"id":"`+id+`","templateTest":true,"data":"Data for ID: `+id+`"}`), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "resource not found: "+uri, map[string]string{"uri": uri})
}

func jsonMember(obj []byte, name string) []byte {
	v, _ := jsonscan.Member(obj, name)
	return v
}

var everythingPrompts = []string{
	`{"name":"test_simple_prompt","description":"A simple prompt."}`,
	`{"name":"test_prompt_with_arguments","description":"A prompt with arguments.","arguments":[{"name":"arg1","description":"First","required":true},{"name":"arg2","description":"Second","required":true}]}`,
	`{"name":"test_prompt_with_embedded_resource","description":"A prompt with a resource.","arguments":[{"name":"resourceUri","description":"The resource","required":true}]}`,
	`{"name":"test_prompt_with_image","description":"A prompt with an image."}`,
	`{"name":"test_input_required_result_prompt","description":"A prompt that asks for input."}`,
}

// Prompts implements mcp.Provider.
func (e *Everything) Prompts(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	out := raws(everythingPrompts)
	e.mu.Lock()
	if e.extra {
		out = append(out, json.RawMessage(`{"name":"test_transient_prompt","description":"Appears after a trigger."}`))
	}
	e.mu.Unlock()
	return out, nil
}

// GetPrompt implements mcp.Provider.
func (e *Everything) GetPrompt(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var p struct {
		Name           string                     `json:"name"`
		Arguments      map[string]string          `json:"arguments"`
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if err := json.Unmarshal(r.Params, &p); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid params", nil)
	}
	msgs := func(blocks ...string) json.RawMessage {
		var parts []string
		for _, b := range blocks {
			parts = append(parts, `{"role":"user","content":`+b+`}`)
		}
		return json.RawMessage(`{"messages":[` + strings.Join(parts, ",") + `]}`)
	}
	switch p.Name {
	case "test_simple_prompt", "test_transient_prompt":
		return msgs(textBlock("This is a simple prompt for testing.")), nil
	case "test_prompt_with_arguments":
		return msgs(textBlock("Prompt with arguments: arg1='" + p.Arguments["arg1"] + "', arg2='" + p.Arguments["arg2"] + "'")), nil
	case "test_prompt_with_embedded_resource":
		return msgs(`{"type":"resource","resource":{"uri":`+string(jsonscan.AppendString(nil, p.Arguments["resourceUri"]))+`,"mimeType":"text/plain","text":"Embedded resource content for testing."}}`,
			textBlock("Please process the embedded resource above.")), nil
	case "test_prompt_with_image":
		return msgs(imageBlock, textBlock("Please analyze the image above.")), nil
	case "test_input_required_result_prompt":
		if v, ok := p.InputResponses["user_context"]; !ok || jsonscan.Kind(v) != 'o' {
			return inputRequired(map[string]string{"user_context": `{"method":"elicitation/create","params":{"message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}}`}, ""), nil
		}
		return msgs(textBlock("Prompt with context: " + string(p.InputResponses["user_context"]))), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: "+p.Name, nil)
}

// Complete implements mcp.Provider.
func (e *Everything) Complete(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	return json.RawMessage(`{"completion":{"values":["testValue1","testValue2"],"total":2,"hasMore":false}}`), nil
}

var _ mcp.Provider = (*Everything)(nil)
