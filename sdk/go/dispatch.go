package wasmcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Status values of a call (ABI §4).
const (
	StatusOK    uint32 = abi.StatusOK
	StatusError uint32 = abi.StatusError
)

// maxCompletionValues is the protocol's limit on completion values.
const maxCompletionValues = 100

var served *Plugin

// Serve makes p the plugin this module serves: the wasmcp_call export
// dispatches every request to it. Call it in init.
func Serve(p *Plugin) { served = p }

// Handle answers one request envelope with the plugin passed to [Serve],
// using the real host (under GOOS=wasip1; elsewhere a host that supports
// nothing). The wasmcp_call export is Handle plus the memory plumbing.
func Handle(envelope []byte) (status uint32, out []byte) {
	if served == nil {
		return rpcError(&RPCError{Code: CodeInternalError, Message: "plugin has no handlers: call wasmcp.Serve in init"})
	}
	return served.Handle(envelope)
}

// Handle answers one request envelope using the real host (see the
// package-level [Handle]).
func (p *Plugin) Handle(envelope []byte) (status uint32, out []byte) {
	return p.HandleWith(defaultHost(), envelope)
}

// requestEnvelope is the request envelope (ABI §3), with the params of
// every method in one struct so that the envelope is decoded in one pass.
type requestEnvelope struct {
	Method  string         `json:"method"`
	Params  *requestParams `json:"params"`
	Context struct {
		ProtocolVersion    string                     `json:"protocolVersion"`
		ClientInfo         *Implementation            `json:"clientInfo"`
		ClientCapabilities json.RawMessage            `json:"clientCapabilities"`
		ProgressToken      json.RawMessage            `json:"progressToken"`
		InputResponses     map[string]json.RawMessage `json:"inputResponses"`
		RequestState       *string                    `json:"requestState"`
	} `json:"context"`
}

// requestParams are the params of tools/call (name, arguments),
// resources/read (uri), prompts/get (name, arguments) and
// completion/complete (ref, argument, context), plus the common ones.
type requestParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	URI       string          `json:"uri"`
	Ref       struct {
		Type string `json:"type"`
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"ref"`
	Argument struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"argument"`
	Context struct {
		Arguments map[string]string `json:"arguments"`
	} `json:"context"`
	Meta           json.RawMessage            `json:"_meta"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   *string                    `json:"requestState"`
}

// HandleWith answers one request envelope using host h for the handlers'
// host calls. It never panics; a handler's panic is answered as an error.
// Tests use it with a fake Host to run handlers natively. The handler's
// arguments and Context may alias envelope: it must not change while the
// handler runs.
func (p *Plugin) HandleWith(h Host, envelope []byte) (status uint32, out []byte) {
	if h == nil {
		h = unsupportedHost{}
	}
	var env requestEnvelope
	if !parseEnvelope(envelope, &env) {
		return p.handleDecoded(h, envelope)
	}
	return p.dispatch(h, &env, true)
}

// handleDecoded answers an envelope that parseEnvelope left to
// encoding/json.
func (p *Plugin) handleDecoded(h Host, envelope []byte) (status uint32, out []byte) {
	var env requestEnvelope
	if err := json.Unmarshal(envelope, &env); err != nil {
		// Tell a broken envelope from params of the wrong shape.
		var loose struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(envelope, &loose) == nil {
			return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid %s params: %v", loose.Method, err)})
		}
		return rpcError(&RPCError{Code: CodeInvalidRequest, Message: "invalid request envelope: " + err.Error()})
	}
	return p.dispatch(h, &env, false)
}

// dispatch answers the decoded envelope env; scanned says parseEnvelope
// read it (its raw members are valid JSON).
func (p *Plugin) dispatch(h Host, env *requestEnvelope, scanned bool) (status uint32, out []byte) {
	params := env.Params
	if params == nil {
		params = &requestParams{}
	}
	c := &Context{
		Method:             env.Method,
		ProtocolVersion:    env.Context.ProtocolVersion,
		ClientInfo:         env.Context.ClientInfo,
		ClientCapabilities: env.Context.ClientCapabilities,
		ProgressToken:      env.Context.ProgressToken,
		InputResponses:     env.Context.InputResponses,
		Meta:               params.Meta,
		host:               h,
		validArgs:          scanned,
	}
	if c.InputResponses == nil {
		c.InputResponses = params.InputResponses // a host that passes them in params
	}
	switch {
	case env.Context.RequestState != nil:
		c.RequestState = *env.Context.RequestState
	case params.RequestState != nil:
		c.RequestState = *params.RequestState
	}
	switch env.Method {
	case abi.MethodDescribe:
		return p.describe(c)
	case abi.MethodToolsCall:
		return p.callTool(c, params)
	case abi.MethodResourceRead:
		return p.readResource(c, params)
	case abi.MethodPromptsGet:
		return p.getPrompt(c, params)
	case abi.MethodComplete:
		return p.complete(c, params)
	}
	return rpcError(&RPCError{Code: CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", env.Method)})
}

// manifest is the result of wasmcp/describe (ABI §3).
type manifest struct {
	ABI               int                `json:"abi"`
	Name              string             `json:"name,omitempty"`
	Version           string             `json:"version,omitempty"`
	Description       string             `json:"description,omitempty"`
	Tools             []toolJSON         `json:"tools"`
	Resources         []Resource         `json:"resources"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	Prompts           []Prompt           `json:"prompts"`
	Completions       bool               `json:"completions"`
	Capabilities      Capabilities       `json:"capabilities"`
	Skills            []Skill            `json:"skills,omitempty"`
}

func (p *Plugin) describe(c *Context) (uint32, []byte) {
	m := manifest{
		ABI: abi.Version, Name: p.info.Name, Version: p.info.Version, Description: p.info.Description,
		Tools: []toolJSON{}, Resources: []Resource{}, ResourceTemplates: []ResourceTemplate{}, Prompts: []Prompt{},
		Completions:  len(p.promptCompletions)+len(p.resourceCompletions) > 0,
		Capabilities: p.info.Capabilities,
		Skills:       p.skills,
	}
	for _, e := range p.tools {
		if p.listed(c, ListTools, e.tool.Name) {
			m.Tools = append(m.Tools, e.tool)
		}
	}
	seen := map[string]bool{}
	for _, e := range p.resources {
		m.Resources = append(m.Resources, e.res)
		seen[e.res.URI] = true
	}
	for _, l := range p.listers {
		listed, err := protect(func() ([]Resource, error) { return l(c) })
		if err != nil {
			// The static part of the manifest is still right; say why the
			// dynamic part is missing in the server log.
			c.Logf(LevelWarning, "wasmcp: listing resources: %v", err)
			continue
		}
		for _, r := range listed {
			if r.URI == "" || seen[r.URI] {
				continue
			}
			if r.Name == "" {
				r.Name = r.URI
			}
			seen[r.URI] = true
			m.Resources = append(m.Resources, r)
		}
	}
	for _, e := range p.templates {
		m.ResourceTemplates = append(m.ResourceTemplates, e.tmpl)
	}
	for _, e := range p.prompts {
		if p.listed(c, ListPrompts, e.prompt.Name) {
			m.Prompts = append(m.Prompts, e.prompt)
		}
	}
	return result(m)
}

func (p *Plugin) callTool(c *Context, req *requestParams) (uint32, []byte) {
	e := p.tool(req.Name)
	if e == nil {
		return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Name)})
	}
	args := req.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	r, err := protect(func() (*Result, error) { return e.handler(c, args) })
	if err != nil {
		if status, out, ok := special(err); ok {
			return status, out
		}
		return result(ErrorResult(err.Error()))
	}
	if r == nil {
		r = &Result{}
	}
	if out, ok := appendResult(nil, r); ok {
		return StatusOK, out
	}
	status, out := result(r)
	if status != StatusOK {
		return result(ErrorResult("cannot encode the tool result: " + string(out)))
	}
	return status, out
}

func (p *Plugin) readResource(c *Context, req *requestParams) (uint32, []byte) {
	if req.URI == "" {
		return rpcError(&RPCError{Code: CodeInvalidParams, Message: "invalid resources/read params: missing uri"})
	}
	notFound := &RPCError{Code: CodeResourceNotFound, Message: "resource not found: " + req.URI, Data: map[string]string{"uri": req.URI}}
	var handler ResourceHandler
	rr := &ResourceRequest{URI: req.URI}
	for _, e := range p.resources {
		if e.res.URI == req.URI {
			handler = e.handler
			break
		}
	}
	if handler == nil {
		for _, e := range p.templates {
			if vars, ok := e.parsed.match(req.URI); ok {
				handler, rr.Vars = e.handler, vars
				break
			}
		}
	}
	if handler == nil {
		return rpcError(notFound)
	}
	contents, err := protect(func() ([]ResourceContents, error) { return handler(c, rr) })
	if err != nil {
		if errors.Is(err, ErrResourceNotFound) {
			return rpcError(notFound)
		}
		return failure(err)
	}
	if contents == nil {
		contents = []ResourceContents{}
	}
	return result(struct {
		Contents []ResourceContents `json:"contents"`
	}{contents})
}

func (p *Plugin) getPrompt(c *Context, req *requestParams) (uint32, []byte) {
	var raw map[string]json.RawMessage
	if len(req.Arguments) > 0 {
		if err := json.Unmarshal(req.Arguments, &raw); err != nil {
			return rpcError(&RPCError{Code: CodeInvalidParams, Message: "invalid prompts/get arguments: " + err.Error()})
		}
	}
	e := p.prompt(req.Name)
	if e == nil {
		return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Name)})
	}
	args := make(map[string]string, len(raw))
	for k, v := range raw {
		args[k] = jsonString(v)
	}
	var missing []string
	for _, a := range e.prompt.Arguments {
		if _, ok := args[a.Name]; a.Required && !ok {
			missing = append(missing, a.Name)
		}
	}
	if len(missing) > 0 {
		return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("prompt %q: missing required arguments: %s", req.Name, strings.Join(missing, ", "))})
	}
	r, err := protect(func() (*PromptResult, error) { return e.handler(c, args) })
	if err != nil {
		return failure(err)
	}
	if r == nil {
		r = &PromptResult{}
	}
	if r.Messages == nil {
		r.Messages = []PromptMessage{}
	}
	return result(r)
}

func (p *Plugin) complete(c *Context, req *requestParams) (uint32, []byte) {
	var h CompletionHandler
	cr := &CompleteRequest{Argument: req.Argument.Name, Value: req.Argument.Value, Arguments: req.Context.Arguments}
	switch req.Ref.Type {
	case "ref/prompt":
		cr.Ref = req.Ref.Name
		if p.prompt(req.Ref.Name) == nil && p.promptCompletions[req.Ref.Name] == nil {
			return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Ref.Name)})
		}
		h = p.promptCompletions[req.Ref.Name]
	case "ref/resource":
		cr.Ref = req.Ref.URI
		h = p.resourceCompletions[req.Ref.URI]
		if h == nil {
			// A concrete URI (allowed since 2026-07-28): the template it matches.
			for _, e := range p.templates {
				if _, ok := e.parsed.match(req.Ref.URI); ok && p.resourceCompletions[e.tmpl.URITemplate] != nil {
					cr.Ref, h = e.tmpl.URITemplate, p.resourceCompletions[e.tmpl.URITemplate]
					break
				}
			}
		}
		if h == nil && !p.knowsResource(req.Ref.URI) {
			return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown resource or template %q", req.Ref.URI)})
		}
	default:
		return rpcError(&RPCError{Code: CodeInvalidParams, Message: fmt.Sprintf("unknown completion reference type %q", req.Ref.Type)})
	}
	comp := &Completion{}
	if h != nil {
		r, err := protect(func() (*Completion, error) { return h(c, cr) })
		if r != nil {
			comp = r
		}
		if err != nil {
			return failure(err)
		}
	}
	out := *comp
	if out.Values == nil {
		out.Values = []string{}
	}
	if len(out.Values) > maxCompletionValues {
		out.Total = max(out.Total, len(out.Values))
		out.Values = out.Values[:maxCompletionValues]
		out.HasMore = true
	}
	return result(struct {
		Completion Completion `json:"completion"`
	}{out})
}

func (p *Plugin) knowsResource(uri string) bool {
	for _, e := range p.templates {
		if e.tmpl.URITemplate == uri {
			return true
		}
	}
	for _, e := range p.resources {
		if e.res.URI == uri {
			return true
		}
	}
	return false
}

// CompleteFrom returns the candidates that start with prefix (ignoring
// case), sorted, at most 100 of them with Total and HasMore set.
func CompleteFrom(candidates []string, prefix string) *Completion {
	var values []string
	lp := strings.ToLower(prefix)
	for _, v := range candidates {
		if strings.HasPrefix(strings.ToLower(v), lp) {
			values = append(values, v)
		}
	}
	sort.Strings(values)
	c := &Completion{Values: values, Total: len(values)}
	if len(values) > maxCompletionValues {
		c.Values, c.HasMore = values[:maxCompletionValues], true
	}
	if c.Values == nil {
		c.Values = []string{}
	}
	return c
}

// protect runs f and returns what it returns, turning a panic into an
// error (with the zero T) and writing the stack to stderr (the server log).
func protect[T any](f func() (T, error)) (r T, err error) {
	defer func() {
		if v := recover(); v != nil {
			fmt.Fprintf(os.Stderr, "wasmcp: handler panic: %v\n%s", v, debug.Stack())
			err = fmt.Errorf("internal error: the handler panicked: %v", v)
		}
	}()
	return f()
}

// special answers the errors every method treats alike: input_required
// and JSON-RPC errors.
func special(err error) (uint32, []byte, bool) {
	var ir *InputRequired
	if errors.As(err, &ir) {
		if len(ir.Requests) == 0 && ir.State == "" {
			s, out := rpcError(&RPCError{Code: CodeInternalError, Message: "input_required result with neither requests nor state"})
			return s, out, true
		}
		s, out := result(ir)
		return s, out, true
	}
	var re *RPCError
	if errors.As(err, &re) {
		s, out := rpcError(re)
		return s, out, true
	}
	return 0, nil, false
}

// failure answers a non-tool handler's error.
func failure(err error) (uint32, []byte) {
	if s, out, ok := special(err); ok {
		return s, out
	}
	return rpcError(&RPCError{Code: CodeInternalError, Message: err.Error()})
}

// result marshals a result; on failure it answers an internal error whose
// output holds the reason.
func result(v any) (uint32, []byte) {
	b, err := marshal(v)
	if err != nil {
		return rpcError(&RPCError{Code: CodeInternalError, Message: "cannot encode the result: " + err.Error()})
	}
	return StatusOK, b
}

func rpcError(e *RPCError) (uint32, []byte) {
	b, err := marshal(e)
	if err != nil {
		b, _ = json.Marshal(&RPCError{Code: e.Code, Message: e.Message})
	}
	return StatusError, b
}
