package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/audit"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/plugins"
)

// This file pins definitions (docs/governance.md, "Pinned definitions"):
// `wasmcp lock` records every tool, prompt, resource and resource
// template as clients see it, and under [server] pin the server withholds
// (block) or warns about (warn) an item whose definition is not the one
// recorded, at load and after every re-describe. What is pinned is the
// set: an item the lock does not know (a renamed tool too) is withheld
// like a changed one.

// defItem is one definition the registry serves, as clients see it.
type defItem struct {
	plugin string
	kind   string // one of config.PinKinds
	name   string // name, URI or uriTemplate
	raw    json.RawMessage
	canon  string // raw in canonical form
	digest string // config.DefinitionDigest(canon)
}

// canonicalJSON returns raw with its object members sorted and no
// insignificant space; numbers keep their text.
func canonicalJSON(raw []byte) (string, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", err
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// sameRaw reports whether a and b are the same bytes in memory (the
// registry's items do not change once built).
func sameRaw(a, b json.RawMessage) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}

// rawKey identifies one of the registry's items by its memory.
type rawKey struct {
	p *byte
	n int
}

func keyOf(raw json.RawMessage) rawKey {
	if len(raw) == 0 {
		return rawKey{}
	}
	return rawKey{&raw[0], len(raw)}
}

// definitions returns every item reg serves, whatever the callers'
// scopes, with the plugin that serves it, in the lists' order. An item
// whose lookup finds another definition (the catalog changed meanwhile)
// is left out: it was not vetted, so it is not approved either.
func definitions(reg *plugins.Registry) []defItem {
	var out []defItem
	add := func(kind, name string, raw json.RawMessage, it plugins.Item, ok bool) {
		if !ok || !sameRaw(it.Def, raw) {
			return
		}
		d := defItem{plugin: it.Plugin.Name(), kind: kind, name: name, raw: raw}
		c, err := canonicalJSON(raw)
		if err == nil {
			d.canon, d.digest = c, config.DefinitionDigest(c)
		}
		out = append(out, d)
	}
	for _, raw := range reg.Tools() {
		name := member(raw, "name")
		it, ok := reg.Tool(name)
		add("tool", name, raw, it, ok)
	}
	for _, raw := range reg.Prompts() {
		name := member(raw, "name")
		it, ok := reg.Prompt(name)
		add("prompt", name, raw, it, ok)
	}
	for _, raw := range reg.Resources() {
		uri := member(raw, "uri")
		it, ok := reg.Resource(uri, nil)
		add("resource", uri, raw, it, ok)
	}
	for _, raw := range reg.ResourceTemplates() {
		t := member(raw, "uriTemplate")
		it, ok := reg.Template(t)
		add("template", t, raw, it, ok)
	}
	return out
}

// pinEntries turns what reg serves into the [[pins]] of a lock: one entry
// per loaded plugin (in load order), its items by kind then name.
func pinEntries(reg *plugins.Registry) []config.PinEntry {
	byPlugin := map[string][]config.PinnedItem{}
	for _, d := range definitions(reg) {
		byPlugin[d.plugin] = append(byPlugin[d.plugin], config.PinnedItem{Kind: d.kind, Name: d.name, Digest: d.digest, Definition: d.canon})
	}
	rank := map[string]int{}
	for i, k := range config.PinKinds {
		rank[k] = i
	}
	var pins []config.PinEntry
	for _, p := range reg.Plugins() {
		items := byPlugin[p.Name()]
		sort.SliceStable(items, func(a, b int) bool {
			if items[a].Kind != items[b].Kind {
				return rank[items[a].Kind] < rank[items[b].Kind]
			}
			return items[a].Name < items[b].Name
		})
		pins = append(pins, config.PinEntry{Plugin: p.Name(), SHA256: p.SHA256(), Items: items})
	}
	return pins
}

// describeAll loads every plugin of cfg as serve would, the url ones at
// lock's digests, with nothing pinned, and returns the [[pins]] of what
// they serve. Load failures of plugin-directory files are logged to
// progress (nil: discarded).
func describeAll(ctx context.Context, cfg *config.Config, lock *config.Lock, progress io.Writer) ([]config.PinEntry, error) {
	c := *cfg
	c.Server.Pin = config.PinOff
	c.Server.Watch = false
	log := slog.New(slog.DiscardHandler)
	if progress != nil {
		log = slog.New(slog.NewTextHandler(progress, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if lock == nil {
		lock = &config.Lock{}
	}
	s, err := New(ctx, &c, Options{Logger: log, Progress: progress, LoadWait: describeWait, lock: lock})
	if err != nil {
		return nil, fmt.Errorf("lock: describing the plugins: %w", err)
	}
	defer s.Close(context.WithoutCancel(ctx))
	select {
	case <-s.loaded:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return pinEntries(s.reg), nil
}

// describeWait bounds how long describeAll waits for the plugins before
// waiting on: a lock is written only once every plugin loaded or failed.
const describeWait = 10 * time.Minute

// FieldChange is one top-level member of a definition that differs: Old
// and New are its JSON text, "" where the member is absent.
type FieldChange struct {
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
}

// diffFields lists the members of two canonical definitions that differ,
// sorted by name; nil when either does not parse as an object.
func diffFields(old, cur string) []FieldChange {
	var a, b map[string]json.RawMessage
	if json.Unmarshal([]byte(old), &a) != nil || json.Unmarshal([]byte(cur), &b) != nil {
		return nil
	}
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var out []FieldChange
	for k := range keys {
		if !bytes.Equal(a[k], b[k]) {
			out = append(out, FieldChange{Field: k, Old: string(a[k]), New: string(b[k])})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Field < out[j].Field })
	return out
}

// PinChange is one difference between the definitions of two locks (what
// `wasmcp lock --update` approves): Op "+" an item or plugin added, "-"
// removed, "~" changed (Fields says how). Kind is "plugin" for a plugin
// the old lock did not describe or the new one does not.
type PinChange struct {
	Plugin string        `json:"plugin"`
	Op     string        `json:"op"`
	Kind   string        `json:"kind"`
	Name   string        `json:"name,omitempty"`
	Fields []FieldChange `json:"fields,omitempty"`
}

// PinDiff lists how the definitions of cur differ from old's (either may
// be nil): plugins in cur's order, then those only old has; within a
// plugin, items by kind then name.
func PinDiff(old, cur *config.Lock) []PinChange {
	var out []PinChange
	itemsOf := func(p *config.PinEntry) map[string]config.PinnedItem {
		m := map[string]config.PinnedItem{}
		if p != nil {
			for _, it := range p.Items {
				m[it.Kind+" "+it.Name] = it
			}
		}
		return m
	}
	diffPlugin := func(name string, was, now *config.PinEntry) {
		switch {
		case was == nil:
			out = append(out, PinChange{Plugin: name, Op: "+", Kind: "plugin"})
		case now == nil:
			out = append(out, PinChange{Plugin: name, Op: "-", Kind: "plugin"})
		}
		a, b := itemsOf(was), itemsOf(now)
		var keys []string
		for k := range a {
			keys = append(keys, k)
		}
		for k := range b {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		rank := map[string]int{}
		for i, k := range config.PinKinds {
			rank[k] = i
		}
		sort.Slice(keys, func(i, j int) bool {
			ki, ni, _ := strings.Cut(keys[i], " ")
			kj, nj, _ := strings.Cut(keys[j], " ")
			if ki != kj {
				return rank[ki] < rank[kj]
			}
			return ni < nj
		})
		for _, k := range keys {
			x, inA := a[k]
			y, inB := b[k]
			kind, n, _ := strings.Cut(k, " ")
			switch {
			case !inA:
				out = append(out, PinChange{Plugin: name, Op: "+", Kind: kind, Name: n})
			case !inB:
				out = append(out, PinChange{Plugin: name, Op: "-", Kind: kind, Name: n})
			case x.Digest != y.Digest:
				out = append(out, PinChange{Plugin: name, Op: "~", Kind: kind, Name: n, Fields: diffFields(x.Definition, y.Definition)})
			}
		}
	}
	var oldPins, curPins []config.PinEntry
	if old != nil {
		oldPins = old.Pins
	}
	if cur != nil {
		curPins = cur.Pins
	}
	for i := range curPins {
		diffPlugin(curPins[i].Plugin, old.Pin(curPins[i].Plugin), &curPins[i])
	}
	for i := range oldPins {
		if cur.Pin(oldPins[i].Plugin) == nil {
			diffPlugin(oldPins[i].Plugin, &oldPins[i], nil)
		}
	}
	return out
}

// WritePinDiff prints changes for a person, one line per change and,
// for a changed item, the old and new value of each member that differs.
func WritePinDiff(w io.Writer, changes []PinChange) {
	for _, c := range changes {
		if c.Kind == "plugin" {
			what := "newly pinned"
			if c.Op == "-" {
				what = "no longer pinned"
			}
			fmt.Fprintf(w, "%s plugin %s (%s)\n", c.Op, c.Plugin, what)
			continue
		}
		fmt.Fprintf(w, "%s %s %q (plugin %s)", c.Op, c.Kind, c.Name, c.Plugin)
		if c.Op != "~" {
			fmt.Fprintln(w)
			continue
		}
		names := make([]string, len(c.Fields))
		for i, f := range c.Fields {
			names[i] = f.Field
		}
		fmt.Fprintf(w, ": %s\n", strings.Join(names, ", "))
		for _, f := range c.Fields {
			fmt.Fprintf(w, "    %s\n      - %s\n      + %s\n", f.Field, orNone(f.Old), orNone(f.New))
		}
	}
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// PinFinding is an item served that its lock does not approve: Change
// "changed" (Fields says how) or "unknown" (the lock's entry of the
// plugin has no item of that kind and name: a new or renamed one).
type PinFinding struct {
	Plugin string
	Kind   string
	Name   string
	Change string
	Digest string // of the definition served
	Locked string // the digest the lock has, "" for unknown
	Fields []FieldChange
}

// FieldNames lists the members that differ.
func (f *PinFinding) FieldNames() []string {
	names := make([]string, len(f.Fields))
	for i, c := range f.Fields {
		names[i] = c.Field
	}
	return names
}

func (f *PinFinding) key() string {
	return f.Plugin + "\x00" + f.Kind + "\x00" + f.Name + "\x00" + f.Digest
}

// pinner enforces [server] pin against wasmcp.lock. A nil *pinner pins
// nothing.
type pinner struct {
	cfg *config.Config
	reg *plugins.Registry
	log *slog.Logger
	// onFinding, when set, receives each finding once, as it appears,
	// with the mode in force (the audit trail's definition_changed).
	onFinding func(mode string, f PinFinding)
	// onReload, when set, is called after the lock was read again (the
	// server tells clients their lists changed).
	onReload func()

	state atomic.Pointer[pinState]
	view  atomic.Pointer[pinView]

	mu sync.Mutex // serializes views and lock loads
}

// pinState is a lock as the pinner reads it, and the mode in force.
type pinState struct {
	mode  string // config.PinBlock, PinWarn or PinOff
	items map[string]map[string]config.PinnedItem
}

// pinView is what the pinner decided of one catalog (identified by its
// plugins): the items approved (nil: every item is served) and the
// findings.
type pinView struct {
	plugins  []*plugins.Plugin
	approved map[rawKey]bool
	withheld int
	findings map[string]PinFinding
}

// newPinner reads the lock of cfg; nil when pin is "off", or is left
// to its default and there is no lock to pin against. pin = "block" or
// "warn" set without a lock is an error: the operator asked for pinning
// and nothing records what to pin to.
func newPinner(cfg *config.Config, reg *plugins.Registry, log *slog.Logger) (*pinner, error) {
	if cfg.Server.Pin == config.PinOff {
		return nil, nil
	}
	path := config.LockPath(cfg)
	if path == "" {
		if cfg.Server.Pin == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("server.pin = %q needs %s beside the configuration file, and this configuration has no file: set pin = \"off\"", cfg.Server.Pin, config.LockFile)
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		if cfg.Server.Pin == "" {
			return nil, nil
		}
		return nil, fmt.Errorf("server.pin = %q but there is no %s: run `wasmcp lock` to record the definitions to pin, or set pin = \"off\"", cfg.Server.Pin, path)
	}
	p := &pinner{cfg: cfg, reg: reg, log: log}
	if err := p.load(); err != nil {
		return nil, err
	}
	return p, nil
}

// load reads wasmcp.lock into the state in force.
func (p *pinner) load() error {
	lock, err := config.LoadLock(p.cfg)
	if err != nil {
		return err
	}
	st := &pinState{mode: p.cfg.Server.Pin, items: map[string]map[string]config.PinnedItem{}}
	if lock != nil {
		for _, e := range lock.Pins {
			m := map[string]config.PinnedItem{}
			for _, it := range e.Items {
				m[it.Kind+" "+it.Name] = it
			}
			st.items[e.Plugin] = m
		}
	}
	if st.mode == "" {
		st.mode = config.PinOff
		if len(st.items) > 0 {
			st.mode = config.PinBlock
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.state.Store(st)
	if st.mode != config.PinOff && len(st.items) == 0 {
		p.log.Warn("pin = "+st.mode+" but "+config.LockFile+" records no definitions: every item is unknown to it; run `wasmcp lock --update` to record them", "lock", config.LockPath(p.cfg))
	}
	// Findings are reported afresh against the lock just read.
	p.view.Store(nil)
	p.computeLocked()
	return nil
}

// reload reads the lock again (SIGHUP, or a change with watch); when it
// does not load, the one in force stays and the error is logged.
func (p *pinner) reload() error {
	if p == nil {
		return nil
	}
	if err := p.load(); err != nil {
		p.log.Error(config.LockFile+" not reloaded; the pinned definitions in force stay", "error", err)
		return err
	}
	p.log.Info("pinned definitions reloaded", "lock", config.LockPath(p.cfg), "pin", p.state.Load().mode)
	if p.onReload != nil {
		p.onReload()
	}
	return nil
}

// watch reloads the lock when its content changes, polling every
// interval (a change is taken once two polls in a row see it, so that a
// file caught half written is not).
func (p *pinner) watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	read := func() string {
		b, err := os.ReadFile(config.LockPath(p.cfg))
		if err != nil {
			return "-"
		}
		return string(b)
	}
	loaded := read()
	seen := loaded
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cur := read()
		if cur != loaded && cur == seen {
			loaded = cur
			_ = p.reload()
		}
		seen = cur
	}
}

// current returns the view of the catalog serving now (computing it when
// the catalog changed since the last one); nil when nothing is pinned.
func (p *pinner) current() *pinView {
	if p == nil {
		return nil
	}
	if v := p.view.Load(); v != nil && p.reg.Loaded(v.plugins) {
		return v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v := p.view.Load(); v != nil && p.reg.Loaded(v.plugins) {
		return v
	}
	return p.computeLocked()
}

// refresh decides the catalog serving now, reporting what it finds (the
// registry calls it after every load, reload and re-describe).
func (p *pinner) refresh() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.computeLocked()
}

// computeLocked decides every item served and reports the findings the
// last view did not have. p.mu is held.
func (p *pinner) computeLocked() *pinView {
	st := p.state.Load()
	v := &pinView{plugins: p.reg.Plugins(), findings: map[string]PinFinding{}}
	if st.mode == config.PinBlock {
		v.approved = map[rawKey]bool{}
	}
	if st.mode != config.PinOff {
		for _, d := range definitions(p.reg) {
			f := st.check(&d)
			if f == nil {
				if v.approved != nil {
					v.approved[keyOf(d.raw)] = true
				}
				continue
			}
			v.findings[f.key()] = *f
			v.withheld++
		}
	}
	if st.mode == config.PinWarn {
		v.withheld = 0
	}
	prev := p.view.Load()
	keys := make([]string, 0, len(v.findings))
	for k := range v.findings {
		if prev == nil || !hasFinding(prev, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.report(st.mode, v.findings[k])
	}
	p.view.Store(v)
	return v
}

func hasFinding(v *pinView, k string) bool {
	_, ok := v.findings[k]
	return ok
}

// check returns the finding of d, or nil when the lock approves it. An
// item of a plugin the lock does not describe (one dropped in a plugin
// directory since, or renamed) is unknown like any other: the lock pins
// the whole set. An item whose definition did not parse is never
// approved.
func (st *pinState) check(d *defItem) *PinFinding {
	li, ok := st.items[d.plugin][d.kind+" "+d.name]
	switch {
	case !ok:
		return &PinFinding{Plugin: d.plugin, Kind: d.kind, Name: d.name, Change: "unknown", Digest: d.digest}
	case d.digest == "" || li.Digest != d.digest:
		return &PinFinding{Plugin: d.plugin, Kind: d.kind, Name: d.name, Change: "changed", Digest: d.digest, Locked: li.Digest,
			Fields: diffFields(li.Definition, d.canon)}
	}
	return nil
}

// maxLoggedField bounds each value a finding's log line quotes.
const maxLoggedField = 1024

// report logs one finding (and hands it to onFinding).
func (p *pinner) report(mode string, f PinFinding) {
	msg := "definition not approved by " + config.LockFile + "; withheld (pin = block)"
	if mode == config.PinWarn {
		msg = "definition not approved by " + config.LockFile + "; served (pin = warn)"
	}
	attrs := []any{"plugin", f.Plugin, "kind", f.Kind, "name", f.Name, "change", f.Change}
	if f.Change == "unknown" {
		attrs = append(attrs, "detail", f.Detail())
	} else {
		attrs = append(attrs, "fields", strings.Join(f.FieldNames(), ","))
		for _, c := range f.Fields {
			attrs = append(attrs, c.Field, clip(orNone(c.Old))+" -> "+clip(orNone(c.New)))
		}
	}
	attrs = append(attrs, "fix", "review it, then run `wasmcp lock --update` to approve it")
	p.log.Warn(msg, attrs...)
	if p.onFinding != nil {
		p.onFinding(mode, f)
	}
}

// Detail says in a few words what changed (an audit event's detail).
func (f *PinFinding) Detail() string {
	if f.Change == "unknown" {
		return "not in " + config.LockFile + " (a new or renamed item)"
	}
	return "changed since " + config.LockFile + ": " + strings.Join(f.FieldNames(), ", ")
}

// auditDefinitionChanged records a pin finding in the audit trail as a
// definition_changed event: outcome "withheld" (block) or "served"
// (warn), the target the item's plugin and name (URI or uriTemplate for
// resources), the detail its kind and what changed.
func (s *Server) auditDefinitionChanged(mode string, f PinFinding) {
	outcome := "withheld"
	if mode == config.PinWarn {
		outcome = "served"
	}
	s.audit(audit.Event{Type: "definition_changed", Time: time.Now(), Outcome: outcome,
		Target: audit.Target{Plugin: f.Plugin, Name: f.Name}, Detail: f.Kind + " " + f.Detail()})
}

func clip(s string) string {
	if len(s) > maxLoggedField {
		return strings.ToValidUTF8(s[:maxLoggedField], "") + "..."
	}
	return s
}

// filter returns the items of a list that v approves. v is the view
// current() gave before the list was read: when the catalog is still the
// one v decided and v withholds nothing, items is returned as is;
// otherwise each item is looked up in the latest view, and one it does
// not know is left out (it was not vetted).
func (p *pinner) filter(v *pinView, items []json.RawMessage) []json.RawMessage {
	if v == nil || v.approved == nil || len(items) == 0 {
		return items
	}
	if !p.reg.Loaded(v.plugins) {
		v = p.current()
		if v.approved == nil {
			return items
		}
	} else if v.withheld == 0 {
		return items
	}
	out := make([]json.RawMessage, 0, len(items))
	for _, it := range items {
		if v.approved[keyOf(it)] {
			out = append(out, it)
		}
	}
	return out
}

// ok reports whether the item def may be called, read or completed.
func (p *pinner) ok(def json.RawMessage) bool {
	v := p.current()
	if v == nil || v.approved == nil || v.approved[keyOf(def)] {
		return true
	}
	return false
}

// approve refuses a call, read, prompt or completion routed to it when
// the lock does not approve it under pin = "block": an error naming the
// item and what to do.
func (p *pinner) approve(r *mcp.Request, it plugins.Item) error {
	if p == nil || p.state.Load().mode != config.PinBlock || p.ok(it.Def) {
		return nil
	}
	kind, id := "resource", r.Parsed.URI
	switch {
	case it.Template != "":
		kind, id = "template", it.Template
	case r.Method == "tools/call":
		kind, id = "tool", r.Parsed.Name
	case r.Method == "prompts/get":
		kind, id = "prompt", r.Parsed.Name
	case r.Method == "completion/complete" && r.Parsed.Ref.Type == "ref/prompt":
		kind, id = "prompt", r.Parsed.Ref.Name
	case r.Method == "completion/complete":
		id = r.Parsed.Ref.URI
	}
	code := jsonrpc.CodeInvalidParams
	if r.Method == "resources/read" {
		code = jsonrpc.CodeResourceNotFound
	}
	return jsonrpc.NewError(code, fmt.Sprintf("%s %q is withheld: its definition differs from %s (pin = block); an operator must review it and run `wasmcp lock --update`", kind, id, config.LockFile), nil)
}

// blocks reports whether p may refuse calls (pin = "block").
func (p *pinner) blocks() bool {
	return p != nil && p.state.Load().mode == config.PinBlock
}
