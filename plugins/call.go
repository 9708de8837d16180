package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/runtime"
)

// Caller is the client side of one request, as plugins needs it
// (hostapi.Caller). The composition root implements it over the MCP
// engine's request.
type Caller = hostapi.Caller

// Request is one client request routed to a plugin. The protocol engine
// has parsed it: the registry reads the typed members, not the wire.
type Request struct {
	// Client is what the request tells of its client and caller: the
	// engine's own (internal/mcp's Request.Client), shared, not copied.
	*mcpreq.Client
	// Params is the params object as the client sent it, which the
	// plugin gets (with its own names for the items, without the
	// input_required members).
	Params json.RawMessage
	// Parsed is Params as the engine parsed them (tools/call,
	// prompts/get, resources/read, completion/complete); a Request
	// without them is refused with a *ParamsError.
	Parsed *mcpreq.Params
	// Restricted means the caller is subject to plugin scopes (an
	// authenticated HTTP caller): plugins with Spec.Scopes are visible to
	// it only when Client.Scopes includes one of them; a hidden plugin's
	// items answer exactly as unknown ones. Unrestricted callers (stdio,
	// HTTP without access control) see every plugin.
	Restricted bool
	// Caller carries notifications and client requests; nil drops them.
	Caller Caller
	// Hook observes the request's plugin calls; nil for none.
	Hook CallHook
	// Approve, when set, vets the catalog entry the request was routed
	// to, from the same catalog the call then runs on, before anything
	// else is checked: its error is the request's answer and no plugin
	// is called. nil approves every entry.
	Approve Approver
	// Options are the runtime's options of the request's plugin calls
	// (a background task's timeout, the hook of a call that queues).
	Options runtime.CallOptions
}

// Approver vets the item a request is about to reach (what the server's
// authorization and pinned definitions decide on).
type Approver interface {
	Approve(Item) error
}

// approve asks req.Approve about it.
func (req *Request) approve(it Item) error {
	if req.Approve == nil {
		return nil
	}
	return req.Approve.Approve(it)
}

// parsed returns req.Parsed, or a *ParamsError when the caller did not
// set it (the engine always does; a library caller may not).
func (req *Request) parsed() (*mcpreq.Params, error) {
	if req.Parsed == nil {
		return nil, &ParamsError{Msg: "plugins: request without parsed params"}
	}
	return req.Parsed, nil
}

// envContext is the "context" member of the request envelope (ABI §3),
// and the request's era, which the guest reads from protocolVersion.
type envContext struct {
	stateless          bool            // a 2026-07-28 request (mcpreq.Client.Stateless); not written out
	ProtocolVersion    string          `json:"protocolVersion,omitempty"`
	ClientInfo         json.RawMessage `json:"clientInfo,omitempty"`
	ClientCapabilities json.RawMessage `json:"clientCapabilities,omitempty"`
	ProgressToken      json.RawMessage `json:"progressToken,omitempty"`
	InputResponses     json.RawMessage `json:"inputResponses,omitempty"`
	RequestState       *string         `json:"requestState,omitempty"`
}

// readHead checks that a plugin's result is a JSON object (valid UTF-8,
// well-formed: it goes to the client as is) and reads the members the host
// acts on, without decoding the rest. Whether it has the members MCP
// requires of the method's result is the protocol engine's to check.
func readHead(out []byte) (resultHead, error) {
	if !jsonscan.Valid(out) {
		return resultHead{}, &BadResultError{Msg: "not valid JSON (or not valid UTF-8)"}
	}
	it, ok := jsonscan.NewObjectIter(out)
	if !ok {
		return resultHead{}, &BadResultError{Msg: "not a JSON object"}
	}
	var head resultHead
	var inputRequests []byte
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		switch {
		case jsonscan.KeyIs(k, "resultType"):
			head.ResultType, _ = jsonscan.String(v)
		case jsonscan.KeyIs(k, "isError"):
			head.IsError = string(v) == "true"
		case jsonscan.KeyIs(k, "structuredContent"):
			head.StructuredContent = v
		case jsonscan.KeyIs(k, "inputRequests"):
			inputRequests = v
		case jsonscan.KeyIs(k, "requestState"):
			head.RequestState = nil
			if s, ok := jsonscan.String(v); ok {
				head.RequestState = &s
			}
		}
	}
	if head.ResultType == "input_required" && inputRequests != nil && jsonscan.Kind(inputRequests) != 'z' {
		var reqs map[string]inputRequest // a local, so that head stays off the heap
		if err := json.Unmarshal(inputRequests, &reqs); err != nil {
			return resultHead{}, &BadResultError{Msg: "invalid inputRequests: " + err.Error()}
		}
		head.InputRequests = reqs
	}
	return head, nil
}

// resultHead is what the host reads of a plugin's result.
type resultHead struct {
	ResultType        string                  `json:"resultType"`
	IsError           bool                    `json:"isError"`
	StructuredContent json.RawMessage         `json:"structuredContent"`
	InputRequests     map[string]inputRequest `json:"inputRequests"`
	RequestState      *string                 `json:"requestState"`
}

type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || string(raw) == "null"
}

// CallTool runs tools/call. Arguments are validated against the tool's
// inputSchema (*ArgumentsError) and structuredContent against its
// outputSchema (*OutputError).
func (r *Registry) CallTool(ctx context.Context, req *Request) (json.RawMessage, error) {
	p, err := req.parsed()
	if err != nil {
		return nil, err
	}
	t := r.cat.Load().tools[p.Name]
	if t == nil || !req.mayUse(t.plugin) || (t.appOnly && !req.appClient()) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownTool, p.Name)
	}
	if err := req.approve(Item{Plugin: t.plugin, Def: t.raw, Orig: t.orig}); err != nil {
		return nil, err
	}
	if err := t.input.Validate(p.Arguments); err != nil {
		return nil, &ArgumentsError{Err: err}
	}
	params := rewriteParams(req.Params, p, t.name != t.orig, t.orig)
	out, head, err := r.run(ctx, t.plugin, abi.MethodToolsCall, t.name, req, params, p)
	if err != nil {
		return nil, err
	}
	if t.output != nil && !head.IsError && head.ResultType != "input_required" {
		if isNull(head.StructuredContent) {
			return nil, &OutputError{Tool: t.name, Err: errors.New("no structuredContent")}
		}
		if err := t.output.Validate(head.StructuredContent); err != nil {
			return nil, &OutputError{Tool: t.name, Err: err}
		}
	}
	if t.appURI != "" && head.ResultType != "input_required" {
		out = withTextFallback(out, head.StructuredContent, t.name, t.appURI)
	}
	return out, nil
}

// GetPrompt runs prompts/get; missing required arguments are a
// *ParamsError.
func (r *Registry) GetPrompt(ctx context.Context, req *Request) (json.RawMessage, error) {
	p, err := req.parsed()
	if err != nil {
		return nil, err
	}
	e := r.cat.Load().prompts[p.Name]
	if e == nil || !req.mayUse(e.plugin) {
		return nil, fmt.Errorf("%w: %s", ErrUnknownPrompt, p.Name)
	}
	if err := req.approve(Item{Plugin: e.plugin, Def: e.raw, Orig: e.orig}); err != nil {
		return nil, err
	}
	for _, a := range e.args {
		if v, ok := jsonscan.Member(p.Arguments, a.Name); a.Required && (!ok || isNull(v)) {
			return nil, &ParamsError{Msg: fmt.Sprintf("prompt %q: missing required argument %q", e.name, a.Name)}
		}
	}
	params := rewriteParams(req.Params, p, e.name != e.orig, e.orig)
	out, _, err := r.run(ctx, e.plugin, abi.MethodPromptsGet, e.name, req, params, p)
	return out, err
}

// ReadResource runs resources/read on the plugin that serves the URI (a
// static resource, else the first matching template): *NotFoundError if
// none does.
func (r *Registry) ReadResource(ctx context.Context, req *Request) (json.RawMessage, error) {
	p, err := req.parsed()
	if err != nil {
		return nil, err
	}
	cat := r.cat.Load()
	it, ok := cat.findResource(p.URI, req)
	if !ok {
		return nil, &NotFoundError{URI: p.URI}
	}
	if err := req.approve(it); err != nil {
		return nil, err
	}
	pl := it.Plugin
	params := rewriteParams(req.Params, p, false, "")
	e := cat.resources[p.URI]
	app := e != nil && e.plugin == pl && strings.HasPrefix(p.URI, uiScheme)
	if app && e.orig != "" && e.orig != e.uri {
		params = setMember(params, "uri", e.orig)
	}
	out, head, err := r.run(ctx, pl, abi.MethodResourceRead, p.URI, req, params, p)
	if err == nil && app && head.ResultType != "input_required" {
		out = pl.appRead(out, p.URI)
	}
	return out, err
}

// emptyCompletion is the answer for plugins that do not complete.
var emptyCompletion = json.RawMessage(`{"completion":{"values":[],"hasMore":false}}`)

// Complete runs completion/complete on the plugin that owns the referenced
// prompt or resource template.
func (r *Registry) Complete(ctx context.Context, req *Request) (json.RawMessage, error) {
	p, err := req.parsed()
	if err != nil {
		return nil, err
	}
	ref := p.Ref
	if ref.Type == "" {
		return nil, &ParamsError{Msg: "completion/complete needs a ref"}
	}
	cat := r.cat.Load()
	var it Item
	params := req.Params
	if ref.Type == "ref/prompt" {
		e := cat.prompts[ref.Name]
		if e == nil || !req.mayUse(e.plugin) {
			return nil, fmt.Errorf("%w: %s", ErrUnknownPrompt, ref.Name)
		}
		it = Item{Plugin: e.plugin, Def: e.raw, Orig: e.orig}
		if e.name != e.orig {
			params = setMember(params, "ref", map[string]string{"type": "ref/prompt", "name": e.orig})
		}
	} else { // ref/resource
		for _, t := range cat.templates {
			if t.tmpl.String() == ref.URI && req.mayUse(t.plugin) {
				it = Item{Plugin: t.plugin, Def: t.raw, Template: ref.URI}
				break
			}
		}
		if it.Plugin == nil {
			it, _ = cat.findResource(ref.URI, req)
		}
		if it.Plugin == nil {
			return nil, &NotFoundError{URI: ref.URI}
		}
	}
	if err := req.approve(it); err != nil {
		return nil, err
	}
	pl := it.Plugin
	if !pl.manifest.Completions {
		return emptyCompletion, nil
	}
	out, _, err := r.run(ctx, pl, abi.MethodComplete, "", req, params, &mcpreq.Params{})
	return out, err
}

// rewriteParams gives the plugin its own name for the item and takes out
// the input_required fields, which travel in the envelope's context.
func rewriteParams(raw json.RawMessage, p *mcpreq.Params, rename bool, orig string) json.RawMessage {
	if !rename && isNull(p.InputResponses) && p.RequestState == nil {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if rename {
		m["name"], _ = json.Marshal(orig)
	}
	delete(m, "inputResponses")
	delete(m, "requestState")
	out, err := json.Marshal(m)
	if err != nil {
		return raw
	}
	return out
}

// run calls a plugin and carries out the input_required flow of ABI §6.
func (r *Registry) run(ctx context.Context, pl *Plugin, method, target string, req *Request, params json.RawMessage, p *mcpreq.Params) (json.RawMessage, resultHead, error) {
	ec := envContext{
		stateless:          req.Stateless,
		ProtocolVersion:    req.ProtocolVersion,
		ClientInfo:         req.ClientInfo,
		ClientCapabilities: req.ClientCapabilities,
		ProgressToken:      req.ProgressToken,
	}
	binding := stateBinding{Plugin: pl.name, Method: method, Target: target, Principal: req.Principal}
	if p.RequestState != nil {
		inner, err := r.sealer.open(binding, *p.RequestState)
		if err != nil {
			return nil, resultHead{}, err
		}
		ec.RequestState = &inner
	}
	if !isNull(p.InputResponses) {
		ec.InputResponses = p.InputResponses
	}
	client := &callClient{reg: r, plugin: pl, req: req}
	host := pl.host.BindAt(&client.binding, client)
	bufp := envelopes.Get().(*[]byte)
	defer func() {
		if cap(*bufp) <= 64<<10 {
			envelopes.Put(bufp)
		}
	}()
	for round := 1; ; round++ {
		var status uint32
		var out []byte
		var err error
		if hook := req.Hook; hook != nil {
			cctx, h := hook.CallStart(ctx, pl.name, method, target, host)
			status, out, err = pl.callGuest(cctx, h, method, params, &ec, bufp, &req.Options)
			hook.CallEnd(cctx, err)
		} else {
			status, out, err = pl.callGuest(ctx, host, method, params, &ec, bufp, &req.Options)
		}
		if err != nil {
			return nil, resultHead{}, fmt.Errorf("plugin %q: %w", pl.name, err)
		}
		if status == abi.StatusError {
			if !jsonscan.Valid(out) {
				return nil, resultHead{}, &BadResultError{Msg: "status 1 with an error that is not valid JSON (or not valid UTF-8)"}
			}
			var pe PluginError
			if json.Unmarshal(out, &pe) != nil || pe.Code == 0 {
				return nil, resultHead{}, &BadResultError{Msg: "status 1 without a JSON-RPC error object"}
			}
			return nil, resultHead{}, &pe
		}
		head, err := readHead(out)
		if err != nil {
			return nil, resultHead{}, err
		}
		if head.ResultType != "input_required" {
			return out, head, nil
		}
		if len(head.InputRequests) == 0 && head.RequestState == nil {
			return nil, resultHead{}, &BadResultError{Msg: "input_required without inputRequests or requestState"}
		}
		if err := pl.mayRequest(head.InputRequests); err != nil {
			return nil, resultHead{}, err
		}
		if missing := missingCapabilities(req.ClientCapabilities, head.InputRequests); missing != nil {
			return nil, resultHead{}, missing
		}
		if req.Stateless {
			if head.RequestState != nil {
				out = setMember(out, "requestState", r.sealer.seal(binding, *head.RequestState))
			}
			return out, head, nil
		}
		if round >= r.opts.MaxInputRounds {
			return nil, resultHead{}, &BadResultError{Msg: fmt.Sprintf("still asking for input after %d rounds", round)}
		}
		// A legacy client: perform the requests, then call again.
		keys := make([]string, 0, len(head.InputRequests))
		for k := range head.InputRequests {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		responses := make(map[string]json.RawMessage, len(keys))
		for _, k := range keys {
			ir := head.InputRequests[k]
			params := ir.Params
			if isNull(params) {
				params = json.RawMessage("{}")
			}
			res, err := client.Request(ctx, ir.Method, params)
			if err != nil {
				return nil, resultHead{}, &ClientRequestError{Key: k, Method: ir.Method, Err: err}
			}
			responses[k] = res
		}
		ec.InputResponses, _ = json.Marshal(responses)
		ec.RequestState = head.RequestState
	}
}

// mayRequest checks every input request of an input_required result
// against the plugin's grants (hostapi.Grants.MayRequest, the check of the
// blocking host calls too), in key order: the first one refused is an
// *InputRequestError, and nothing is sent to the client.
func (pl *Plugin) mayRequest(reqs map[string]inputRequest) error {
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := pl.spec.Grants.MayRequest(reqs[k].Method); err != nil {
			return &InputRequestError{Plugin: pl.name, Key: k, Method: reqs[k].Method, Err: err}
		}
	}
	return nil
}

// missingCapabilities returns the capabilities the input requests need
// that the client did not declare (in its capabilities object caps), or
// nil.
func missingCapabilities(caps json.RawMessage, reqs map[string]inputRequest) *MissingCapabilityError {
	client := mcpreq.Client{ClientCapabilities: caps}
	var missing map[string]json.RawMessage
	for _, ir := range reqs {
		c := mcpreq.CapabilityFor(ir.Method)
		if c == "" || client.HasClientCapability(c) {
			continue // "": refused by mayRequest
		}
		if missing == nil {
			missing = map[string]json.RawMessage{}
		}
		missing[c] = json.RawMessage("{}")
	}
	if missing == nil {
		return nil
	}
	return &MissingCapabilityError{Required: missing}
}

// callGuest runs one round of a call on pl's pool: a wasmcp/1 plugin gets
// the envelope written out in buf, the Extism adapter reads it as it is
// (nothing to parse back).
func (pl *Plugin) callGuest(ctx context.Context, h runtime.Host, method string, params json.RawMessage, ec *envContext, buf *[]byte, opts *runtime.CallOptions) (uint32, []byte, error) {
	pool := pl.pool
	if w, ok := pool.(*pendingPool); ok { // listed from its cached manifest
		var err error
		if pool, err = w.wait(ctx); err != nil {
			return 0, nil, err
		}
	}
	switch x := pool.(type) {
	case *extismPool:
		return x.call(ctx, method, params, ec, h, opts)
	case *componentPool:
		return x.call(ctx, method, params, h, opts)
	}
	*buf = buildEnvelope(*buf, method, params, ec)
	return pool.Call(ctx, *buf, h, opts)
}

// buildEnvelope writes the request envelope of ABI §3 into buf. params
// and the raw members of ec are valid JSON (from the engine, or marshalled
// by the host), so they are copied as they are.
func buildEnvelope(buf []byte, method string, params json.RawMessage, ec *envContext) []byte {
	if isNull(params) {
		params = json.RawMessage("{}")
	}
	b := append(buf[:0], `{"method":`...)
	b = jsonscan.AppendString(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	b = append(b, `,"context":{`...)
	sep := false
	member := func(key string) {
		if sep {
			b = append(b, ',')
		}
		sep = true
		b = append(b, '"')
		b = append(b, key...)
		b = append(b, `":`...)
	}
	if ec.ProtocolVersion != "" {
		member("protocolVersion")
		b = jsonscan.AppendString(b, ec.ProtocolVersion)
	}
	for _, m := range [...]struct {
		key string
		raw json.RawMessage
	}{
		{"clientInfo", ec.ClientInfo},
		{"clientCapabilities", ec.ClientCapabilities},
		{"progressToken", ec.ProgressToken},
		{"inputResponses", ec.InputResponses},
	} {
		if len(m.raw) > 0 {
			member(m.key)
			b = append(b, m.raw...)
		}
	}
	if ec.RequestState != nil {
		member("requestState")
		b = jsonscan.AppendString(b, *ec.RequestState)
	}
	return append(b, "}}"...)
}

// envelopes recycles envelope buffers: the runtime reads the envelope only
// while the call runs.
var envelopes = sync.Pool{New: func() any { return new([]byte) }}

// callClient is the hostapi.Client of one call.
type callClient struct {
	reg     *Registry
	plugin  *Plugin
	req     *Request
	foreign atomic.Int32    // resource updates dropped (NotifyResourceUpdated)
	binding hostapi.Binding // the call's bound host, allocated with it
}

var _ hostapi.Client = (*callClient)(nil)

func (c *callClient) Log(level, logger string, data json.RawMessage) {
	if c.req.Caller != nil {
		c.req.Caller.Log(level, logger, data)
	}
}

func (c *callClient) Progress(progress float64, total *float64, message string) {
	if c.req.Caller != nil {
		c.req.Caller.Progress(progress, total, message)
	}
}

func (c *callClient) NotifyListChanged(kind string) {
	// The plugin's instance is busy with this call: describe it again
	// from another goroutine (coalesced).
	c.reg.listChanged(c.plugin, kind)
}

// NotifyResourceUpdated passes on a report for a URI the plugin serves
// (the one resources/read would route to it: its static resource, or a
// match of its template that no other plugin serves statically); any
// other is dropped, the first of each call with a log line.
func (c *callClient) NotifyResourceUpdated(uri string) {
	if c.reg.opts.OnResourceUpdated == nil || uri == "" || strings.ContainsAny(uri, "\r\n") {
		return
	}
	if owner := c.reg.cat.Load().owner(uri); owner == nil || owner.rt != c.plugin.rt {
		if c.foreign.Add(1) == 1 {
			c.plugin.log.Warn("dropped a resource update for a URI the plugin does not serve", "uri", truncate([]byte(uri), 200))
		}
		return
	}
	c.reg.opts.OnResourceUpdated(uri)
}

func (c *callClient) CloseStream() {
	if c.req.Caller != nil {
		c.req.Caller.CloseStream()
	}
}

func (c *callClient) StartTask() {
	if c.req.Caller != nil {
		c.req.Caller.StartTask()
	}
}

func (c *callClient) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if c.req.Caller == nil {
		return nil, hostapi.ErrUnsupported
	}
	// Whether the request can carry a client request at all (not on
	// 2026-07-28) and whether the client declared the capability the
	// method needs are the protocol engine's to check (Caller.Request
	// answers hostapi.ErrUnsupported when not).
	return c.req.Caller.Request(ctx, method, params)
}
