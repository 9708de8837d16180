package wasmcptest

import (
	"encoding/json"
	"fmt"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// Session sends requests to a plugin the way the host does, with a fixed
// request context. The zero value is not usable; use [NewSession].
type Session struct {
	Plugin *wasmcp.Plugin
	Host   wasmcp.Host
	// ProtocolVersion, ClientInfo, ClientCapabilities and ProgressToken
	// go into every envelope's context. NewSession declares the client
	// capabilities elicitation, sampling and roots.
	ProtocolVersion    string
	ClientInfo         *wasmcp.Implementation
	ClientCapabilities map[string]any
	ProgressToken      any
}

// NewSession returns a session for plugin p with host h.
func NewSession(p *wasmcp.Plugin, h wasmcp.Host) *Session {
	return &Session{
		Plugin:             p,
		Host:               h,
		ProtocolVersion:    "2025-11-25",
		ClientInfo:         &wasmcp.Implementation{Name: "wasmcptest", Version: "1.0.0"},
		ClientCapabilities: map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}},
	}
}

// Response is a plugin's answer: the status and output of wasmcp_call.
type Response struct {
	Status uint32
	Output json.RawMessage
}

// Retry carries the answers to an input_required result into the next
// request: the responses by key and the state to echo.
type Retry struct {
	Responses map[string]any
	State     string
}

// Envelope builds a request envelope.
func (s *Session) Envelope(method string, params any, retry *Retry) []byte {
	ctx := map[string]any{"protocolVersion": s.ProtocolVersion}
	if s.ClientInfo != nil {
		ctx["clientInfo"] = s.ClientInfo
	}
	if s.ClientCapabilities != nil {
		ctx["clientCapabilities"] = s.ClientCapabilities
	}
	if s.ProgressToken != nil {
		ctx["progressToken"] = s.ProgressToken
	}
	if retry != nil {
		if retry.Responses != nil {
			ctx["inputResponses"] = retry.Responses
		}
		if retry.State != "" {
			ctx["requestState"] = retry.State
		}
	}
	b, err := json.Marshal(map[string]any{"method": method, "params": params, "context": ctx})
	if err != nil {
		panic(fmt.Sprintf("wasmcptest: envelope: %v", err))
	}
	return b
}

// Do sends one request.
func (s *Session) Do(method string, params any, retry *Retry) *Response {
	status, out := s.Plugin.HandleWith(s.Host, s.Envelope(method, params, retry))
	return &Response{Status: status, Output: out}
}

// Describe returns the plugin's manifest.
func (s *Session) Describe() (*Manifest, error) {
	var m Manifest
	if err := s.Do("wasmcp/describe", map[string]any{}, nil).Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// CallTool calls a tool and decodes a complete result; input_required and
// JSON-RPC errors are returned as errors (*InputRequired, *wasmcp.RPCError).
func (s *Session) CallTool(name string, args any) (*wasmcp.Result, error) {
	return s.CallToolRetry(name, args, nil)
}

// CallToolRetry is CallTool with the answers to an earlier input_required.
func (s *Session) CallToolRetry(name string, args any, retry *Retry) (*wasmcp.Result, error) {
	var r wasmcp.Result
	if err := s.Do("tools/call", map[string]any{"name": name, "arguments": args}, retry).Decode(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ReadResource reads a resource.
func (s *Session) ReadResource(uri string) ([]wasmcp.ResourceContents, error) {
	var r struct {
		Contents []wasmcp.ResourceContents `json:"contents"`
	}
	if err := s.Do("resources/read", map[string]any{"uri": uri}, nil).Decode(&r); err != nil {
		return nil, err
	}
	return r.Contents, nil
}

// GetPrompt gets a prompt.
func (s *Session) GetPrompt(name string, args map[string]string) (*wasmcp.PromptResult, error) {
	var r wasmcp.PromptResult
	if err := s.Do("prompts/get", map[string]any{"name": name, "arguments": args}, nil).Decode(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// CompletePrompt asks for completions of a prompt argument.
func (s *Session) CompletePrompt(prompt, argument, value string) (*wasmcp.Completion, error) {
	return s.complete(map[string]any{"type": "ref/prompt", "name": prompt}, argument, value)
}

// CompleteResource asks for completions of a resource template variable.
func (s *Session) CompleteResource(uriTemplate, argument, value string) (*wasmcp.Completion, error) {
	return s.complete(map[string]any{"type": "ref/resource", "uri": uriTemplate}, argument, value)
}

func (s *Session) complete(ref map[string]any, argument, value string) (*wasmcp.Completion, error) {
	var r struct {
		Completion wasmcp.Completion `json:"completion"`
	}
	params := map[string]any{"ref": ref, "argument": map[string]any{"name": argument, "value": value}}
	if err := s.Do("completion/complete", params, nil).Decode(&r); err != nil {
		return nil, err
	}
	return &r.Completion, nil
}

// InputRequired is a decoded input_required result.
type InputRequired struct {
	ResultType    string                         `json:"resultType"`
	InputRequests map[string]wasmcp.InputRequest `json:"inputRequests"`
	RequestState  string                         `json:"requestState"`
}

// Error returns "input required".
func (e *InputRequired) Error() string { return "input required" }

// Decode decodes a status 0 output into v. A status 1 output is returned
// as *wasmcp.RPCError, an input_required result as *InputRequired, and any
// other status as an error.
func (r *Response) Decode(v any) error {
	switch r.Status {
	case wasmcp.StatusOK:
	case wasmcp.StatusError:
		var e struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(r.Output, &e); err != nil {
			return fmt.Errorf("wasmcptest: status 1 with invalid error JSON %q: %w", r.Output, err)
		}
		re := &wasmcp.RPCError{Code: e.Code, Message: e.Message}
		if len(e.Data) > 0 {
			re.Data = e.Data
		}
		return re
	default:
		return fmt.Errorf("wasmcptest: status %d: %s", r.Status, r.Output)
	}
	var probe struct {
		ResultType string `json:"resultType"`
	}
	if json.Unmarshal(r.Output, &probe) == nil && probe.ResultType == "input_required" {
		var ir InputRequired
		if err := json.Unmarshal(r.Output, &ir); err != nil {
			return err
		}
		return &ir
	}
	if err := json.Unmarshal(r.Output, v); err != nil {
		return fmt.Errorf("wasmcptest: decode %s: %w", r.Output, err)
	}
	return nil
}

// Manifest is a decoded wasmcp/describe result; schemas stay raw.
type Manifest struct {
	ABI               int                       `json:"abi"`
	Name              string                    `json:"name"`
	Version           string                    `json:"version"`
	Description       string                    `json:"description"`
	Tools             []ManifestTool            `json:"tools"`
	Resources         []wasmcp.Resource         `json:"resources"`
	ResourceTemplates []wasmcp.ResourceTemplate `json:"resourceTemplates"`
	Prompts           []wasmcp.Prompt           `json:"prompts"`
	Completions       bool                      `json:"completions"`
	Capabilities      wasmcp.Capabilities       `json:"capabilities"`
	Skills            []wasmcp.Skill            `json:"skills"`
}

// ManifestTool is a tool of a Manifest.
type ManifestTool struct {
	Name         string                  `json:"name"`
	Title        string                  `json:"title"`
	Description  string                  `json:"description"`
	InputSchema  json.RawMessage         `json:"inputSchema"`
	OutputSchema json.RawMessage         `json:"outputSchema"`
	Annotations  *wasmcp.ToolAnnotations `json:"annotations"`
	Meta         map[string]any          `json:"_meta"`
}

// Tool returns the manifest's tool named name, or nil.
func (m *Manifest) Tool(name string) *ManifestTool {
	for i := range m.Tools {
		if m.Tools[i].Name == name {
			return &m.Tools[i]
		}
	}
	return nil
}
