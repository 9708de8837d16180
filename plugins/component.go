package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/hostapi/wasip2"
	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/runtime"
	rcomp "github.com/wasmcp/wasmcp/runtime/component"
)

// This file serves a WebAssembly component (Component Model, WASI 0.2)
// as a plugin: its exported functions are its tools, named, described and
// typed as Wassette exposes them (component.World.Tools), and it is
// presented to the registry as a wasmcp/1 plugin, as Extism plugins are,
// so that prefixes, scopes, collisions, schemas, limits, pools and
// reloads are those of every plugin:
//
//	describe    a manifest of the tools the mapping gives (no guest call)
//	tools/call  JSON arguments -> the function's parameters (component.Tool.Args,
//	            after the registry has checked them against inputSchema),
//	            runtime.Pool.CallComponent, the result -> text content plus
//	            structuredContent ({"result": value}); an err of a result<T, E>
//	            is an isError result whose text is E
//
// Arguments that pass the schema but not the function's types (a 64-bit
// integer past what JSON Schema bounds, an invalid char) are a -32602
// error; a guest failure is a runtime.Error, answered as for every plugin
// (a trap as a tool error, a deadline as -32001). A component serves
// tools only: other methods answer -32601.

// ABIComponent is Plugin.ABI of a component plugin.
const ABIComponent = "component"

// wasiHost builds what a component plugin's imports need, the one place
// the WASI 0.2 host comes in: it implements a component's imports with the WASI 0.2 host of
// package hostapi/wasip2: each instance gets its own wasip2.State, with
// the plugin's granted environment (wasi:cli/environment), mounts
// (wasi:filesystem preopens, each an os.Root), config values
// (wasi:config/store) and its stdout and stderr going to the plugin's
// log line by line, and wasi:http requests through rt's hostapi.Host
// (set before the pool makes an instance), under the plugin's http
// grants and http/fetch's address policy. An import the host does not
// implement refuses the component at load, naming it.
func wasiHost(c *component.Component, spec Spec, log *slog.Logger, rt *pluginRuntime) (*rcomp.Host, func() (runtime.InstanceState, error), error) {
	out := spec.Sandbox.Output
	stdout, stderr := io.Writer(&lineLog{log: log, stream: "stdout", w: out}), io.Writer(&lineLog{log: log, stream: "stderr", w: out})
	state := func() (runtime.InstanceState, error) {
		s := &wasiState{}
		opts := wasip2.Options{Stdout: stdout, Stderr: stderr, Env: spec.Sandbox.Env, Config: spec.Grants.Config}
		if rt.host != nil {
			opts.HTTP = rt.host
		}
		for _, m := range spec.Sandbox.Mounts {
			root, err := os.OpenRoot(m.HostPath)
			if err != nil {
				s.closeRoots()
				return nil, fmt.Errorf("mount %s: %w", m.GuestPath, err)
			}
			s.roots = append(s.roots, root)
			opts.Mounts = append(opts.Mounts, wasip2.Mount{Root: root, Guest: m.GuestPath, ReadOnly: m.ReadOnly})
		}
		s.st = wasip2.New(opts)
		return s, nil
	}
	host := wasip2.Host()
	for _, name := range []string{"wasi:cli/exit#exit", "wasi:cli/exit#exit-with-code"} {
		if f := host.Funcs[name]; f != nil {
			host.Funcs[name] = func(ctx context.Context, args []any) (any, error) {
				v, err := f(ctx, args)
				var ee *wasip2.ExitError
				if errors.As(err, &ee) {
					// Classified as a core plugin's proc_exit is.
					return v, runtime.ExitError(uint32(ee.Code))
				}
				return v, err
			}
		}
	}
	return host, state, nil
}

// wasiState is a component instance's runtime.InstanceState: its
// wasip2.State and the roots of its mounts.
type wasiState struct {
	st    *wasip2.State
	roots []*os.Root
}

func (s *wasiState) Bind(ctx context.Context) context.Context { return wasip2.WithState(ctx, s.st) }

func (s *wasiState) Close() error {
	err := s.st.Close()
	s.closeRoots()
	return err
}

func (s *wasiState) closeRoots() {
	for _, r := range s.roots {
		_ = r.Close()
	}
}

// lineLog is a component's stdout or stderr: wasip2 writes one line per
// Write; each becomes a log line of the plugin (or a line of the spec's
// Sandbox.Output, when it has one). Never the MCP stream.
type lineLog struct {
	log    *slog.Logger
	stream string
	w      io.Writer
}

func (l *lineLog) Write(b []byte) (int, error) {
	if l.w != nil {
		_, _ = l.w.Write(append(append([]byte(l.stream+": "), b...), '\n'))
		return len(b), nil
	}
	l.log.Info("plugin output", "stream", l.stream, "line", strings.ToValidUTF8(string(b), "?"))
	return len(b), nil
}

// componentPool presents a component to the registry (see above).
type componentPool struct {
	*runtime.Pool
	name    string
	tools   []component.Tool
	byName  map[string]*component.Tool // by the component's own tool name
	skipped []component.Skipped
	strs    map[*component.Tool]bool // tools of string parameters returning a string (stringCall)
}

// loadComponent compiles and describes the component wasm.
func loadComponent(ctx context.Context, d loadDeps, spec Spec, name, digest string, wasm []byte) (_ *Plugin, err error) {
	compiled := func() {
		if d.compiled != nil {
			d.compiled()
			d.compiled = nil
		}
	}
	defer compiled()
	c, err := component.Decode(wasm)
	if err != nil {
		return nil, err
	}
	p := &Plugin{name: name, spec: spec, digest: digest, rt: &pluginRuntime{}}
	defer func() {
		if err != nil {
			p.close(ctx)
		}
	}()
	p.log = d.log.With("plugin", name)
	host, state, err := wasiHost(c, spec, p.log, p.rt)
	if err != nil {
		return nil, fmt.Errorf("component host: %w", err)
	}
	if host.MaxLift == 0 {
		host.MaxLift = int64(spec.Limits.MaxOutput)
		if host.MaxLift <= 0 {
			host.MaxLift = int64(runtime.DefaultLimits().MaxOutput)
		}
	}
	p.rt.module, err = d.engine.CompileComponent(ctx, name, len(wasm), c, host)
	compiled()
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	p.rt.host, err = hostapi.New(hostapi.Options{Plugin: name, Grants: spec.Grants, KV: d.kv, HTTP: d.http, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("host functions: %w", err)
	}
	sb := spec.Sandbox
	sb.ComponentState = state // reads p.rt.host: set first
	p.rt.pool, err = p.rt.module.NewPool(spec.Limits, sb)
	if err != nil {
		return nil, fmt.Errorf("instance pool: %w", err)
	}
	x := &componentPool{Pool: p.rt.pool, name: name, byName: map[string]*component.Tool{}}
	x.tools, x.skipped = c.Describe().Tools()
	for i := range x.tools {
		t := &x.tools[i]
		x.byName[t.Name] = t
		if stringsOnly(t) {
			if x.strs == nil {
				x.strs = map[*component.Tool]bool{}
			}
			x.strs[t] = true
		}
	}
	for _, s := range x.skipped {
		p.log.Info("component function not served as a tool", "function", s.String())
	}
	p.pool, p.host = x, p.rt.host
	out, err := p.describeRaw(ctx, d.manifest)
	if err != nil {
		return nil, err
	}
	cacheManifest(d, p, out)
	return p, nil
}

// Call implements callPool for the describe envelope: the manifest of the
// component's tools.
func (x *componentPool) Call(ctx context.Context, envelope []byte, h runtime.Host, _ *runtime.CallOptions) (uint32, []byte, error) {
	if string(envelope) != string(describeEnvelope) {
		return 0, nil, errors.New("component adapter: only the describe envelope comes as bytes")
	}
	type tool struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	tools := make([]tool, len(x.tools))
	for i, t := range x.tools {
		tools[i] = tool{t.Name, t.Description, t.InputSchema, t.OutputSchema}
	}
	b, err := json.Marshal(map[string]any{"abi": abi.Version, "name": x.name, "tools": tools})
	if err != nil {
		return 0, nil, err
	}
	return abi.StatusOK, b, nil
}

// call runs one tools/call on the component.
func (x *componentPool) call(ctx context.Context, method string, params json.RawMessage, h runtime.Host, opts *runtime.CallOptions) (uint32, []byte, error) {
	if method != abi.MethodToolsCall {
		return abi.StatusError, rpcError(-32601, "a component serves tools only"), nil
	}
	var name string
	if v, ok := jsonscan.Member(params, "name"); ok {
		name, _ = jsonscan.String(v)
	}
	t := x.byName[name]
	if t == nil {
		return abi.StatusError, rpcError(-32602, "Unknown tool: "+name), nil
	}
	raw, _ := jsonscan.Member(params, "arguments")
	if x.strs[t] {
		if args, ok := stringArgs(t, raw); ok {
			return x.stringCall(ctx, t, args, h, opts)
		}
	}
	args, err := t.Args(raw)
	if err != nil {
		return abi.StatusError, rpcError(-32602, err.Error()), nil
	}
	v, err := x.CallComponent(ctx, t.CallName(), args, h, opts)
	if errors.Is(err, runtime.ErrComponentArgs) {
		return abi.StatusError, rpcError(-32602, err.Error()), nil
	}
	if err != nil {
		return 0, nil, err
	}
	out, err := t.Output(v)
	if err != nil {
		return abi.StatusError, rpcError(-32603, fmt.Sprintf("%s returned a value with no JSON form: %v", name, err)), nil
	}
	res := struct {
		Content           []map[string]string `json:"content"`
		StructuredContent json.RawMessage     `json:"structuredContent,omitempty"`
		IsError           bool                `json:"isError,omitempty"`
	}{Content: []map[string]string{}, IsError: out.IsError}
	if t.Result != nil {
		res.Content = append(res.Content, map[string]string{"type": "text", "text": out.Text})
		if !out.IsError {
			res.StructuredContent = out.Structured
		}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return 0, nil, err
	}
	if limit := x.Limits().MaxOutput; len(b) > limit {
		return 0, nil, &runtime.Error{Kind: runtime.KindOutput, Message: fmt.Sprintf("plugin output exceeds %d bytes", limit)}
	}
	return abi.StatusOK, b, nil
}

// stringsOnly reports whether t's parameters are strings and its result
// is one: the common shape, which stringArgs and stringCall convert
// without encoding/json (a third of a call's cost otherwise).
func stringsOnly(t *component.Tool) bool {
	if t.Result == nil || t.Result.Kind != component.String {
		return false
	}
	for _, p := range t.Params {
		if p.Type == nil || p.Type.Kind != component.String {
			return false
		}
	}
	return true
}

// stringArgs is Tool.Args for a stringsOnly tool: each parameter is the
// last member of that name (as encoding/json takes it). ok is false when
// one is missing or not a string: Tool.Args then says which.
func stringArgs(t *component.Tool, raw []byte) ([]any, bool) {
	it, ok := jsonscan.NewObjectIter(raw)
	if !ok {
		return nil, false
	}
	vals := make([][]byte, len(t.Params))
	for {
		k, v, ok := it.Next()
		if !ok {
			break
		}
		for i, p := range t.Params {
			if jsonscan.KeyIs(k, p.Name) {
				vals[i] = v
			}
		}
	}
	args := make([]any, len(t.Params))
	for i, v := range vals {
		s, ok := jsonscan.String(v)
		if v == nil || !ok {
			return nil, false
		}
		args[i] = s
	}
	return args, true
}

// stringCall is call's end for a stringsOnly tool: the result written as
// Tool.Output and call would write it, with the text as it is and
// {"result": text} as structuredContent.
func (x *componentPool) stringCall(ctx context.Context, t *component.Tool, args []any, h runtime.Host, opts *runtime.CallOptions) (uint32, []byte, error) {
	v, err := x.CallComponent(ctx, t.CallName(), args, h, opts)
	if errors.Is(err, runtime.ErrComponentArgs) {
		return abi.StatusError, rpcError(-32602, err.Error()), nil
	}
	if err != nil {
		return 0, nil, err
	}
	text, ok := v.(string)
	if !ok {
		return abi.StatusError, rpcError(-32603, fmt.Sprintf("%s returned %T, not a string", t.Name, v)), nil
	}
	b := make([]byte, 0, 2*len(text)+72)
	b = append(b, `{"content":[{"text":`...)
	b = jsonscan.AppendString(b, text)
	b = append(b, `,"type":"text"}],"structuredContent":{"result":`...)
	b = jsonscan.AppendString(b, text)
	b = append(b, "}}"...)
	if limit := x.Limits().MaxOutput; len(b) > limit {
		return 0, nil, &runtime.Error{Kind: runtime.KindOutput, Message: fmt.Sprintf("plugin output exceeds %d bytes", limit)}
	}
	return abi.StatusOK, b, nil
}

// Summary says in one line what a component's world exports and how many
// tools it maps to.
func Summary(w *component.World) string {
	names := make([]string, 0, len(w.Exports))
	for _, e := range w.Exports {
		if e.Type == nil {
			names = append(names, e.Name)
		}
	}
	tools, _ := w.Tools()
	if len(names) == 0 {
		return fmt.Sprintf("a component exporting no functions (%s)", count(len(w.Imports), "import"))
	}
	return fmt.Sprintf("a component exporting %s (%s, %s)", strings.Join(names, ", "), count(len(tools), "tool"), count(len(w.Imports), "import"))
}

func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ReadComponent reads the plugin file at path as a load reads it (a
// regular file of at most limit bytes; 0 means the default) and decodes
// it when it is a component. It returns nil and no error for a file that
// is not a component.
func ReadComponent(path string, limit uint64) (*component.Component, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	head := make([]byte, 8)
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || !component.IsComponent(head) {
		return nil, nil, nil
	}
	wasm, err := readModule(path, limit)
	if err != nil {
		return nil, nil, err
	}
	c, err := component.Decode(wasm)
	if err != nil {
		return nil, nil, err
	}
	return c, wasm, nil
}
