package wasmcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// InputRequired is returned as the error of a tool, prompt or resource
// handler to ask the client for input before the request can complete:
// user input (elicitation), a model completion (sampling) or the client's
// roots. The host delivers the requests on every protocol version and
// calls the handler again with the answers in [Context.InputResponses]
// (decode them with [Context.ElicitResponse], [Context.SamplingResponse]
// and [Context.RootsResponse]) and State in [Context.RequestState].
//
// At least one of Requests and State must be set. Only ask for what the
// client supports ([Context.HasClientCapability]).
type InputRequired struct {
	// Requests are the requests to the client, by a key of the plugin's
	// choosing; the answers come back under the same keys.
	Requests map[string]InputRequest
	// State is returned unchanged in Context.RequestState on the next
	// call. The host protects it against tampering, but the plugin should
	// not put secrets in it.
	State string
}

// Error returns "input required" and the request keys.
func (e *InputRequired) Error() string {
	keys := make([]string, 0, len(e.Requests))
	for k := range e.Requests {
		keys = append(keys, k)
	}
	return "input required: " + strings.Join(keys, ", ")
}

// MarshalJSON encodes e as an input_required result.
func (e *InputRequired) MarshalJSON() ([]byte, error) {
	return marshal(struct {
		ResultType    string                  `json:"resultType"`
		InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
		RequestState  string                  `json:"requestState,omitempty"`
	}{"input_required", e.Requests, e.State})
}

// InputRequest is one request to the client inside an [InputRequired]
// (Method and its MCP Params):
// build it with [NewElicitRequest], [NewURLElicitRequest],
// [NewSamplingRequest], [NewTextSamplingRequest] or [NewRootsRequest].
type InputRequest struct {
	Method string `json:"method"`
	Params any    `json:"params"`
}

// NewElicitRequest asks the user to fill a form: message explains what
// is needed and schema is a flat object schema of primitive properties
// (strings, numbers, booleans, enums), given like Tool.InputSchema.
func NewElicitRequest(message string, schema any) InputRequest {
	return InputRequest{Method: abi.HostElicit, Params: ElicitParams{Message: message, RequestedSchema: schema}}
}

// NewURLElicitRequest asks the user to visit url (URL-mode elicitation),
// for interactions that must not pass through the client, such as
// entering credentials.
func NewURLElicitRequest(message, url string) InputRequest {
	return InputRequest{Method: abi.HostElicit, Params: ElicitParams{Mode: "url", Message: message, URL: url}}
}

// NewSamplingRequest asks the client's model for a completion.
func NewSamplingRequest(p SamplingParams) InputRequest {
	return InputRequest{Method: abi.HostSample, Params: p}
}

// NewTextSamplingRequest asks the client's model to answer one user
// prompt in at most maxTokens tokens.
func NewTextSamplingRequest(prompt string, maxTokens int) InputRequest {
	return NewSamplingRequest(SamplingParams{
		Messages:  []SamplingMessage{{Role: RoleUser, Content: Text(prompt)}},
		MaxTokens: maxTokens,
	})
}

// NewRootsRequest asks the client for its roots.
func NewRootsRequest() InputRequest {
	return InputRequest{Method: abi.HostRoots, Params: struct{}{}}
}

// ElicitParams are the parameters of an elicitation (MCP
// ElicitRequestParams).
type ElicitParams struct {
	// Mode is "" or "form" for a form, "url" for URL mode.
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message"`
	// RequestedSchema is the form's schema (form mode).
	RequestedSchema any `json:"requestedSchema,omitempty"`
	// URL is the page to visit (URL mode).
	URL string `json:"url,omitempty"`
	// ElicitationID identifies a URL-mode elicitation (2025-11-25).
	ElicitationID string `json:"elicitationId,omitempty"`
}

// Elicitation actions.
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitResult is the user's answer to an elicitation (MCP ElicitResult).
type ElicitResult struct {
	// Action is ActionAccept, ActionDecline or ActionCancel.
	Action string `json:"action"`
	// Content holds the form's values when the user accepted.
	Content map[string]any `json:"content,omitempty"`
}

// Accepted reports whether the user accepted (and, in form mode,
// submitted the form).
func (r *ElicitResult) Accepted() bool { return r.Action == ActionAccept }

// Decode decodes the submitted form values into v (a pointer to a struct
// or map), as encoding/json would.
func (r *ElicitResult) Decode(v any) error {
	b, err := json.Marshal(r.Content)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// SamplingParams are the parameters of a sampling request (MCP
// CreateMessageRequestParams): the conversation so far, an optional
// system prompt, the token limit (required) and optional sampling
// settings.
type SamplingParams struct {
	Messages         []SamplingMessage `json:"messages"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	MaxTokens        int               `json:"maxTokens"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// IncludeContext is "none", "thisServer" or "allServers".
	IncludeContext string         `json:"includeContext,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// SamplingMessage is one message of a sampling request.
type SamplingMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// ModelPreferences are the plugin's hints for model selection (MCP
// ModelPreferences); priorities range from 0 to 1.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or model family.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// SamplingResult is the client's answer to a sampling request (MCP
// CreateMessageResult).
type SamplingResult struct {
	// Role is normally RoleAssistant.
	Role Role
	// Content holds the answer's blocks (one, unless the client used
	// sampling with tools).
	Content []Content
	// Model names the model that answered.
	Model string
	// StopReason says why it stopped: "endTurn", "stopSequence",
	// "maxTokens", ...
	StopReason string
}

// Text returns the text of the answer's text blocks, joined.
func (r *SamplingResult) Text() string {
	var parts []string
	for _, c := range r.Content {
		if c.Type == TypeText {
			parts = append(parts, c.Text)
		}
	}
	return strings.Join(parts, "")
}

// UnmarshalJSON accepts content as one block or an array of blocks.
func (r *SamplingResult) UnmarshalJSON(b []byte) error {
	var w struct {
		Role       Role            `json:"role"`
		Content    json.RawMessage `json:"content"`
		Model      string          `json:"model"`
		StopReason string          `json:"stopReason"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*r = SamplingResult{Role: w.Role, Model: w.Model, StopReason: w.StopReason}
	switch t := strings.TrimSpace(string(w.Content)); {
	case t == "" || t == "null":
		return errors.New("missing content")
	case strings.HasPrefix(t, "["):
		return json.Unmarshal(w.Content, &r.Content)
	default:
		var c Content
		if err := json.Unmarshal(w.Content, &c); err != nil {
			return err
		}
		r.Content = []Content{c}
	}
	return nil
}

// MarshalJSON encodes r with a single content block as an object.
func (r SamplingResult) MarshalJSON() ([]byte, error) {
	var content any = r.Content
	if len(r.Content) == 1 {
		content = r.Content[0]
	}
	return marshal(struct {
		Role       Role   `json:"role"`
		Content    any    `json:"content"`
		Model      string `json:"model"`
		StopReason string `json:"stopReason,omitempty"`
	}{r.Role, content, r.Model, r.StopReason})
}

// Root is a root the client exposes (MCP Root): a file:// URI.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// ErrNoInputResponse is returned by the input response decoders when the
// client sent no answer under the key: ask again with an [InputRequired].
var ErrNoInputResponse = errors.New("no input response")

// InputResponse returns the raw answer the client gave under key, and
// whether there is one.
func (c *Context) InputResponse(key string) (json.RawMessage, bool) {
	raw, ok := c.InputResponses[key]
	if !ok || len(raw) == 0 || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}

// invalidInput is the error for a malformed input response: JSON-RPC
// invalid params, as the protocol asks.
func invalidInput(key, what string, err error) error {
	msg := fmt.Sprintf("inputResponses.%s: not a valid %s", key, what)
	if err != nil {
		msg += ": " + err.Error()
	}
	return &RPCError{Code: CodeInvalidParams, Message: msg}
}

// ElicitResponse decodes the elicitation answer under key. It returns
// ErrNoInputResponse when there is none, and an *RPCError (-32602, which
// the handler should return as is) when it is malformed.
func (c *Context) ElicitResponse(key string) (*ElicitResult, error) {
	r, err := inputResponse[ElicitResult](c, key, "elicitation result")
	if err != nil {
		return nil, err
	}
	switch r.Action {
	case ActionAccept, ActionDecline, ActionCancel:
	default:
		return nil, invalidInput(key, "elicitation result", fmt.Errorf("action %q is not accept, decline or cancel", r.Action))
	}
	return r, nil
}

// SamplingResponse decodes the sampling answer under key; errors as for
// [Context.ElicitResponse].
func (c *Context) SamplingResponse(key string) (*SamplingResult, error) {
	return inputResponse[SamplingResult](c, key, "sampling result")
}

// inputResponse decodes the answer under key, a what, strictly into a T:
// ErrNoInputResponse when there is none, an *RPCError (-32602) when it is
// malformed.
func inputResponse[T any](c *Context, key, what string) (*T, error) {
	raw, ok := c.InputResponse(key)
	if !ok {
		return nil, ErrNoInputResponse
	}
	var r T
	if err := strictObject(raw, &r); err != nil {
		return nil, invalidInput(key, what, err)
	}
	return &r, nil
}

// RootsResponse decodes the roots answer under key; errors as for
// [Context.ElicitResponse].
func (c *Context) RootsResponse(key string) ([]Root, error) {
	r, err := inputResponse[struct {
		Roots *[]Root `json:"roots"`
	}](c, key, "roots result")
	if err != nil {
		return nil, err
	}
	if r.Roots == nil {
		return nil, invalidInput(key, "roots result", errors.New("missing roots"))
	}
	return *r.Roots, nil
}

// strictObject decodes raw into v, requiring a JSON object.
func strictObject(raw json.RawMessage, v any) error {
	if t := strings.TrimSpace(string(raw)); !strings.HasPrefix(t, "{") {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(raw, v)
}
