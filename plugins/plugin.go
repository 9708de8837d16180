package plugins

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/runtime"
)

// Plugin is one loaded plugin: its compiled module, its instance pool, its
// host functions and the items it exposes. A Plugin is immutable once
// loaded; a reload makes a new one. It is safe for concurrent use.
type Plugin struct {
	name     string
	spec     Spec
	digest   string
	manifest *Manifest

	// rt is shared by the versions of a plugin that differ only by a
	// re-describe; a reload makes a new one.
	rt   *pluginRuntime
	pool callPool // rt.pool, or an adapter for an Extism plugin (extism.go)
	host *hostapi.Host
	log  *slog.Logger

	tools     []*toolEntry
	prompts   []*promptEntry
	resources []*resourceEntry
	templates []*templateEntry
	// dropped are the app csp origins narrowed away at load (apps.go).
	dropped []DroppedDomain
}

// Name returns the plugin's name.
func (p *Plugin) Name() string { return p.name }

// Manifest returns the plugin's manifest as it described itself.
func (p *Plugin) Manifest() *Manifest { return p.manifest }

// ToolNames returns the names clients call the plugin's tools by (its
// prefix included), in manifest order.
func (p *Plugin) ToolNames() []string {
	names := make([]string, len(p.tools))
	for i, t := range p.tools {
		names[i] = t.name
	}
	return names
}

// SHA256 returns the hex digest of the plugin's .wasm file.
func (p *Plugin) SHA256() string { return p.digest }

// Spec returns the configuration the plugin was loaded with.
func (p *Plugin) Spec() Spec { return p.spec }

// Module returns the compiled module (imports, exports, mode).
func (p *Plugin) Module() *runtime.Module { return p.rt.module }

// Stats returns the plugin's pool statistics.
func (p *Plugin) Stats() runtime.PoolStats { return p.pool.Stats() }

// pluginRuntime is the compiled module, instance pool and host functions
// of one plugin file.
type pluginRuntime struct {
	module *runtime.Module
	pool   *runtime.Pool
	host   *hostapi.Host

	// changed holds the list kinds (bits of changeKinds) reported changed
	// that no re-describe has taken yet; describing is set while a
	// re-describe loop runs (see Registry.listChanged).
	changed    atomic.Uint32
	describing atomic.Bool
}

// close releases the plugin's pool and module; in-flight calls finish first.
func (p *Plugin) close(ctx context.Context) {
	if p.rt.pool != nil {
		p.rt.pool.Close(ctx)
	}
	if p.rt.module != nil {
		p.rt.module.Close(ctx)
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type toolEntry struct {
	plugin  *Plugin
	name    string // exposed (prefixed) name
	orig    string // the plugin's own name
	raw     json.RawMessage
	input   *validator
	output  *validator
	headers bool   // inputSchema has x-mcp-header annotations
	appOnly bool   // _meta.ui.visibility without "model" (apps.go)
	appURI  string // _meta.ui.resourceUri as exposed, "" for a tool without an app
}

type promptEntry struct {
	plugin *Plugin
	name   string
	orig   string
	raw    json.RawMessage
	args   []promptArg
}

type promptArg struct {
	Name     string `json:"name"`
	Required bool   `json:"required"`
}

type resourceEntry struct {
	plugin *Plugin
	uri    string // as exposed (a ui:// URI carries the plugin's prefix)
	orig   string // the plugin's own URI when it differs, else ""
	raw    json.RawMessage
}

type templateEntry struct {
	plugin *Plugin
	tmpl   *URITemplate
	raw    json.RawMessage
}

// loadDeps is what loading needs besides the spec.
type loadDeps struct {
	engine   *runtime.Engine
	kv       hostapi.KV
	http     hostapi.HTTPPolicy
	log      *slog.Logger
	manifest ManifestLimits
	// compiled, if set, is called once the module has compiled (or failed
	// to): the registry's bound on concurrent loads covers compilation,
	// the CPU-heavy part, not the guest's describe, which the call's
	// deadline and the CPU scheduler bound like any call.
	compiled func()
}

// ErrDigestMismatch is returned when a plugin file does not match its
// sha256 pin.
var ErrDigestMismatch = errors.New("sha256 mismatch")

// load verifies, compiles and describes one plugin: wasm is its file's
// content, digest digestOf(wasm).
func load(ctx context.Context, d loadDeps, spec Spec, wasm []byte, digest string) (_ *Plugin, err error) {
	if spec.SHA256 != "" && !strings.EqualFold(spec.SHA256, digest) {
		return nil, fmt.Errorf("%w: file has %s, config pins %s", ErrDigestMismatch, digest, spec.SHA256)
	}
	name := pluginName(spec)
	if component.IsComponent(wasm) {
		return loadComponent(ctx, d, spec, name, digest, wasm)
	}
	p := &Plugin{name: name, spec: spec, digest: digest, rt: &pluginRuntime{}}
	defer func() {
		if err != nil {
			p.close(ctx)
		}
	}()
	p.rt.module, err = d.engine.Compile(ctx, name, wasm)
	if d.compiled != nil {
		d.compiled()
	}
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	p.log = d.log.With("plugin", name)
	sb := spec.Sandbox
	if sb.Output == nil {
		sb.Output = &logWriter{log: p.log}
	}
	p.rt.pool, err = p.rt.module.NewPool(spec.Limits, sb)
	if err != nil {
		return nil, fmt.Errorf("instance pool: %w", err)
	}
	// hostapi adds the plugin attribute itself: give it the registry's
	// logger, not p.log, or every host log line names the plugin twice.
	p.rt.host, err = hostapi.New(hostapi.Options{Plugin: name, Grants: spec.Grants, KV: d.kv, HTTP: d.http, Logger: d.log})
	if err != nil {
		return nil, fmt.Errorf("host functions: %w", err)
	}
	p.pool, p.host = newCallPool(p.rt.module, p.rt.pool), p.rt.host
	out, err := p.describeRaw(ctx, d.manifest)
	if err != nil {
		return nil, err
	}
	cacheManifest(d, p, out)
	return p, nil
}

// pluginName is the name of spec's plugin: its configured name, else its
// file's base name.
func pluginName(spec Spec) string {
	if spec.Name != "" {
		return spec.Name
	}
	return strings.TrimSuffix(filepath.Base(spec.Path), filepath.Ext(spec.Path))
}

// describeEnvelope is the request a plugin gets to describe itself.
var describeEnvelope = []byte(`{"method":"` + abi.MethodDescribe + `","params":{},"context":{}}`)

// describe asks the plugin for its manifest and indexes what it exposes.
func (p *Plugin) describe(ctx context.Context, limits ManifestLimits) error {
	_, err := p.describeRaw(ctx, limits)
	return err
}

// describeRaw is describe; it returns the plugin's answer.
func (p *Plugin) describeRaw(ctx context.Context, limits ManifestLimits) ([]byte, error) {
	status, out, err := p.pool.Call(ctx, describeEnvelope, p.host.Bind(nil), nil)
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	if status != abi.StatusOK {
		return nil, fmt.Errorf("describe: plugin answered status %d: %s", status, truncate(out, 200))
	}
	m, err := ParseManifest(out, limits)
	if errors.Is(err, ErrManifestLimit) || errors.Is(err, ErrManifestEncoding) {
		return nil, fmt.Errorf("describe: plugin %q: %w", p.name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("describe: %w", err)
	}
	p.manifest = m
	return out, p.index()
}

// index builds the plugin's entries from its manifest: prefixed names,
// compiled schemas, parsed templates.
func (p *Plugin) index() error {
	var errs []error
	m := p.manifest
	p.tools = p.tools[:0]
	seen := map[string]string{}
	for _, raw := range m.Tools {
		t, err := p.toolEntry(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if t == nil {
			continue // left out by the operator (Spec.Tools, Spec.Hide)
		}
		if other, dup := seen[t.name]; dup {
			errs = append(errs, fmt.Errorf("tool %q: exposed as %q, as is tool %q (see the plugin's override)", t.orig, t.name, other))
			continue
		}
		seen[t.name] = t.orig
		p.tools = append(p.tools, t)
	}
	p.prompts = p.prompts[:0]
	for _, raw := range m.Prompts {
		var pr struct {
			Name      string      `json:"name"`
			Arguments []promptArg `json:"arguments"`
		}
		if err := json.Unmarshal(raw, &pr); err != nil {
			errs = append(errs, fmt.Errorf("prompt: %w", err))
			continue
		}
		e := &promptEntry{plugin: p, orig: pr.Name, name: p.spec.Prefix + pr.Name, args: pr.Arguments}
		if err := checkName("prompt", e.name); err != nil {
			errs = append(errs, err)
			continue
		}
		e.raw = raw
		if p.spec.Prefix != "" {
			e.raw = setMember(raw, "name", e.name)
		}
		p.prompts = append(p.prompts, e)
	}
	p.resources = p.resources[:0]
	for _, raw := range m.Resources {
		uri, _ := itemString(raw, "uri")
		p.resources = append(p.resources, &resourceEntry{plugin: p, uri: uri, raw: raw})
	}
	p.templates = p.templates[:0]
	vars := 0
	for _, raw := range m.ResourceTemplates {
		s, _ := itemString(raw, "uriTemplate")
		t, err := ParseURITemplate(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if vars += t.Vars(); vars > MaxPluginTemplateVars {
			errs = append(errs, fmt.Errorf("resource templates: more than %d variables in all (at most %d per plugin)", MaxPluginTemplateVars, MaxPluginTemplateVars))
			break
		}
		p.templates = append(p.templates, &templateEntry{plugin: p, tmpl: t, raw: raw})
	}
	p.indexApps()
	return errors.Join(errs...)
}

// toolEntry indexes the tool raw describes, with the operator's
// override applied; nil when the operator left it out.
func (p *Plugin) toolEntry(raw json.RawMessage) (*toolEntry, error) {
	var t struct {
		Name         string          `json:"name"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	if !p.spec.exposes(t.Name) {
		return nil, nil
	}
	exposed := t.Name
	o := p.spec.Override[t.Name]
	if o.Name != "" {
		exposed = o.Name
	}
	e := &toolEntry{plugin: p, orig: t.Name, name: p.spec.Prefix + exposed, raw: raw}
	if err := checkName("tool", e.name); err != nil {
		return nil, err
	}
	if o.Description != "" {
		e.raw = setMember(e.raw, "description", o.Description)
	}
	if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
		e.raw = setMember(e.raw, "inputSchema", t.InputSchema)
	}
	var err error
	if e.input, err = compileSchema(t.InputSchema, "arguments"); err != nil {
		return nil, fmt.Errorf("tool %q: inputSchema: %w", t.Name, err)
	}
	if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
		if e.output, err = compileSchema(t.OutputSchema, "structuredContent"); err != nil {
			return nil, fmt.Errorf("tool %q: outputSchema: %w", t.Name, err)
		}
	}
	e.headers = bytes.Contains(t.InputSchema, []byte(`"x-mcp-header"`))
	if e.name != t.Name {
		e.raw = setMember(e.raw, "name", e.name)
	}
	return e, nil
}

// setMember returns obj with member key set to v (any JSON-encodable
// value), keeping every other member.
func setMember(obj json.RawMessage, key string, v any) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return obj
	}
	b, err := json.Marshal(v)
	if err != nil {
		return obj
	}
	m[key] = b
	out, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return out
}

func truncate(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > n {
		s = s[:n] + "..."
	}
	return s
}

// logWriter turns a plugin's stdout/stderr into server log lines.
type logWriter struct {
	log *slog.Logger
	mu  sync.Mutex
	buf []byte
}

func (w *logWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, b...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			if len(w.buf) > 4096 {
				w.flush()
			}
			return len(b), nil
		}
		w.log.Info("plugin output", "line", strings.ToValidUTF8(string(w.buf[:i]), "?"))
		w.buf = w.buf[i+1:]
	}
}

func (w *logWriter) flush() {
	if len(w.buf) > 0 {
		w.log.Info("plugin output", "line", strings.ToValidUTF8(string(w.buf), "?"))
		w.buf = w.buf[:0]
	}
}
