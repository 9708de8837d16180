// Package mcptest provides an in-memory mcp.Provider for tests of the
// protocol engine and of clients talking to it: tools (including progress,
// logging, elicitation, cancellation, panics and x-mcp-header), resources
// and a resource template, prompts, completion and list changes.
package mcptest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// Provider is an in-memory mcp.Provider. Its zero value is not usable;
// call New. It is safe for concurrent use.
type Provider struct {
	// Started receives the name of every tool call as it starts, when
	// non-nil (tests use it to know a slow call is running). Sends never
	// block: a full channel drops the name.
	Started chan string
	// Stopped receives the name of the slow tool when its context ends.
	Stopped chan string
	// Finished receives the name of the hidden flood tool when it
	// returns, when non-nil (sends never block).
	Finished chan string
	// Gate, when non-nil, holds the close_stream tool after it closed its
	// stream until Gate is closed or receives.
	Gate chan struct{}

	mu        sync.Mutex
	server    *mcp.Server
	features  mcp.Features
	extra     int  // number of filler tools
	transient bool // the "transient" tool is listed
	tasks     bool // the task_ask tool is listed
}

// Options configures New.
type Options struct {
	// Features overrides the default features (everything on) when set.
	Features *mcp.Features
	// ExtraTools adds that many filler tools (filler_0000, ...) after the
	// real ones, to exercise pagination.
	ExtraTools int
	// Tasks lists task_ask, a tool that may run as a task
	// (execution.taskSupport optional): it starts the task, asks for a
	// name (input_required, or elicitation/create on a legacy session)
	// and answers with it; and task_big, optional too, that answers a
	// text of n bytes.
	Tasks bool
}

// New returns a Provider. opts may be nil.
func New(opts *Options) *Provider {
	p := &Provider{features: mcp.Features{
		Tools: true, Resources: true, Prompts: true, Completions: true,
		Subscribe: true, ListChanged: true,
	}}
	if opts != nil {
		if opts.Features != nil {
			p.features = *opts.Features
		}
		p.extra = opts.ExtraTools
		p.tasks = opts.Tasks
	}
	return p
}

// SetServer gives the provider the server to notify of changes (the
// change_tools, change_prompts and touch tools need it).
func (p *Provider) SetServer(s *mcp.Server) {
	p.mu.Lock()
	p.server = s
	p.mu.Unlock()
}

func (p *Provider) srv() *mcp.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.server
}

// Features implements mcp.Provider.
func (p *Provider) Features() mcp.Features {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.features
}

// Tool names and fixtures.
const (
	PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
)

var baseTools = []string{
	`{"name":"echo","description":"Echoes text (default: \"hello\").","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}`,
	`{"name":"add","description":"Adds two integers.","inputSchema":{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"]},"outputSchema":{"type":"object","properties":{"sum":{"type":"integer"}}}}`,
	`{"name":"progress","description":"Sends progress notifications 1..steps (default 3), one repeated value, then answers.","inputSchema":{"type":"object","properties":{"steps":{"type":"integer"}}}}`,
	`{"name":"log","description":"Logs one message at each level from debug to emergency.","inputSchema":{"type":"object"}}`,
	`{"name":"elicit","description":"Asks the client for a name (elicitation) and answers with it.","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}`,
	`{"name":"slow","description":"Blocks until cancelled.","inputSchema":{"type":"object"}}`,
	`{"name":"panic","description":"Panics.","inputSchema":{"type":"object"}}`,
	`{"name":"fail","description":"Returns a tool error.","inputSchema":{"type":"object"}}`,
	`{"name":"broken","description":"Returns a Go error.","inputSchema":{"type":"object"}}`,
	`{"name":"bad_json","description":"Returns invalid JSON.","inputSchema":{"type":"object"}}`,
	`{"name":"missing_capability","description":"Needs the sampling client capability.","inputSchema":{"type":"object"}}`,
	`{"name":"header","description":"Tool with x-mcp-header parameters.","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"level":{"type":"integer","x-mcp-header":"Level"},"flag":{"type":"boolean","x-mcp-header":"Flag"},"note":{"type":"string"}}}}`,
	`{"name":"change_tools","description":"Toggles the transient tool and notifies tools list_changed.","inputSchema":{"type":"object"}}`,
	`{"name":"change_prompts","description":"Notifies prompts list_changed.","inputSchema":{"type":"object"}}`,
	`{"name":"touch","description":"Notifies resources/updated for uri.","inputSchema":{"type":"object","properties":{"uri":{"type":"string"}},"required":["uri"]}}`,
	`{"name":"big","description":"Answers a text of n bytes.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}}}`,
	`{"name":"needs_input","description":"Always answers input_required.","inputSchema":{"type":"object"}}`,
	`{"name":"close_stream","description":"Closes its HTTP SSE stream, then answers.","inputSchema":{"type":"object"}}`,
}

const taskBigTool = `{"name":"task_big","description":"May run as a task; answers a text of n bytes.","inputSchema":{"type":"object","properties":{"n":{"type":"integer"}}},"execution":{"taskSupport":"optional"}}`

const taskTool = `{"name":"task_ask","description":"Starts a task, asks for a name, answers with it.","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"}}`

const transientTool = `{"name":"transient","description":"Appears after change_tools.","inputSchema":{"type":"object"}}`

// Tools implements mcp.Provider.
func (p *Provider) Tools(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	p.mu.Lock()
	extra, transient, tasks := p.extra, p.transient, p.tasks
	p.mu.Unlock()
	out := make([]json.RawMessage, 0, len(baseTools)+extra+1)
	for _, t := range baseTools {
		out = append(out, json.RawMessage(t))
	}
	if transient {
		out = append(out, json.RawMessage(transientTool))
	}
	if tasks {
		out = append(out, json.RawMessage(taskTool), json.RawMessage(taskBigTool))
	}
	for i := range extra {
		out = append(out, json.RawMessage(fmt.Sprintf(`{"name":"filler_%04d","inputSchema":{"type":"object"}}`, i)))
	}
	return out, nil
}

func text(s string) json.RawMessage {
	b := []byte(`{"content":[{"type":"text","text":`)
	b = jsonscan.AppendString(b, s)
	return append(b, "}]}"...)
}

type callParams struct {
	Name           string                     `json:"name"`
	Arguments      map[string]json.RawMessage `json:"arguments"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
	RequestState   string                     `json:"requestState"`
}

func (p *Provider) started(name string) {
	if p.Started != nil {
		select {
		case p.Started <- name:
		default:
		}
	}
}

// CallTool implements mcp.Provider.
func (p *Provider) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var cp callParams
	if err := json.Unmarshal(r.Params, &cp); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid tools/call params", nil)
	}
	p.started(cp.Name)
	arg := func(name string) string {
		v := cp.Arguments[name]
		if s, ok := jsonscan.String(v); ok {
			return s
		}
		return string(v)
	}
	argInt := func(name string, def int) int {
		if n, err := strconv.Atoi(arg(name)); err == nil {
			return n
		}
		return def
	}
	switch cp.Name {
	case "echo":
		t := arg("text")
		if t == "" {
			t = "hello"
		}
		return text(t), nil
	case "add":
		sum := argInt("a", 0) + argInt("b", 0)
		return json.RawMessage(fmt.Sprintf(`{"content":[{"type":"text","text":"%d"}],"structuredContent":{"sum":%d}}`, sum, sum)), nil
	case "progress":
		steps := argInt("steps", 3)
		total := float64(steps)
		for i := 1; i <= steps; i++ {
			r.Progress(float64(i), &total, fmt.Sprintf("step %d", i))
			r.Progress(float64(i), &total, "repeated value, dropped")
		}
		return text("done"), nil
	case "log":
		for _, lvl := range []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"} {
			r.Log(lvl, "mcptest", json.RawMessage(`{"level":"`+lvl+`"}`))
		}
		return text("logged"), nil
	case "elicit":
		return p.elicit(ctx, r, &cp, arg("message"))
	case "task_ask":
		r.StartTask()
		return p.elicit(ctx, r, &cp, "")
	case "slow":
		<-ctx.Done()
		if p.Stopped != nil {
			p.Stopped <- cp.Name
		}
		return nil, ctx.Err()
	case "panic":
		panic("mcptest: the panic tool panicked")
	case "fail":
		return json.RawMessage(`{"content":[{"type":"text","text":"this tool always fails"}],"isError":true}`), nil
	case "broken":
		return nil, errors.New("mcptest: broken tool")
	case "bad_json":
		return json.RawMessage(`{"content":[`), nil
	case "missing_capability":
		if !r.HasClientCapability("sampling") {
			return nil, jsonrpc.NewError(jsonrpc.CodeMissingClientCapability, "this tool needs the sampling capability",
				map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
		}
		return text("sampling declared"), nil
	case "header":
		return text("region=" + arg("region") + " level=" + arg("level") + " flag=" + arg("flag")), nil
	case "change_tools":
		p.mu.Lock()
		p.transient = !p.transient
		p.mu.Unlock()
		if s := p.srv(); s != nil {
			s.NotifyListChanged("tools")
		}
		return text("tools changed"), nil
	case "change_prompts":
		if s := p.srv(); s != nil {
			s.NotifyListChanged("prompts")
		}
		return text("prompts changed"), nil
	case "touch":
		if s := p.srv(); s != nil {
			s.NotifyResourceUpdated(arg("uri"))
		}
		return text("touched"), nil
	case "big", "task_big":
		return text(strings.Repeat("x", argInt("n", 1000))), nil
	case "close_stream":
		r.CloseStream()
		if p.Gate != nil {
			select {
			case <-p.Gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return text("after close"), nil
	case "needs_input":
		return json.RawMessage(`{"resultType":"input_required","requestState":"s1"}`), nil
	case "transient":
		return text("transient"), nil
	}
	if strings.HasPrefix(cp.Name, "filler_") {
		return text(cp.Name), nil
	}
	if cp.Name == "flood" {
		// Hidden (not listed): notifies n list_changed of kind, or, with
		// uri, resources/updated for n URIs uri<i> padded to size bytes.
		n, size, kind, uri := argInt("n", 1), argInt("size", 0), arg("kind"), arg("uri")
		if s := p.srv(); s != nil {
			for i := range n {
				if uri == "" {
					s.NotifyListChanged(kind)
					continue
				}
				u := uri + strconv.Itoa(i)
				if len(u) < size {
					u += strings.Repeat("x", size-len(u))
				}
				s.NotifyResourceUpdated(u)
			}
		}
		if p.Finished != nil {
			select {
			case p.Finished <- cp.Name:
			default:
			}
		}
		return text("flooded"), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown tool: "+cp.Name, nil)
}

const elicitParams = `{"message":%s,"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`

// elicit asks for a name: with a real server-to-client request on legacy
// sessions, with an input_required result on 2026-07-28.
func (p *Provider) elicit(ctx context.Context, r *mcp.Request, cp *callParams, message string) (json.RawMessage, error) {
	if message == "" {
		message = "What is your name?"
	}
	params := fmt.Sprintf(elicitParams, jsonscan.AppendString(nil, message))
	if r.Stateless {
		if resp, ok := cp.InputResponses["name"]; ok {
			return text("hello " + elicitedName(resp)), nil
		}
		return json.RawMessage(`{"resultType":"input_required","inputRequests":{"name":{"method":"elicitation/create","params":` + params + `}}}`), nil
	}
	res, err := r.ClientCall(ctx, "elicitation/create", json.RawMessage(params))
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			return text("elicitation failed: " + je.Message), nil
		}
		if errors.Is(err, mcp.ErrNoClientRequests) {
			return json.RawMessage(`{"content":[{"type":"text","text":"elicitation unavailable"}],"isError":true}`), nil
		}
		return nil, err
	}
	return text("hello " + elicitedName(res)), nil
}

func elicitedName(res json.RawMessage) string {
	var er struct {
		Action  string `json:"action"`
		Content struct {
			Name string `json:"name"`
		} `json:"content"`
	}
	_ = json.Unmarshal(res, &er)
	if er.Action != "accept" {
		return "(" + er.Action + ")"
	}
	return er.Content.Name
}

var resources = []string{
	`{"uri":"test://static-text","name":"static-text","mimeType":"text/plain"}`,
	`{"uri":"test://static-binary","name":"static-binary","mimeType":"image/png"}`,
	`{"uri":"test://watched","name":"watched","mimeType":"text/plain"}`,
}

// Resources implements mcp.Provider.
func (p *Provider) Resources(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	return raws(resources), nil
}

// ResourceTemplates implements mcp.Provider.
func (p *Provider) ResourceTemplates(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	return []json.RawMessage{json.RawMessage(`{"uriTemplate":"test://template/{id}/data","name":"template","mimeType":"application/json"}`)}, nil
}

// ReadResource implements mcp.Provider. Unknown URIs give -32002 with
// data.uri.
func (p *Provider) ReadResource(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var rp struct {
		URI string `json:"uri"`
	}
	_ = json.Unmarshal(r.Params, &rp)
	content := func(field, mime, value string) json.RawMessage {
		b := []byte(`{"contents":[{"uri":`)
		b = jsonscan.AppendString(b, rp.URI)
		b = append(b, `,"mimeType":"`+mime+`","`+field+`":`...)
		b = jsonscan.AppendString(b, value)
		return append(b, "}]}"...)
	}
	switch {
	case rp.URI == "test://static-text":
		return content("text", "text/plain", "This is the content of the static text resource."), nil
	case rp.URI == "test://static-binary":
		return content("blob", "image/png", PNG), nil
	case rp.URI == "test://watched":
		return content("text", "text/plain", "watched"), nil
	case strings.HasPrefix(rp.URI, "test://template/") && strings.HasSuffix(rp.URI, "/data"):
		id := strings.TrimSuffix(strings.TrimPrefix(rp.URI, "test://template/"), "/data")
		return content("text", "application/json", `{"id":"`+id+`"}`), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeResourceNotFound, "resource not found", map[string]string{"uri": rp.URI})
}

var prompts = []string{
	`{"name":"simple","description":"A simple prompt."}`,
	`{"name":"with_args","description":"A prompt with arguments.","arguments":[{"name":"arg1","required":true},{"name":"arg2"}]}`,
}

// Prompts implements mcp.Provider.
func (p *Provider) Prompts(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	return raws(prompts), nil
}

// GetPrompt implements mcp.Provider.
func (p *Provider) GetPrompt(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var gp struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}
	if err := json.Unmarshal(r.Params, &gp); err != nil {
		return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "invalid prompts/get params", nil)
	}
	msg := func(s string) json.RawMessage {
		b := []byte(`{"messages":[{"role":"user","content":{"type":"text","text":`)
		b = jsonscan.AppendString(b, s)
		return append(b, "}}]}"...)
	}
	switch gp.Name {
	case "simple":
		return msg("This is a simple prompt."), nil
	case "with_args":
		a1, ok := gp.Arguments["arg1"]
		if !ok {
			return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "missing required argument arg1", nil)
		}
		return msg("arg1=" + a1 + " arg2=" + gp.Arguments["arg2"]), nil
	}
	return nil, jsonrpc.NewError(jsonrpc.CodeInvalidParams, "unknown prompt: "+gp.Name, nil)
}

// Complete implements mcp.Provider: values of arg1 starting with the typed
// prefix.
func (p *Provider) Complete(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	var cp struct {
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}
	_ = json.Unmarshal(r.Params, &cp)
	if cp.Argument.Value == "input_required" {
		// Not allowed for completion/complete: the engine must refuse it.
		return json.RawMessage(`{"resultType":"input_required","requestState":"x"}`), nil
	}
	var vals []string
	for _, v := range []string{"alpha", "alpine", "beta"} {
		if strings.HasPrefix(v, cp.Argument.Value) {
			vals = append(vals, v)
		}
	}
	b, _ := json.Marshal(vals)
	if vals == nil {
		b = []byte("[]")
	}
	return json.RawMessage(`{"completion":{"values":` + string(b) + `,"total":` + strconv.Itoa(len(vals)) + `,"hasMore":false}}`), nil
}

func raws(ss []string) []json.RawMessage {
	out := make([]json.RawMessage, len(ss))
	for i, s := range ss {
		out[i] = json.RawMessage(s)
	}
	return out
}

// SlotShare implements mcp.SlotSharer: a tools/call shares the run slots
// by its "share" argument, when it has one.
func (p *Provider) SlotShare(r *mcp.Request) string {
	var cp callParams
	if r.Method != "tools/call" || json.Unmarshal(r.Params, &cp) != nil {
		return ""
	}
	s, _ := jsonscan.String(cp.Arguments["share"])
	return s
}

var (
	_ mcp.Provider   = (*Provider)(nil)
	_ mcp.SlotSharer = (*Provider)(nil)
)
