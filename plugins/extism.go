package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/runtime"
)

// This file presents an Extism plugin (runtime.Extism: a module importing
// extism:host/env) to the registry as a wasmcp/1 plugin: the wasmcp/1
// envelopes are translated in Go to the hyper-mcp interfaces and back, so
// that names, prefixes, collisions, schemas, limits, pools, reloads and the
// input_required flow are exactly those of wasmcp/1 plugins.
//
//	ABI        exports                         describe                 tools/call
//	extism/v1  call + describe (mcp.run too)   describe("") -> tools    call({"params": params})
//	extism/v2  list_tools, call_tool, ...      list_* of each present   call_tool({"request", "context"})
//
// v2 also maps prompts/get to get_prompt, resources/read to read_resource
// and completion/complete to complete (with "ref/" cut from ref.type, as
// hyper-mcp does); its requests carry {"request": <MCP params>, "context":
// {"id", "_meta"}}, id a per-plugin counter and _meta the progressToken.
// A non-zero return (error_set's message) is, for tools/call, an isError
// result the model can read and, for other methods, a -32603 error.
//
// The extism:host/user functions become the wasmcp/1 host methods, gated
// by the same grants: notify_progress -> progress, notify_logging_message
// -> log, notify_resource_updated, notify_{tool,resource,prompt}_list_changed
// -> notify/*, create_elicitation, create_message, list_roots -> the
// blocking client requests. notify_url_elicitation_completed is accepted
// and dropped (wasmcp/1 has no such notification). On a 2026-07-28 request
// a blocking request the connection cannot carry stops the guest and
// becomes an input_required result; the retry runs the call again and
// replays the answers in order (the earlier ones from the sealed
// requestState, the new one from inputResponses).

// The Extism interfaces, as Plugin.ABI names them.
const (
	ABIWasmcp   = "wasmcp/1"
	ABIExtismV1 = "extism/v1"
	ABIExtismV2 = "extism/v2"
)

// callPool is what a Plugin runs its calls on: a runtime.Pool for wasmcp/1
// plugins, an extismPool for Extism ones.
type callPool interface {
	Call(ctx context.Context, input []byte, h runtime.Host, opts *runtime.CallOptions) (uint32, []byte, error)
	Stats() runtime.PoolStats
	Limits() runtime.Limits
}

// extismPool translates wasmcp/1 envelopes for an Extism plugin.
type extismPool struct {
	*runtime.Pool
	abi     string
	exports []string
	ids     atomic.Int64
}

// pluginABI names the interface a module speaks.
func pluginABI(m *runtime.Module) string {
	if m.Mode() == runtime.Component {
		return ABIComponent
	}
	if m.Mode() != runtime.Extism {
		return ABIWasmcp
	}
	ex := m.ExtismExports()
	if slices.Contains(ex, "call") && slices.Contains(ex, "describe") {
		return ABIExtismV1
	}
	return ABIExtismV2
}

// newCallPool returns the pool the registry calls for module m.
func newCallPool(m *runtime.Module, p *runtime.Pool) callPool {
	if m.Mode() != runtime.Extism {
		return p
	}
	return &extismPool{Pool: p, abi: pluginABI(m), exports: m.ExtismExports()}
}

// ABI names the interface the plugin speaks: ABIWasmcp, ABIExtismV1,
// ABIExtismV2 or ABIComponent; "" while it is listed from its cached
// manifest and not loaded yet.
func (p *Plugin) ABI() string {
	if p.rt.module == nil {
		return "" // listed from its cached manifest, not loaded yet
	}
	return pluginABI(p.rt.module)
}

func (x *extismPool) has(export string) bool { return slices.Contains(x.exports, export) }

// Call implements callPool for the describe envelope, the one request
// that reaches the adapter as bytes; the registry's calls come through
// call, with the envelope before it is written out.
func (x *extismPool) Call(ctx context.Context, envelope []byte, h runtime.Host, _ *runtime.CallOptions) (uint32, []byte, error) {
	if !bytes.Equal(envelope, describeEnvelope) {
		return 0, nil, errors.New("extism adapter: only the describe envelope comes as bytes")
	}
	return x.describe(ctx, h)
}

// call runs one request on the Extism plugin: method, params and ec are
// what a wasmcp/1 plugin would get as its envelope (ABI §3).
func (x *extismPool) call(ctx context.Context, method string, params json.RawMessage, ec *envContext, h runtime.Host, opts *runtime.CallOptions) (uint32, []byte, error) {
	xh := &extismHost{Host: h, stateless: ec.stateless, caps: ec.ClientCapabilities}
	if err := xh.restore(ec.RequestState, ec.InputResponses); err != nil {
		return abi.StatusError, rpcError(-32602, err.Error()), nil
	}
	var export string
	var input []byte
	if isNull(params) {
		params = json.RawMessage("{}")
	}
	switch {
	case x.abi == ABIExtismV1 && method == abi.MethodToolsCall:
		export = "call"
		input = append(append(append(make([]byte, 0, len(params)+12), `{"params":`...), params...), '}')
	case x.abi == ABIExtismV1:
		return abi.StatusError, rpcError(-32601, "an extism/v1 plugin serves tools only"), nil
	default:
		switch method {
		case abi.MethodToolsCall:
			export = "call_tool"
		case abi.MethodPromptsGet:
			export = "get_prompt"
		case abi.MethodResourceRead:
			export = "read_resource"
		case abi.MethodComplete:
			export = "complete"
			params = stripRefPrefix(params)
		default:
			return abi.StatusError, rpcError(-32601, "method not found: "+method), nil
		}
		if !x.has(export) {
			if method == abi.MethodComplete {
				return abi.StatusOK, emptyCompletion, nil
			}
			return abi.StatusError, rpcError(-32601, fmt.Sprintf("the plugin does not export %s", export)), nil
		}
		input = x.request(params, ec.ProgressToken)
	}
	status, out, err := x.CallExport(ctx, export, input, xh, opts)
	if xh.pending != nil {
		// The guest was stopped at a blocking request the client must
		// answer: hand it back as input_required.
		return abi.StatusOK, xh.inputRequired(), nil
	}
	if err != nil {
		return 0, nil, err
	}
	if status == abi.StatusError {
		msg := strings.ToValidUTF8(string(out), "?")
		if method == abi.MethodToolsCall {
			res, _ := json.Marshal(map[string]any{"content": []map[string]string{{"type": "text", "text": msg}}, "isError": true})
			return abi.StatusOK, res, nil
		}
		return abi.StatusError, rpcError(-32603, msg), nil
	}
	return abi.StatusOK, fixContentTypes(out), nil
}

// request builds a v2 input: {"request": params, "context": {"id",
// "_meta"}}; nil params leave out "request" (the list exports).
func (x *extismPool) request(params json.RawMessage, progressToken json.RawMessage) []byte {
	b := make([]byte, 0, len(params)+len(progressToken)+64)
	b = append(b, '{')
	if params != nil {
		b = append(b, `"request":`...)
		b = append(b, params...)
		b = append(b, ',')
	}
	b = append(b, `"context":{"id":`...)
	b = strconv.AppendInt(b, x.ids.Add(1), 10)
	b = append(b, `,"_meta":{`...)
	if len(progressToken) > 0 && string(progressToken) != "null" {
		b = append(b, `"progressToken":`...)
		b = append(b, progressToken...)
	}
	return append(b, "}}}"...)
}

// describe builds a wasmcp/1 manifest from the plugin's lists.
func (x *extismPool) describe(ctx context.Context, h runtime.Host) (uint32, []byte, error) {
	m := map[string]any{"abi": abi.Version}
	if x.abi == ABIExtismV1 {
		var res struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if status, out, err := x.list(ctx, h, "describe", nil, &res); err != nil || status != abi.StatusOK {
			return status, out, err
		}
		m["tools"] = res.Tools
		b, _ := json.Marshal(m)
		return abi.StatusOK, b, nil
	}
	for _, l := range []struct{ export, key, manifestKey string }{
		{"list_tools", "tools", "tools"},
		{"list_prompts", "prompts", "prompts"},
		{"list_resources", "resources", "resources"},
		{"list_resource_templates", "resourceTemplates", "resourceTemplates"},
	} {
		if !x.has(l.export) {
			continue
		}
		var res map[string][]json.RawMessage
		status, out, err := x.list(ctx, h, l.export, x.request(nil, nil), &res)
		if err != nil || status != abi.StatusOK {
			return status, out, err
		}
		if items := res[l.key]; len(items) > 0 {
			m[l.manifestKey] = items
		}
	}
	m["completions"] = x.has("complete")
	b, _ := json.Marshal(m)
	return abi.StatusOK, b, nil
}

// list runs one list export and decodes its result into v.
func (x *extismPool) list(ctx context.Context, h runtime.Host, export string, input []byte, v any) (uint32, []byte, error) {
	if input == nil {
		input = []byte{}
	}
	status, out, err := x.CallExport(ctx, export, input, &extismHost{Host: h}, nil)
	if err != nil {
		return 0, nil, err
	}
	if status != abi.StatusOK {
		return abi.StatusError, rpcError(-32603, fmt.Sprintf("%s failed: %s", export, strings.ToValidUTF8(string(out), "?"))), nil
	}
	if err := json.Unmarshal(out, v); err != nil {
		return abi.StatusError, rpcError(-32603, fmt.Sprintf("%s returned invalid JSON: %v", export, err)), nil
	}
	return abi.StatusOK, nil, nil
}

func rpcError(code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	return b
}

// stripRefPrefix turns ref.type "ref/prompt" into "prompt", as hyper-mcp
// gives it to its plugins.
func stripRefPrefix(params json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil {
		return params
	}
	var ref map[string]json.RawMessage
	if json.Unmarshal(m["ref"], &ref) != nil {
		return params
	}
	var t string
	if json.Unmarshal(ref["type"], &t) != nil || !strings.HasPrefix(t, "ref/") {
		return params
	}
	ref["type"], _ = json.Marshal(strings.TrimPrefix(t, "ref/"))
	m["ref"], _ = json.Marshal(ref)
	out, err := json.Marshal(m)
	if err != nil {
		return params
	}
	return out
}

// fixContentTypes adds "type":"text" to content items that have a text
// and no type (hyper-mcp's Go template emits them so); other results are
// returned as they are, after a scan that allocates nothing.
func fixContentTypes(out []byte) []byte {
	if !untypedContent(out) {
		return out
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(out, &m) != nil {
		return out
	}
	fix := func(item map[string]json.RawMessage) bool {
		if _, ok := item["type"]; !ok {
			if _, ok := item["text"]; ok {
				item["type"] = json.RawMessage(`"text"`)
				return true
			}
		}
		return false
	}
	changed := false
	if raw, ok := m["content"]; ok {
		var items []map[string]json.RawMessage
		if json.Unmarshal(raw, &items) == nil {
			for _, it := range items {
				changed = fix(it) || changed
			}
			m["content"], _ = json.Marshal(items)
		}
	}
	if raw, ok := m["messages"]; ok {
		var msgs []map[string]json.RawMessage
		if json.Unmarshal(raw, &msgs) == nil {
			for _, msg := range msgs {
				var c map[string]json.RawMessage
				if json.Unmarshal(msg["content"], &c) == nil && fix(c) {
					msg["content"], _ = json.Marshal(c)
					changed = true
				}
			}
			m["messages"], _ = json.Marshal(msgs)
		}
	}
	if !changed {
		return out
	}
	b, err := json.Marshal(m)
	if err != nil {
		return out
	}
	return b
}

// untypedContent reports whether result has a content item, or a
// message's content, with a text and no type.
func untypedContent(result []byte) bool {
	untyped := func(item []byte) bool {
		if jsonscan.Kind(item) != 'o' {
			return false
		}
		_, hasType := jsonscan.Member(item, "type")
		_, hasText := jsonscan.Member(item, "text")
		return hasText && !hasType
	}
	if jsonscan.Kind(result) != 'o' || !jsonscan.Valid(result) {
		return false // the scanners need valid JSON; readHead refuses the rest
	}
	if c, ok := jsonscan.Member(result, "content"); ok {
		if it, ok := jsonscan.NewArrayIter(c); ok {
			for v, ok := it.Next(); ok; v, ok = it.Next() {
				if untyped(v) {
					return true
				}
			}
		}
	}
	if ms, ok := jsonscan.Member(result, "messages"); ok {
		if it, ok := jsonscan.NewArrayIter(ms); ok {
			for m, ok := it.Next(); ok; m, ok = it.Next() {
				if c, ok := jsonscan.Member(m, "content"); ok && untyped(c) {
					return true
				}
			}
		}
	}
	return false
}

// extismHost is the runtime.Host of one Extism call: it maps the
// extism:host/user functions to the wasmcp/1 methods of the plugin's
// bound host and replays the answers of earlier input rounds.
type extismHost struct {
	runtime.Host
	stateless bool
	caps      json.RawMessage // the client's capabilities

	answers   []extismAnswer // of earlier rounds, in order
	responses map[string]json.RawMessage
	n         int // blocking requests made so far in this call
	pending   *extismPending
}

type extismAnswer struct {
	Method string          `json:"m"`
	Result json.RawMessage `json:"r"`
}

type extismPending struct {
	key, method string
	params      json.RawMessage
}

// maxExtismRounds bounds the answers a requestState may carry.
const maxExtismRounds = 64

func (xh *extismHost) restore(state *string, responses json.RawMessage) error {
	if state != nil && *state != "" {
		if err := json.Unmarshal([]byte(*state), &xh.answers); err != nil {
			return errors.New("invalid requestState")
		}
		if len(xh.answers) > maxExtismRounds {
			return errors.New("requestState carries too many answers")
		}
	}
	if len(responses) > 0 && string(responses) != "null" {
		if err := json.Unmarshal(responses, &xh.responses); err != nil {
			return errors.New("inputResponses must be an object")
		}
	}
	return nil
}

func (xh *extismHost) inputRequired() []byte {
	state, _ := json.Marshal(xh.answers)
	params := xh.pending.params
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	b, _ := json.Marshal(map[string]any{
		"resultType":    "input_required",
		"inputRequests": map[string]any{xh.pending.key: map[string]any{"method": xh.pending.method, "params": params}},
		"requestState":  string(state),
	})
	return b
}

// hyperMCPFunctions are hyper-mcp's host functions, the module
// extism:host/user, as the runtime calls them (see extismHost.Call for
// what each becomes).
var hyperMCPFunctions = [...]runtime.ExtismFunction{
	{Name: "create_elicitation", Param: true, Result: true},
	{Name: "create_message", Param: true, Result: true},
	{Name: "list_roots", Param: false, Result: true},
	{Name: "notify_logging_message", Param: true, Result: false},
	{Name: "notify_progress", Param: true, Result: false},
	{Name: "notify_resource_updated", Param: true, Result: false},
	{Name: "notify_url_elicitation_completed", Param: true, Result: false},
	{Name: "notify_prompt_list_changed", Param: false, Result: false},
	{Name: "notify_resource_list_changed", Param: false, Result: false},
	{Name: "notify_tool_list_changed", Param: false, Result: false},
}

// ExtismUserFunctions returns hyper-mcp's host functions (the module
// extism:host/user), which an Extism plugin's calls map to the wasmcp/1
// host methods under the plugin's grants: the runtime.Config.ExtismUser
// of an engine whose Extism plugins may import them. An import of any
// other is a load error naming it.
func ExtismUserFunctions() []runtime.ExtismFunction { return slices.Clone(hyperMCPFunctions[:]) }

var listKinds = map[string]string{
	"notify_tool_list_changed":     `{"kind":"tools"}`,
	"notify_resource_list_changed": `{"kind":"resources"}`,
	"notify_prompt_list_changed":   `{"kind":"prompts"}`,
}

// Call maps an extism:host/user function to its wasmcp/1 method; the
// kernel's own calls (config/get, http/fetch) pass through.
func (xh *extismHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	switch method {
	case "notify_progress":
		return xh.Host.Call(ctx, abi.HostProgress, params)
	case "notify_logging_message":
		return xh.Host.Call(ctx, abi.HostLog, params)
	case "notify_resource_updated":
		return xh.Host.Call(ctx, abi.HostNotifyResourceUpdate, params)
	case "notify_tool_list_changed", "notify_resource_list_changed", "notify_prompt_list_changed":
		return xh.Host.Call(ctx, abi.HostNotifyListChanged, []byte(listKinds[method]))
	case "notify_url_elicitation_completed":
		return []byte("{}"), 0
	case "create_elicitation":
		return xh.blocking(ctx, abi.HostElicit, withoutMember(params, "timeout"))
	case "create_message":
		return xh.blocking(ctx, abi.HostSample, params)
	case "list_roots":
		return xh.blocking(ctx, abi.HostRoots, []byte("{}"))
	case abi.HostConfigGet, abi.HostHTTPFetch:
		return xh.Host.Call(ctx, method, params)
	}
	return nil, abi.ErrUnknown
}

// MayCall implements runtime.Granter: the grants of the wasmcp/1 method
// an extism:host/user function maps to, asked of the host it wraps.
func (xh *extismHost) MayCall(method string) bool {
	switch method {
	case "create_elicitation":
		method = abi.HostElicit
	case "create_message":
		method = abi.HostSample
	case "list_roots":
		method = abi.HostRoots
	}
	return runtime.MayCall(xh.Host, method)
}

// blocking performs (or replays) the call's next blocking client request.
// On a 2026-07-28 request whose client declared the capability, a request
// the connection cannot carry stops the guest (pending); a client without
// the capability gets abi.ErrUnsupported back in the guest, as on a
// legacy session.
func (xh *extismHost) blocking(ctx context.Context, method string, params []byte) ([]byte, int32) {
	i := xh.n
	xh.n++
	if i < len(xh.answers) {
		if xh.answers[i].Method != method {
			return nil, abi.ErrFailed // the plugin asked differently this time
		}
		return xh.answers[i].Result, 0
	}
	key := "r" + strconv.Itoa(i)
	if r, ok := xh.responses[key]; ok && i == len(xh.answers) {
		xh.answers = append(xh.answers, extismAnswer{Method: method, Result: r})
		return r, 0
	}
	res, errno := xh.Host.Call(ctx, method, params)
	if errno == abi.ErrUnsupported && xh.stateless && len(xh.answers) < maxExtismRounds &&
		missingCapabilities(xh.caps, map[string]inputRequest{"": {Method: method}}) == nil {
		xh.pending = &extismPending{key: key, method: method, params: append(json.RawMessage(nil), params...)}
		return nil, abi.ErrCanceled // stops the guest
	}
	if errno == 0 {
		xh.answers = append(xh.answers, extismAnswer{Method: method, Result: res})
	}
	return res, errno
}

// withoutMember returns obj without member key.
func withoutMember(obj []byte, key string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	if _, ok := m[key]; !ok {
		return obj
	}
	delete(m, key)
	out, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return out
}
