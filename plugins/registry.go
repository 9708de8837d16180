package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	goruntime "runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/runtime"
)

// Options configures a Registry. Engine is required; zero values of the
// other fields are defaults.
type Options struct {
	// Engine compiles and runs the plugins.
	Engine *runtime.Engine
	// KV is the store behind kv/*; nil denies kv to every plugin.
	KV *hostapi.KVStore
	// HTTP bounds http/fetch for every plugin.
	HTTP hostapi.HTTPPolicy
	// StateKey is the HMAC key that protects requestState; empty means a
	// random key per process (states do not survive a restart).
	StateKey []byte
	// StateTTL is how long a requestState stays valid (default 1h).
	StateTTL time.Duration
	// MaxInputRounds bounds the input_required rounds the host performs
	// for a legacy client in one request (default 8).
	MaxInputRounds int
	// Logger receives load, reload and plugin log lines; nil discards.
	Logger *slog.Logger
	// OnListChanged is called with "tools", "resources" or "prompts" when
	// that list changed (reload, or a plugin's notify/list_changed).
	OnListChanged func(kind string)
	// OnResourceUpdated is called when a plugin reports a changed resource.
	OnResourceUpdated func(uri string)
}

// Registry holds the loaded plugins and routes requests to them. Reads are
// lock-free against an immutable catalog that loads and reloads replace
// whole. It is safe for concurrent use.
type Registry struct {
	opts   Options
	log    *slog.Logger
	sealer *stateSealer
	cat    atomic.Pointer[catalog]
	mu     sync.Mutex // serializes catalog changes
	closed bool
}

// NewRegistry returns an empty Registry.
func NewRegistry(opts Options) (*Registry, error) {
	if opts.Engine == nil {
		return nil, errors.New("plugins: Options.Engine is required")
	}
	if opts.MaxInputRounds <= 0 {
		opts.MaxInputRounds = 8
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	sealer, err := newStateSealer(opts.StateKey, opts.StateTTL)
	if err != nil {
		return nil, err
	}
	r := &Registry{opts: opts, log: opts.Logger, sealer: sealer}
	r.cat.Store(&catalog{})
	return r, nil
}

// LoadError is the failure to load one plugin.
type LoadError struct {
	Spec Spec
	Err  error
}

// Error names the plugin file and the reason.
func (e *LoadError) Error() string { return fmt.Sprintf("plugin %s: %v", e.Spec.Path, e.Err) }

// Unwrap returns the reason.
func (e *LoadError) Unwrap() error { return e.Err }

// Load loads specs, in order, in addition to what is loaded. Plugins that
// load are installed even if others fail; every failure is returned as a
// *LoadError (joined). A plugin that exposes a name, URI or template
// already exposed by another is refused, naming both.
func (r *Registry) Load(ctx context.Context, specs []Spec) error {
	return r.Reload(ctx, append(r.specs(), specs...))
}

// Reload makes the loaded set match specs: new or changed plugins (spec or
// file contents) are loaded, unchanged ones kept, missing ones dropped.
// A plugin that fails to load keeps its previous version serving. Calls in
// flight finish on the version they started with. Clients are told about
// the lists that changed.
func (r *Registry) Reload(ctx context.Context, specs []Spec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errors.New("plugins: registry closed")
	}
	old := r.cat.Load()
	byPath := make(map[string]*Plugin, len(old.plugins))
	for _, p := range old.plugins {
		byPath[p.spec.Path] = p
	}
	// Load new and changed plugins in parallel (compiling is the slow
	// part of a cold start), then assemble the result in spec order.
	type outcome struct {
		p      *Plugin // the plugin to serve, or nil
		loaded bool    // p is a fresh load
		err    error
	}
	results := make([]outcome, len(specs))
	sem := make(chan struct{}, max(1, goruntime.GOMAXPROCS(0)))
	var wg sync.WaitGroup
	for i, spec := range specs {
		prev := byPath[spec.Path]
		wasm, err := os.ReadFile(spec.Path)
		if err != nil {
			results[i] = outcome{p: prev, err: &LoadError{Spec: spec, Err: fmt.Errorf("read: %w", err)}}
			continue
		}
		if prev != nil && sameSpec(prev.spec, spec) && prev.digest == digestOf(wasm) {
			results[i] = outcome{p: prev}
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			p, err := load(ctx, loadDeps{engine: r.opts.Engine, kv: r.opts.KV, http: r.opts.HTTP, log: r.log}, spec, wasm)
			if err != nil {
				r.log.Error("plugin failed to load", "path", spec.Path, "error", err)
				if prev != nil {
					r.log.Warn("previous version keeps serving", "plugin", prev.name)
				}
				results[i] = outcome{p: prev, err: &LoadError{Spec: spec, Err: err}}
				return
			}
			results[i] = outcome{p: p, loaded: true}
		}()
	}
	wg.Wait()
	var errs []error
	var next, fresh []*Plugin
	for _, o := range results {
		if o.err != nil {
			errs = append(errs, o.err)
		}
		if o.p == nil {
			continue
		}
		next = append(next, o.p)
		delete(byPath, o.p.spec.Path)
		if o.loaded {
			fresh = append(fresh, o.p)
		}
	}
	cat, collisions := buildCatalog(next)
	for _, c := range collisions {
		// Refuse the newcomer; keep the previous version if any.
		errs = append(errs, &LoadError{Spec: c.loser.spec, Err: c})
		r.log.Error("plugin refused", "plugin", c.loser.name, "error", c)
	}
	if len(collisions) > 0 {
		refused := map[*Plugin]bool{}
		for _, c := range collisions {
			refused[c.loser] = true
		}
		var kept []*Plugin
		for _, p := range next {
			if !refused[p] {
				kept = append(kept, p)
				continue
			}
			if prev := findPath(old.plugins, p.spec.Path); prev != nil && prev != p {
				kept = append(kept, prev)
				delete(byPath, p.spec.Path)
			}
		}
		next = kept
		cat, collisions = buildCatalog(next)
		for _, c := range collisions { // cannot happen with a consistent old catalog
			errs = append(errs, &LoadError{Spec: c.loser.spec, Err: c})
		}
	}
	r.cat.Store(cat)
	// Drop what is no longer served: removed plugins and replaced versions.
	live := map[*Plugin]bool{}
	for _, p := range cat.plugins {
		live[p] = true
	}
	for _, p := range old.plugins {
		if !live[p] {
			go p.close(context.WithoutCancel(ctx))
		}
	}
	for _, p := range fresh {
		if !live[p] {
			go p.close(context.WithoutCancel(ctx))
		} else {
			r.log.Info("plugin loaded", "plugin", p.name, "tools", len(p.tools), "resources", len(p.resources),
				"templates", len(p.templates), "prompts", len(p.prompts), "sha256", p.digest[:12])
		}
	}
	r.announce(old, cat)
	return errors.Join(errs...)
}

// announce tells clients which lists differ between two catalogs.
func (r *Registry) announce(old, cur *catalog) {
	if r.opts.OnListChanged == nil {
		return
	}
	if !sameItems(old.toolsJSON, cur.toolsJSON) {
		r.opts.OnListChanged("tools")
	}
	if !sameItems(old.promptsJSON, cur.promptsJSON) {
		r.opts.OnListChanged("prompts")
	}
	if !sameItems(old.resourcesJSON, cur.resourcesJSON) || !sameItems(old.templatesJSON, cur.templatesJSON) {
		r.opts.OnListChanged("resources")
	}
}

func sameItems(a, b []json.RawMessage) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func findPath(ps []*Plugin, path string) *Plugin {
	for _, p := range ps {
		if p.spec.Path == path {
			return p
		}
	}
	return nil
}

func (r *Registry) specs() []Spec {
	cat := r.cat.Load()
	specs := make([]Spec, len(cat.plugins))
	for i, p := range cat.plugins {
		specs[i] = p.spec
	}
	return specs
}

// Plugins returns the loaded plugins in load order.
func (r *Registry) Plugins() []*Plugin {
	return append([]*Plugin(nil), r.cat.Load().plugins...)
}

// Tools returns every tool as MCP JSON, in a stable order (whatever the
// plugins' scopes; see ToolsFor).
func (r *Registry) Tools() []json.RawMessage { return r.cat.Load().toolsJSON }

// Prompts returns every prompt as MCP JSON, in a stable order.
func (r *Registry) Prompts() []json.RawMessage { return r.cat.Load().promptsJSON }

// Resources returns every resource as MCP JSON, in a stable order.
func (r *Registry) Resources() []json.RawMessage { return r.cat.Load().resourcesJSON }

// ResourceTemplates returns every resource template as MCP JSON, in a
// stable order.
func (r *Registry) ResourceTemplates() []json.RawMessage { return r.cat.Load().templatesJSON }

// Completions reports whether any plugin answers completion/complete.
func (r *Registry) Completions() bool {
	for _, p := range r.cat.Load().plugins {
		if p.manifest.Completions {
			return true
		}
	}
	return false
}

// Close drops every plugin; calls in flight finish first.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil
	}
	r.closed = true
	cat := r.cat.Swap(&catalog{})
	var wg sync.WaitGroup
	for _, p := range cat.plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.close(ctx)
		}()
	}
	wg.Wait()
	return nil
}

// redescribe asks a plugin to describe itself again (after it called
// notify/list_changed) and installs the new manifest, keeping the same
// instances. kind is announced even if nothing changed: the plugin asked.
func (r *Registry) redescribe(p *Plugin, kind string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	cat := r.cat.Load()
	cur := findPath(cat.plugins, p.spec.Path)
	if cur == nil || cur.rt != p.rt {
		return // replaced or removed meanwhile
	}
	np := *cur
	np.tools, np.prompts, np.resources, np.templates = nil, nil, nil, nil
	ctx, cancel := context.WithTimeout(context.Background(), np.pool.Limits().Timeout+time.Second)
	defer cancel()
	if err := np.describe(ctx); err != nil {
		r.log.Error("describe after list_changed failed; keeping the previous manifest", "plugin", p.name, "error", err)
		return
	}
	next := make([]*Plugin, len(cat.plugins))
	for i, q := range cat.plugins {
		next[i] = q
		if q == cur {
			next[i] = &np
		}
	}
	ncat, collisions := buildCatalog(next)
	if len(collisions) > 0 {
		r.log.Error("new manifest collides with another plugin; keeping the previous one", "plugin", p.name, "error", collisions[0])
		return
	}
	r.cat.Store(ncat)
	if r.opts.OnListChanged != nil {
		switch kind {
		case "tools", "prompts", "resources":
			r.opts.OnListChanged(kind)
		}
	}
}

func sameSpec(a, b Spec) bool {
	ja, _ := json.Marshal(specKey(a))
	jb, _ := json.Marshal(specKey(b))
	return bytes.Equal(ja, jb)
}

// specKey is the comparable part of a Spec (Sandbox.Output is a writer).
func specKey(s Spec) any {
	return struct {
		Name, Path, SHA256, Prefix string
		Limits                     runtime.Limits
		Env                        map[string]string
		Mounts                     []runtime.Mount
		Grants                     hostapi.Grants
		Scopes                     []string
	}{s.Name, s.Path, s.SHA256, s.Prefix, s.Limits, s.Sandbox.Env, s.Sandbox.Mounts, s.Grants, s.Scopes}
}
