package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// noArgs is the input schema of a tool without arguments.
const noArgs = `{"type":"object","properties":{}}`

// JSONSchema202012 is the input schema of json_schema_2020_12_tool, which
// must reach tools/list verbatim ($schema, $defs, $anchor, composition,
// conditionals, additionalProperties).
const JSONSchema202012 = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
	`"$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},` +
	`"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},` +
	`"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],` +
	`"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},` +
	`"additionalProperties":false}`

// Elicitation forms (kept as JSON to keep their key order).
const (
	userForm = `{"type":"object","properties":{"username":{"type":"string","description":"Your user name"},"email":{"type":"string","description":"Your email address"}},"required":["username","email"]}`

	// defaultsForm has a default for every primitive type (SEP-1034).
	defaultsForm = `{"type":"object","properties":{` +
		`"name":{"type":"string","default":"John Doe"},` +
		`"age":{"type":"integer","default":30},` +
		`"score":{"type":"number","default":95.5},` +
		`"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","default":true}}}`

	// enumsForm has every enum form of SEP-1330.
	enumsForm = `{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","items":{"anyOf":[{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`
)

// step is the pause between the notifications of the progress and logging
// tools, so that they arrive as separate events.
const step = 50 * time.Millisecond

func addTools(p *wasmcp.Plugin) {
	tool := func(name, description, schema string, h wasmcp.ToolHandler) {
		p.AddRawTool(wasmcp.Tool{Name: name, Description: description, InputSchema: schema}, h)
	}
	// First in tools/list: http-header-validation calls tools[0] with {}.
	tool("test_simple_text", "Returns a simple text response.", noArgs, simpleText)
	tool("test_embedded_resource", "Returns an embedded text resource.", noArgs, embeddedResource)
	tool("test_error_handling", "Returns a tool execution error (isError).", noArgs, errorHandling)
	tool("test_tool_with_progress", "Reports progress 0, 50 and 100 of 100, then answers.", noArgs, withProgress)
	tool("test_tool_with_logging", "Logs three info messages while it runs.", noArgs, withLogging)
	tool("test_logging_tool", "Logs three info messages; a 2026-07-28 client gets them only when its request sets a log level.", noArgs, withLogging)
	tool("test_sampling", "Asks the client's model to answer prompt.",
		`{"type":"object","properties":{"prompt":{"type":"string","description":"The prompt for the model"}},"required":["prompt"]}`, sampling)
	tool("test_elicitation", "Asks the user for a user name and an email address.",
		`{"type":"object","properties":{"message":{"type":"string","description":"What to tell the user"}},"required":["message"]}`, elicitation)
	tool("test_elicitation_sep1034_defaults", "Asks the user to fill a form whose fields have defaults (SEP-1034).", noArgs,
		form("defaults", "Please review and update the form fields with defaults", defaultsForm))
	tool("test_elicitation_sep1330_enums", "Asks the user to fill a form with every enum form (SEP-1330).", noArgs,
		form("enums", "Please select options from the enum fields", enumsForm))
	tool("test_reconnection", "Closes its SSE response stream, then answers on the resumed stream.", noArgs, reconnection)
	tool("test_missing_capability", "Needs the client's sampling capability.", noArgs, missingCapability)
	tool("test_streaming_elicitation", "Asks the user for a name; never sends a request on a 2026-07-28 response stream.", noArgs, streamingElicitation)
	tool("test_trigger_tool_change", "Adds or removes test_transient_tool and notifies tools list_changed.", noArgs, trigger(wasmcp.ListTools))
	tool("test_trigger_prompt_change", "Adds or removes test_transient_prompt and notifies prompts list_changed.", noArgs, trigger(wasmcp.ListPrompts))
	tool("test_x_mcp_header", "Echoes its arguments; region travels in the Mcp-Param-Region header too.",
		`{"type":"object","properties":{"region":{"type":"string","description":"A region name","x-mcp-header":"Region"},"level":{"type":"integer","description":"A level"}}}`, xMCPHeader)
	tool("json_schema_2020_12_tool", "Takes arguments described with JSON Schema 2020-12 features.", JSONSchema202012, jsonSchemaTool)
	tool("test_update_watched_resource", "Changes test://watched-resource and notifies its subscribers.", noArgs, updateWatched)
	tool(transientTool, "Exists only between two calls of test_trigger_tool_change.", noArgs,
		func(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) {
			return wasmcp.TextResult("The transient tool ran."), nil
		})
}

func simpleText(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) {
	return wasmcp.TextResult("This is a simple text response for testing."), nil
}

func embeddedResource(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) {
	return wasmcp.NewResult(wasmcp.EmbeddedResource(
		wasmcp.TextContents("test://embedded-resource", "text/plain", "This is an embedded resource content."))), nil
}

func errorHandling(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) {
	return wasmcp.ErrorResult("This tool intentionally returns an error for testing"), nil
}

// pause sleeps between notifications.
func pause() { time.Sleep(step) }

func withProgress(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	for i, v := range []float64{0, 50, 100} {
		if i > 0 {
			pause()
		}
		if err := c.Progress(v, 100, fmt.Sprintf("%.0f%% done", v)); err != nil {
			return nil, err
		}
	}
	return wasmcp.TextResult("Progress completed"), nil
}

func withLogging(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	for i, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
		if i > 0 {
			pause()
		}
		c.Log(wasmcp.LevelInfo, m)
	}
	return wasmcp.TextResult("Logging completed"), nil
}

// args decodes a tool's arguments into v; a decoding failure is a tool
// error the model can read.
func args(raw json.RawMessage, v any) error {
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %w", err)
	}
	return nil
}

func sampling(c *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	if err := args(raw, &in); err != nil {
		return nil, err
	}
	answer, err := answered(c, (*wasmcp.Context).SamplingResponse, "", "llm", wasmcp.NewTextSamplingRequest(in.Prompt, 100))
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult("LLM response: " + answer.Text()), nil
}

// elicitAnswer reports an elicitation answer as "<prefix>: action=...,
// content={...}".
func elicitAnswer(prefix string, r *wasmcp.ElicitResult) *wasmcp.Result {
	content, _ := json.Marshal(r.Content)
	if r.Content == nil {
		content = []byte("{}")
	}
	return wasmcp.TextResult(fmt.Sprintf("%s: action=%s, content=%s", prefix, r.Action, content))
}

func elicitation(c *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Message string `json:"message"`
	}
	if err := args(raw, &in); err != nil {
		return nil, err
	}
	answer, err := answered(c, (*wasmcp.Context).ElicitResponse, "", "user", wasmcp.NewElicitRequest(in.Message, json.RawMessage(userForm)))
	if err != nil {
		return nil, err
	}
	return elicitAnswer("User response", answer), nil
}

// form returns a tool that asks the user to fill schema and reports the
// answer.
func form(key, message, schema string) wasmcp.ToolHandler {
	return func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		answer, err := answered(c, (*wasmcp.Context).ElicitResponse, "", key, wasmcp.NewElicitRequest(message, json.RawMessage(schema)))
		if err != nil {
			return nil, err
		}
		return elicitAnswer("Elicitation completed", answer), nil
	}
}

// reconnection closes the response stream, then answers: a Streamable
// HTTP client reconnects with Last-Event-ID and gets the result on the
// resumed stream (SSE polling).
func reconnection(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	if err := c.CloseStream(); err != nil {
		return nil, err
	}
	time.Sleep(4 * step) // let the client see the stream end and reconnect
	return wasmcp.TextResult("Reconnection test completed"), nil
}

// missingCapability needs a model: a client that did not declare sampling
// gets -32021 naming it on 2026-07-28 (a tool error on legacy sessions)
// from the host, which checks every input request against the client's
// capabilities.
func missingCapability(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	answer, err := c.SamplingResponse("llm")
	if errors.Is(err, wasmcp.ErrNoInputResponse) {
		return nil, &wasmcp.InputRequired{Requests: map[string]wasmcp.InputRequest{
			"llm": wasmcp.NewTextSamplingRequest("Say hello.", 20),
		}}
	}
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult("Sampling is available: " + answer.Text()), nil
}

// streamingElicitation asks for a name: on a legacy session the host sends
// elicitation/create on the response stream; on 2026-07-28 the request
// travels in the input_required result, never as a server request.
func streamingElicitation(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	answer, err := c.ElicitResponse("name")
	if errors.Is(err, wasmcp.ErrNoInputResponse) {
		return nil, &wasmcp.InputRequired{Requests: map[string]wasmcp.InputRequest{
			"name": wasmcp.NewElicitRequest("What is your name?", json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)),
		}}
	}
	if err != nil {
		return nil, err
	}
	return elicitAnswer("Streaming elicitation completed", answer), nil
}

func xMCPHeader(_ *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Region string `json:"region"`
		Level  *int   `json:"level"`
	}
	if err := args(raw, &in); err != nil {
		return nil, err
	}
	level := "unset"
	if in.Level != nil {
		level = fmt.Sprint(*in.Level)
	}
	return wasmcp.TextResult(fmt.Sprintf("region=%q level=%s", in.Region, level)), nil
}

func jsonSchemaTool(_ *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	return wasmcp.TextResult("Arguments accepted: " + string(raw)), nil
}
