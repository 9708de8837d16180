package plugins

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	goruntime "runtime"
	"slices"
	"sort"
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
	KV hostapi.KV
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
	// OnResourceUpdated is called when a plugin reports a changed
	// resource that it serves (reports for other URIs are dropped).
	OnResourceUpdated func(uri string)
	// Manifest bounds what each plugin's manifest may declare.
	Manifest ManifestLimits
}

// Registry holds the loaded plugins and routes requests to them. Reads are
// lock-free against an immutable catalog that loads and reloads replace
// whole. It is safe for concurrent use.
type Registry struct {
	opts   Options
	log    *slog.Logger
	sealer *stateSealer
	cat    atomic.Pointer[catalog]
	reload sync.Mutex // serializes Reloads
	mu     sync.Mutex // serializes catalog changes; guards the fields below
	closed bool
	target []Spec          // the specs of the latest Reload
	loads  map[slot]string // the files of the plugins being loaded

	digestMu sync.Mutex
	digests  map[string]*digestLock // by module digest (lockDigest)
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
	r := &Registry{opts: opts, log: opts.Logger, sealer: sealer, loads: map[slot]string{}, digests: map[string]*digestLock{}}
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
// file contents) are loaded, unchanged ones kept, missing ones dropped at
// once. Plugins load in parallel and each is served as soon as it is
// ready (clients are told about the lists that changed), in spec order
// whatever order they finish in; Loading lists those still loading.
// Reload returns when every one has loaded or failed.
//
// A plugin that fails to load keeps its previous version serving. A
// plugin that exposes a name, URI or template that a serving plugin
// already exposes is refused (its previous version, if any, keeps
// serving), naming both: what serves is never displaced by a newcomer.
// Calls in flight finish on the version they started with.
func (r *Registry) Reload(ctx context.Context, specs []Spec) error {
	return r.reloadListed(ctx, specs, nil)
}

// LoadListed is Load, calling listed (when not nil) once every plugin it
// loads is listed, from its cached manifest or loaded, or has failed:
// a first load's lists are whole from then on, though calls to plugins
// listed from their cached manifests wait until these have loaded (see
// early.go).
func (r *Registry) LoadListed(ctx context.Context, specs []Spec, listed func()) error {
	return r.reloadListed(ctx, append(r.specs(), specs...), listed)
}

func (r *Registry) reloadListed(ctx context.Context, specs []Spec, listed func()) error {
	r.reload.Lock()
	defer r.reload.Unlock()
	specs = append([]Spec(nil), specs...)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return errors.New("plugins: registry closed")
	}
	r.target = specs
	r.mu.Unlock()
	cur := r.cat.Load()
	var errs []error
	results := make(chan loadResult, 2*len(specs)) // an early result and a load each
	slots := newLoadSlots(goruntime.GOMAXPROCS(0))
	pending := 0
	unlisted := map[int]bool{} // the plugins loading that are not listed yet
	var looked sync.WaitGroup  // the lookups of cached manifests
	looked.Add(1)              // and this loop, which starts them
	for i, spec := range specs {
		prev := findSlot(cur.plugins, spec)
		var wasm []byte
		if prev != nil { // unchanged (the same spec and content) stays
			var err error
			wasm, err = readModule(spec.Path, r.opts.Engine.MaxModuleSize())
			if err != nil {
				r.log.Error("plugin failed to load", "path", spec.Path, "error", err)
				errs = append(errs, &LoadError{Spec: spec, Err: fmt.Errorf("read: %w", err)})
				continue
			}
			if sameSpec(prev.spec, spec) && prev.digest == digestOf(wasm) {
				continue
			}
		}
		pending++
		unlisted[i] = true
		r.mu.Lock()
		r.loads[slotOf(spec)] = spec.Path
		r.mu.Unlock()
		looked.Add(1)
		go func() {
			// A plugin with no version serving is listed from its cached
			// manifest, if it has one, before it compiles; the compiles
			// start once every plugin has looked (they would take the
			// processors from the lookups).
			// A new plugin whose file is the one read last time is
			// looked up by the digest then kept (knownDigest), and read
			// after the lookups; otherwise it is read here, beside the
			// others.
			d := r.deps()
			digest, size := "", int64(len(wasm))
			if wasm == nil {
				digest, size = knownDigest(d, spec.Path)
			}
			read := func() error {
				b, fi, err := readModuleFile(spec.Path, r.opts.Engine.MaxModuleSize())
				if err != nil {
					return fmt.Errorf("read: %w", err)
				}
				wasm, digest, size = b, digestOf(b), int64(len(b))
				rememberDigest(d, fi, digest)
				return nil
			}
			if digest == "" && wasm == nil {
				if err := read(); err != nil {
					looked.Done()
					results <- loadResult{i: i, err: err}
					return
				}
			} else if digest == "" {
				digest = digestOf(wasm)
			}
			w := &slotWait{size: int(size), order: i}
			var ep *Plugin
			if prev == nil {
				if ep = early(d, spec, digest); ep != nil {
					ep.pool.(*pendingPool).hurry = func() { slots.hurry(w) }
					results <- loadResult{i: i, p: ep}
				}
			}
			looked.Done()
			looked.Wait()
			// At most GOMAXPROCS load at once (loadSlots): a load keeps
			// its slot while it compiles, then at most loadSlotHold.
			slots.acquire(w)
			release := sync.OnceFunc(slots.release)
			var hold *time.Timer
			defer func() {
				if hold != nil {
					hold.Stop()
				}
				release()
			}()
			// Listed by the digest kept: the load reads the module, in
			// its slot (the one a call waits for first, and at most a
			// slot's worth of modules in memory at once).
			if wasm == nil {
				if err := read(); err != nil {
					results <- loadResult{i: i, err: err, after: ep}
					return
				}
			}
			// Identical modules never compile at once: wazero shares
			// their compiled code, and compiling the same module
			// concurrently in one runtime can panic in wazero (seen
			// with two copies of one file, about 1 run in 20).
			unlock := sync.OnceFunc(r.lockDigest(digest))
			defer unlock()
			d.compiled = func() {
				unlock()
				hold = time.AfterFunc(loadSlotHold, release)
			}
			p, err := load(ctx, d, spec, wasm, digest)
			results <- loadResult{i: i, p: p, err: err, after: ep}
		}()
	}
	looked.Done()
	noteListed := func(batch []loadResult) {
		for _, o := range batch {
			delete(unlisted, o.i)
		}
		if listed != nil && len(unlisted) == 0 {
			listed()
			listed = nil
		}
	}
	// Drop what is no longer configured at once, then install each plugin
	// as it arrives (those that arrive together at once).
	errs = append(errs, r.install(cur, specs, nil)...)
	noteListed(nil)
	for pending > 0 {
		batch := []loadResult{<-results}
	drain:
		for {
			select {
			case o := <-results:
				batch = append(batch, o)
			default:
				break drain
			}
		}
		for _, o := range batch {
			if !o.early() {
				pending--
			}
		}
		errs = append(errs, r.install(cur, specs, batch)...)
		noteListed(batch)
	}
	if listed != nil {
		listed()
	}
	return errors.Join(errs...)
}

// lockDigest serializes the loads of the modules of one digest; it
// returns the unlock. Entries live while someone holds or waits for them.
func (r *Registry) lockDigest(digest string) func() {
	r.digestMu.Lock()
	l := r.digests[digest]
	if l == nil {
		l = &digestLock{}
		r.digests[digest] = l
	}
	l.refs++
	r.digestMu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		r.digestMu.Lock()
		if l.refs--; l.refs == 0 {
			delete(r.digests, digest)
		}
		r.digestMu.Unlock()
	}
}

// digestLock is the lock of one digest (lockDigest).
type digestLock struct {
	mu   sync.Mutex
	refs int // holders and waiters, guarded by Registry.digestMu
}

// completed reports whether q is an early plugin that a load of the
// batch completes (replaces, or drops after it failed).
func completed(completes map[*Plugin]*Plugin, q *Plugin) bool {
	_, ok := completes[q]
	return ok
}

// loadResult is the outcome of loading specs[i]: the plugin loaded, or
// listed from its cached manifest (early); after is the early plugin
// that a load completes, nil for none.
type loadResult struct {
	i     int
	p     *Plugin
	err   error
	after *Plugin
}

// early reports whether o lists a plugin from its cached manifest (a
// load is still to come).
func (o loadResult) early() bool { return o.p != nil && o.p.provisional() }

func (r *Registry) deps() loadDeps {
	return loadDeps{engine: r.opts.Engine, kv: r.opts.KV, http: r.opts.HTTP, log: r.log, manifest: r.opts.Manifest}
}

// install serves the plugins of batch (fresh loads of specs) next to what
// is serving, in spec order, and drops served plugins no longer in specs.
// old is the catalog when the Reload began. It returns the load failures
// and the refusals.
func (r *Registry) install(old *catalog, specs []Spec, batch []loadResult) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	fresh := map[int]*Plugin{}
	// An early plugin that its load replaces, or drops when the load
	// failed (it had no version before it to keep serving).
	completes := map[*Plugin]*Plugin{}
	for _, o := range batch {
		spec := specs[o.i]
		if o.after != nil {
			completes[o.after] = o.p
		}
		if !o.early() {
			delete(r.loads, slotOf(spec))
		}
		if o.err != nil {
			r.log.Error("plugin failed to load", "path", spec.Path, "error", o.err)
			errs = append(errs, &LoadError{Spec: spec, Err: o.err})
			continue
		}
		fresh[o.i] = o.p
	}
	// Calls waiting on an early plugin go to its load once that is
	// served (so that what they report, list_changed say, reaches the
	// version serving), or fail.
	defer func() {
		cat := r.cat.Load()
		for ep, p := range completes {
			if p != nil && slices.Contains(cat.plugins, p) {
				ep.pool.(*pendingPool).finish(p.pool, nil)
			} else {
				ep.pool.(*pendingPool).finish(nil, nil)
			}
		}
	}()
	if r.closed {
		for _, p := range fresh {
			go p.close(context.Background())
		}
		return errs
	}
	cur := r.cat.Load()
	var next []*Plugin
	for i, spec := range specs {
		if p := fresh[i]; p != nil {
			next = append(next, p)
		} else if q := findSlot(cur.plugins, spec); q != nil {
			if !completed(completes, q) {
				next = append(next, q)
			}
		}
	}
	// What served before the Reload claims its names first, then new
	// versions of the files it served, then new files (in spec order,
	// whether installed already or not, so that the result does not
	// depend on the order they finish loading in).
	serving := map[*pluginRuntime]bool{}
	for _, p := range old.plugins {
		serving[p.rt] = true
	}
	rank := func(p *Plugin) int {
		switch {
		case serving[p.rt]:
			return 0
		case findSlot(old.plugins, p.spec) != nil:
			return 1
		}
		return 2
	}
	var cat *catalog
	for {
		var collisions []*Collision
		cat, collisions = buildCatalog(next, rank)
		again := false
		for _, c := range collisions {
			r.log.Error("plugin refused", "plugin", c.loser.name, "error", c)
			errs = append(errs, &LoadError{Spec: c.loser.spec, Err: c})
			if q := findSlot(cur.plugins, c.loser.spec); q != nil && q != c.loser && !completed(completes, q) {
				r.log.Warn("previous version keeps serving", "plugin", q.name)
				for i := range next {
					if next[i] == c.loser {
						next[i], again = q, true
					}
				}
			}
		}
		if !again {
			break
		}
	}
	for _, o := range batch {
		if o.err != nil {
			if q := findSlot(cat.plugins, specs[o.i]); q != nil {
				r.log.Warn("previous version keeps serving", "plugin", q.name)
			}
		}
	}
	r.cat.Store(cat)
	// Drop what is no longer served: removed plugins, replaced versions
	// and refused newcomers.
	live := map[*pluginRuntime]bool{}
	for _, p := range cat.plugins {
		live[p.rt] = true
	}
	for _, p := range cur.plugins {
		if !live[p.rt] {
			go p.close(context.Background())
		}
	}
	for _, p := range fresh {
		if !live[p.rt] {
			go p.close(context.Background())
			continue
		}
		msg := "plugin loaded"
		if p.provisional() {
			msg = "plugin listed from its cached manifest; loading"
		}
		r.log.Info(msg, "plugin", p.name, "tools", len(p.tools), "resources", len(p.resources),
			"templates", len(p.templates), "prompts", len(p.prompts), "sha256", p.digest[:12])
	}
	r.announce(cur, cat)
	return errs
}

// Loading returns the plugin files being loaded (by Load or Reload, on
// start or after a change), sorted; empty when every plugin is either
// serving or has failed.
func (r *Registry) Loading() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	paths := make([]string, 0, len(r.loads))
	for _, p := range r.loads {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	return paths
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

// slot identifies a plugin across reloads: its file and its name (one
// file may be configured twice, under two names).
type slot struct{ name, path string }

func slotOf(s Spec) slot { return slot{s.Name, s.Path} }

// findSlot returns the plugin of ps loaded for spec's slot, or nil.
func findSlot(ps []*Plugin, spec Spec) *Plugin {
	k := slotOf(spec)
	for _, p := range ps {
		if slotOf(p.spec) == k {
			return p
		}
	}
	return nil
}

// specs returns the specs of the latest Reload.
func (r *Registry) specs() []Spec {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Spec(nil), r.target...)
}

// Plugins returns the loaded plugins in load order.
func (r *Registry) Plugins() []*Plugin {
	return append([]*Plugin(nil), r.cat.Load().plugins...)
}

// Loaded reports whether ps is what Plugins returns now, without its copy
// (for callers that cache what they derive from the list).
func (r *Registry) Loaded(ps []*Plugin) bool {
	return slices.Equal(r.cat.Load().plugins, ps)
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

// The kinds of list a plugin can report changed, as bits.
var changeKinds = [...]string{"tools", "resources", "prompts"}

// listChanged schedules a re-describe of p after it reported kind changed.
// Re-describes are coalesced: at most one runs per plugin file and at
// most one more is pending, whatever the number of reports; the pending
// one announces every kind reported meanwhile.
func (r *Registry) listChanged(p *Plugin, kind string) {
	var bit uint32
	for i, k := range changeKinds {
		if k == kind {
			bit = 1 << i
		}
	}
	if bit == 0 {
		return
	}
	rt := p.rt
	rt.changed.Or(bit)
	if rt.describing.CompareAndSwap(false, true) {
		go r.describeLoop(p)
	}
}

// describeLoop re-describes p while reports are pending.
func (r *Registry) describeLoop(p *Plugin) {
	rt := p.rt
	for {
		if kinds := rt.changed.Swap(0); kinds != 0 {
			r.redescribe(p, kinds)
			continue
		}
		rt.describing.Store(false)
		// A report may have come between the Swap and the Store.
		if rt.changed.Load() == 0 || !rt.describing.CompareAndSwap(false, true) {
			return
		}
	}
}

// redescribe asks a plugin to describe itself again (after it called
// notify/list_changed) and installs the new manifest, keeping the same
// instances. The kinds reported are announced even if nothing changed:
// the plugin asked.
func (r *Registry) redescribe(p *Plugin, kinds uint32) {
	cur := findSlot(r.cat.Load().plugins, p.spec)
	if cur == nil || (cur.rt != p.rt && !p.provisional()) {
		return // replaced or removed meanwhile (an early plugin's report is its load's)
	}
	np := *cur
	np.tools, np.prompts, np.resources, np.templates = nil, nil, nil, nil
	ctx, cancel := context.WithTimeout(context.Background(), np.pool.Limits().Timeout+time.Second)
	defer cancel()
	if err := np.describe(ctx, r.opts.Manifest); err != nil {
		r.log.Error("describe after list_changed failed; keeping the previous manifest", "plugin", p.name, "error", err)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	cat := r.cat.Load()
	if r.closed || findSlot(cat.plugins, p.spec) != cur {
		return // replaced, removed or described again meanwhile
	}
	next := make([]*Plugin, len(cat.plugins))
	for i, q := range cat.plugins {
		next[i] = q
		if q == cur {
			next[i] = &np
		}
	}
	ncat, collisions := buildCatalog(next, nil)
	if len(collisions) > 0 {
		r.log.Error("new manifest collides with another plugin; keeping the previous one", "plugin", p.name, "error", collisions[0])
		return
	}
	r.cat.Store(ncat)
	if r.opts.OnListChanged != nil {
		for i, k := range changeKinds {
			if kinds&(1<<i) != 0 {
				r.opts.OnListChanged(k)
			}
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
		Scopes, Tools, Hide        []string
		Override                   map[string]ToolOverride
		Rate                       float64
		Burst                      int
	}{s.Name, s.Path, s.SHA256, s.Prefix, s.Limits, s.Sandbox.Env, s.Sandbox.Mounts, s.Grants, s.Scopes, s.Tools, s.Hide, s.Override, s.Rate, s.Burst}
}
