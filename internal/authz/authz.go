// Package authz decides who may call what, with Cedar policies
// (github.com/cedar-policy/cedar-go). The server and `wasmcp authz check`
// build the same Request and ask the same Policies, so that the command
// answers what the server would.
//
// The model (docs/governance.md):
//
//   - principal: Client::"<sub>" for a verified caller, its claims as
//     attributes and Group::"<name>" parents from the groups claim;
//     Client::"stdio" on stdio; Anonymous::"anonymous" on HTTP without
//     access control (a type of its own, so that `principal is Client`
//     never covers an unauthenticated caller);
//   - action: Action::"call_tool", "read_resource", "get_prompt",
//     "complete"; the lists are filtered with the action of each item
//     (call_tool for tools/list, ...) and context.listing true;
//   - resource: Tool::"<exposed name>", Prompt::"<name>" or
//     Resource::"<uri>", parent Plugin::"<plugin>", with the attributes
//     the server knows (annotations, plugin name, digest, grants);
//   - context: arguments (absent while listing), transport,
//     protocolVersion, time (seconds since the epoch, UTC) and listing.
//
// Nothing is allowed unless a permit policy allows it, and a forbid
// policy always wins.
package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cedar-policy/cedar-go"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Actions, as policies name them (Action::"call_tool").
const (
	CallTool     = "call_tool"
	ReadResource = "read_resource"
	GetPrompt    = "get_prompt"
	Complete     = "complete"
)

// Policies is a loaded policy set and its entities. It is immutable and
// safe for concurrent use; a reload builds a new one.
type Policies struct {
	set         *cedar.PolicySet
	entities    cedar.EntityMap
	groupsClaim string
	count       int
	// readsArguments is set when some policy names "arguments" (the
	// only way to read context.arguments).
	readsArguments bool

	// policies are the policies in order, with their scopes, for the
	// subsets of one action and target (see relevant).
	policies []scoped
	// actionParents is set when the entities give an action parents:
	// then `action in` cannot be decided before evaluation.
	actionParents bool

	mu sync.Mutex
	// principals are the entities of clients, by subject and then
	// claims (looked up without building a key); nprincipals counts
	// them.
	principals  map[string]map[string]*cedar.Entity
	nprincipals int
	targets     map[*Target]*targetEntities
	contexts    map[contextKey]cedar.Record
	// clients are the subsets of a client principal (see forClient).
	clients map[clientKey]*subset
}

// clientKey names a subset of one target and action as one client
// (a cached principal entity) sees it.
type clientKey struct {
	sub       *subset
	principal *cedar.Entity
}

// scoped is one policy and what its scope says of actions and
// resources, read from its JSON form.
type scoped struct {
	id             cedar.PolicyID
	pol            *cedar.Policy
	readsArguments bool
	args           argUse // what its conditions read of context.arguments
	// readsContext is set unless its JSON form never says "context":
	// then its outcome depends only on the principal, action, resource
	// and entities (see subset.prepare).
	readsContext bool
	principal    scopeJSON
	action       scopeJSON
	resource     scopeJSON
}

// scopeJSON is a policy's action or resource scope in Cedar's JSON
// policy format.
type scopeJSON struct {
	Op         string       `json:"op"`
	Entity     *entityJSON  `json:"entity"`
	Entities   []entityJSON `json:"entities"`
	EntityType string       `json:"entity_type"`
	In         *struct {
		Entity *entityJSON `json:"entity"`
	} `json:"in"`
}

type entityJSON struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

func (e *entityJSON) uid() cedar.EntityUID {
	return cedar.NewEntityUID(cedar.EntityType(e.Type), cedar.String(e.ID))
}

// subset is the policies whose scope may match one action and target,
// in order: a PolicyIterator for cedar.Authorize.
type subset struct {
	list           []*scoped
	readsArguments bool
	args           argUse // what the policies of list read of context.arguments
	seq            iter.Seq2[cedar.PolicyID, *cedar.Policy]
	// fixed are the entities of every request of this subset, when its
	// principal is fixed (stdio, anonymous, or a client's narrowed
	// subset).
	fixed *entities

	// After prepare, when some of its policies read no context: all are
	// the policies in order, outcomes what each of those gave (evaluated
	// once), and list only the policies that read the context.
	prep     sync.Once
	all      []*scoped
	outcomes []outcome

	// last is the decision of the last request whose context was one
	// kept for its second (the context is then all that can differ
	// between two requests of the subset).
	last atomic.Pointer[lastDecision]
}

// outcome is what a policy that reads no context gives every request of
// a subset.
type outcome struct {
	live      bool   // it reads the context: evaluated per request
	satisfied bool   // its scope and conditions hold
	err       string // the evaluation error ("" for none)
}

// onePolicy is a PolicyIterator of one policy.
type onePolicy struct{ sp *scoped }

func (o onePolicy) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] {
	return func(yield func(cedar.PolicyID, *cedar.Policy) bool) { yield(o.sp.id, o.sp.pol) }
}

// prepare evaluates, once, the policies of s that read no context: with
// the principal, action and resource of req, and s.fixed, their outcome
// is the same for every request of s (Cedar has no other input), so
// Decide evaluates only the others and merges (decide).
// A subset without fixed entities (a client's, before forClient narrows
// it, which other requests read) is left as it is.
func (s *subset) prepare(req cedar.Request) {
	if s.fixed == nil {
		return
	}
	s.prep.Do(func() {
		out := make([]outcome, len(s.list))
		var live []*scoped
		for i, sp := range s.list {
			if sp.readsContext {
				out[i].live = true
				live = append(live, sp)
				continue
			}
			req.Context = emptyRecord
			_, diag := cedar.Authorize(onePolicy{sp}, s.fixed, req)
			out[i].satisfied = len(diag.Reasons) > 0
			if len(diag.Errors) > 0 {
				out[i].err = diag.Errors[0].Message
			}
		}
		if len(live) < len(s.list) {
			s.all, s.outcomes, s.list = s.list, out, live
		}
	})
}

// decide is the Decision of a request of s whose policies that read the
// context gave diag: what cedar.Authorize would give for all of s.all,
// with the outcomes of the others, in the order of s.all.
func (s *subset) decide(diag cedar.Diagnostic) Decision {
	// diag.Reasons are the forbids that held when one did (ok is then
	// Deny), else the permits that held: a live permit that held is
	// missing from them only when a live forbid held, and then it does
	// not count.
	var forbids, permits, errs []string
	for i, sp := range s.all {
		o := s.outcomes[i]
		held, failed := o.satisfied, o.err
		if o.live {
			held, failed = false, ""
			for _, re := range diag.Reasons {
				if re.PolicyID == sp.id {
					held = true
				}
			}
			for _, e := range diag.Errors {
				if e.PolicyID == sp.id {
					failed = e.Message
				}
			}
		}
		switch {
		case failed != "":
			errs = append(errs, string(sp.id)+": "+failed)
		case held && sp.pol.Effect() == cedar.Forbid:
			forbids = append(forbids, string(sp.id))
		case held:
			permits = append(permits, string(sp.id))
		}
	}
	if len(forbids) > 0 {
		return Decision{Policies: forbids, Errors: errs}
	}
	return Decision{Allow: len(permits) > 0, Policies: permits, Errors: errs}
}

// All implements cedar.PolicyIterator, with the same iterator every
// time.
func (s *subset) All() iter.Seq2[cedar.PolicyID, *cedar.Policy] { return s.seq }

// relevant returns the policies of p whose action and resource scopes
// may match action on the resource uid with parent plugin (its only
// ancestor), and whose principal scope may match principal when it is
// not nil (an entity with no parents: Client::"stdio" or
// Anonymous::"anonymous"): a policy left out could not apply, so the
// decision is the same, for less work. readsArguments is that of the
// policies of the action and resource, whatever the principal, so that
// the arguments a request may pass do not depend on who passes them.
func (p *Policies) relevant(action, uid, plugin cedar.EntityUID, principal *cedar.EntityUID) *subset {
	sub := &subset{}
	sub.seq = func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, p := range sub.list {
			if !yield(p.id, p.pol) {
				return
			}
		}
	}
	for i := range p.policies {
		sp := &p.policies[i]
		if sp.action.mayMatch(action, nil, p.actionParents) && sp.resource.mayMatch(uid, []cedar.EntityUID{uid, plugin}, false) {
			sub.readsArguments = sub.readsArguments || sp.readsArguments
			if principal != nil && !sp.principal.mayMatch(*principal, nil, false) {
				continue
			}
			sub.list = append(sub.list, sp)
			sub.args.add(sp.args)
		}
	}
	return sub
}

// forClient returns the policies of sub whose principal scope may match
// the client principal with the entities ents (a request of sub's
// target): its ancestors are found as Cedar finds them, through
// ents.Get, so a policy left out could not apply. The subset is kept by
// sub and principal (a principal entity is built once for its claims),
// with its entities, unless keep is false (an Ephemeral target, whose
// subsets are built for one request).
func (p *Policies) forClient(sub *subset, principal *cedar.Entity, resource, plugin *cedar.Entity, keep bool) *subset {
	key := clientKey{sub, principal}
	if keep {
		if cs, ok := cacheGet(&p.mu, p.clients, key); ok {
			return cs
		}
	}
	ents := &entities{static: p.entities, principal: principal, resource: resource, plugin: plugin}
	self := ancestors(ents, principal.UID)
	cs := &subset{readsArguments: sub.readsArguments}
	cs.seq = func(yield func(cedar.PolicyID, *cedar.Policy) bool) {
		for _, p := range cs.list {
			if !yield(p.id, p.pol) {
				return
			}
		}
	}
	for _, sp := range sub.list {
		if sp.principal.mayMatch(principal.UID, self, false) {
			cs.list = append(cs.list, sp)
			cs.args.add(sp.args)
		}
	}
	ents.policies = cs
	cs.fixed = ents
	if keep {
		cachePut(&p.mu, p.clients, key, cs)
	}
	return cs
}

// ancestors returns uid and every entity it is in, through g: its
// parents, and theirs, as Cedar's `in` follows them.
func ancestors(g cedar.EntityGetter, uid cedar.EntityUID) []cedar.EntityUID {
	out := []cedar.EntityUID{uid}
	seen := map[cedar.EntityUID]bool{uid: true}
	for i := 0; i < len(out); i++ {
		e, ok := g.Get(out[i])
		if !ok {
			continue
		}
		for a := range e.Parents.All() {
			if !seen[a] {
				seen[a] = true
				out = append(out, a)
			}
		}
	}
	return out
}

// mayMatch reports whether the scope may hold for the entity uid whose
// ancestors (itself included) are self (nil: uid alone, unless
// unknownParents).
func (sc *scopeJSON) mayMatch(uid cedar.EntityUID, self []cedar.EntityUID, unknownParents bool) bool {
	if self == nil {
		self = []cedar.EntityUID{uid}
	}
	in := func(e *entityJSON) bool { return unknownParents || slices.Contains(self, e.uid()) }
	switch sc.Op {
	case "All":
		return true
	case "==":
		return sc.Entity != nil && sc.Entity.uid() == uid
	case "in":
		if sc.Entity != nil {
			return in(sc.Entity)
		}
		for i := range sc.Entities {
			if in(&sc.Entities[i]) {
				return true
			}
		}
		return false
	case "is":
		if string(uid.Type) != sc.EntityType {
			return false
		}
		return sc.In == nil || sc.In.Entity == nil || in(sc.In.Entity)
	}
	return true // a scope this code does not know: evaluated
}

func newPolicies(groupsClaim string) *Policies {
	if groupsClaim == "" {
		groupsClaim = "groups"
	}
	return &Policies{set: cedar.NewPolicySet(), groupsClaim: groupsClaim,
		principals: map[string]map[string]*cedar.Entity{}, targets: map[*Target]*targetEntities{}, contexts: map[contextKey]cedar.Record{},
		clients: map[clientKey]*subset{}}
}

// Load reads the policies at path (a .cedar file, or a directory whose
// *.cedar files are read in name order), the entities file (JSON in
// Cedar's entity format; "" for none) and the claim that names a caller's
// groups ("" for "groups").
func Load(path, entities, groupsClaim string) (*Policies, error) {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("authz: %w", err)
	} else if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.cedar"))
		if err != nil {
			return nil, fmt.Errorf("authz: %w", err)
		}
		slices.Sort(files)
	}
	p := newPolicies(groupsClaim)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("authz: %w", err)
		}
		if err := p.add(filepath.Base(f), src); err != nil {
			return nil, err
		}
	}
	if entities != "" {
		src, err := os.ReadFile(entities)
		if err != nil {
			return nil, fmt.Errorf("authz: %w", err)
		}
		if err := json.Unmarshal(src, &p.entities); err != nil {
			return nil, fmt.Errorf("authz: %s: %w", entities, err)
		}
	}
	p.scanEntities()
	return p, nil
}

// Parse builds Policies from Cedar source text (name labels its policy
// ids and errors) and entities JSON (nil for none).
func Parse(name string, src, entities []byte, groupsClaim string) (*Policies, error) {
	p := newPolicies(groupsClaim)
	if err := p.add(name, src); err != nil {
		return nil, err
	}
	if len(entities) > 0 {
		if err := json.Unmarshal(entities, &p.entities); err != nil {
			return nil, fmt.Errorf("authz: entities: %w", err)
		}
	}
	p.scanEntities()
	return p, nil
}

// add parses one file's policies. A policy's id is its @id("...")
// annotation when it has one, else file:index (index from 0).
func (p *Policies) add(file string, src []byte) error {
	list, err := cedar.NewPolicyListFromBytes(file, src)
	if err != nil {
		return fmt.Errorf("authz: %w", err)
	}
	for i, pol := range list {
		id := cedar.PolicyID(fmt.Sprintf("%s:%d", file, i))
		if v, ok := pol.Annotations()["id"]; ok && v != "" {
			id = cedar.PolicyID(v)
		}
		if !p.set.Add(id, pol) {
			return fmt.Errorf("authz: %s: policy id %q is used twice", file, id)
		}
		sp := scoped{id: id, pol: pol, readsArguments: bytes.Contains(pol.MarshalCedar(), []byte("arguments")), args: argUseOf(pol)}
		var js struct {
			Principal scopeJSON `json:"principal"`
			Action    scopeJSON `json:"action"`
			Resource  scopeJSON `json:"resource"`
		}
		if b, err := pol.MarshalJSON(); err == nil && json.Unmarshal(b, &js) == nil {
			sp.principal, sp.action, sp.resource = js.Principal, js.Action, js.Resource
			sp.readsContext = bytes.Contains(b, []byte(`"context"`))
		} else {
			sp.principal.Op, sp.action.Op, sp.resource.Op = "All", "All", "All"
			sp.readsContext = true
		}
		p.policies = append(p.policies, sp)
		p.readsArguments = p.readsArguments || sp.readsArguments
		p.count++
	}
	return nil
}

// scanEntities notes whether the entities give an action parents.
func (p *Policies) scanEntities() {
	for uid, e := range p.entities {
		if uid.Type == "Action" && e.Parents.Len() > 0 {
			p.actionParents = true
		}
	}
}

// Len returns the number of policies.
func (p *Policies) Len() int { return p.count }

// Principal is who a request comes from.
type Principal struct {
	// Kind is "client" (a verified caller, ID its subject), "stdio" or
	// "anonymous".
	Kind string
	ID   string
	// Claims is the verified token's claims object (nil for none).
	Claims json.RawMessage
}

// Target is what a request is for, as the server knows it.
type Target struct {
	// Type is "Tool", "Prompt" or "Resource".
	Type string
	// ID is the exposed tool or prompt name, or the resource URI.
	ID string
	// Plugin is the name of the plugin that serves it.
	Plugin string
	// Digest is the plugin's SHA-256 (hex).
	Digest string
	// Grants are the plugin's grants, by kind: "http", "kv", "config",
	// "elicitation", "sampling", "roots", "fs", "env" present when granted.
	Grants []string
	// Annotations is the tool's annotations object (nil for none).
	Annotations json.RawMessage
	// Template is, for a Resource, the URI template its URI matched (or
	// the template itself, listing resources/templates/list); "" for a
	// static resource.
	Template string
	// Ephemeral marks a Target built for one request (an item the server
	// does not serve): its entities are not kept.
	Ephemeral bool
}

// Request is one decision to make.
type Request struct {
	Principal Principal
	Action    string
	// Target is what the request is for. Decide caches the entities it
	// builds for a Target by its address: a caller keeps one Target per
	// item and does not change it once used.
	Target          *Target
	Arguments       json.RawMessage // the call's arguments object; nil for none
	Transport       string          // "stdio" or "http"
	ProtocolVersion string
	Time            time.Time
	// Listing means a list is being filtered: context.listing is true
	// and context has no arguments, so that a policy that reads them
	// decides for itself what listing means (docs/governance.md); one
	// that reads them unguarded fails to evaluate and does not apply.
	Listing bool
}

// Decision is the answer to a Request.
type Decision struct {
	Allow bool
	// Policies are the ids of the policies that decided: the permits that
	// allowed, or the forbids that denied (none: nothing permitted).
	Policies []string
	// Errors are policies that could not be evaluated for this request
	// (they do not apply), as "id: message".
	Errors []string
}

// ErrBadRequest is returned by Decide for a request it cannot express.
var ErrBadRequest = errors.New("authz: bad request")

// Decide answers r.
func (p *Policies) Decide(r *Request) (Decision, error) {
	req, ents, key, constant, err := p.build(r)
	if err != nil {
		return Decision{}, err
	}
	sub := ents.policies
	// Every input of the decision is sub's (its policies, principal,
	// action, resource, entities) or the context: when that is one
	// kept for its second, so is the decision (see subset.last).
	if constant {
		if l := sub.last.Load(); l != nil && l.key == key {
			return l.d.clone(), nil
		}
	}
	sub.prepare(req)
	ok, diag := cedar.Authorize(sub, ents, req)
	var d Decision
	if sub.outcomes != nil {
		d = sub.decide(diag)
	} else {
		d.Allow = bool(ok)
		for _, re := range diag.Reasons {
			d.Policies = append(d.Policies, string(re.PolicyID))
		}
		for _, e := range diag.Errors {
			d.Errors = append(d.Errors, string(e.PolicyID)+": "+e.Message)
		}
	}
	if constant {
		sub.last.Store(&lastDecision{key, d.clone()})
	}
	return d, nil
}

// lastDecision is the decision of a subset in a context kept for its
// second.
type lastDecision struct {
	key contextKey
	d   Decision
}

// clone returns a copy of d that shares no slice with it.
func (d Decision) clone() Decision {
	d.Policies, d.Errors = slices.Clone(d.Policies), slices.Clone(d.Errors)
	return d
}

// entities layers the request's own entities over the static ones.
type entities struct {
	static    cedar.EntityMap
	principal *cedar.Entity
	plugin    *cedar.Entity
	resource  *cedar.Entity
	policies  *subset // the policies to evaluate
}

// Get implements cedar.EntityGetter.
func (e *entities) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	for _, own := range [...]*cedar.Entity{e.principal, e.resource, e.plugin} {
		if own != nil && own.UID == uid {
			return *own, true
		}
	}
	ent, ok := e.static[uid]
	return ent, ok
}

// maxCached bounds each of the caches of built entities (principals by
// claims, targets by pointer); past it a cache starts again empty.
const maxCached = 4096

func cacheGet[K comparable, V any](mu *sync.Mutex, m map[K]V, k K) (V, bool) {
	mu.Lock()
	defer mu.Unlock()
	v, ok := m[k]
	return v, ok
}

// cachePut adds k to the cache m, emptied first when it is full.
func cachePut[K comparable, V any](mu *sync.Mutex, m map[K]V, k K, v V) {
	mu.Lock()
	defer mu.Unlock()
	if len(m) >= maxCached {
		clear(m)
	}
	m[k] = v
}

// principalEntity returns the entity of a verified caller, built once
// for each subject and claims and then cached.
func (p *Policies) principalEntity(pr *Principal) (*cedar.Entity, error) {
	p.mu.Lock()
	ent, ok := p.principals[pr.ID][string(pr.Claims)]
	p.mu.Unlock()
	if ok {
		return ent, nil
	}
	uid := cedar.NewEntityUID("Client", cedar.String(pr.ID))
	attrs := cedar.RecordMap{}
	var parents []cedar.EntityUID
	if len(pr.Claims) > 0 {
		v, err := valueOfJSON(pr.Claims)
		if err != nil {
			return nil, fmt.Errorf("%w: claims: %w", ErrBadRequest, err)
		}
		rec, ok := v.(cedar.Record)
		if !ok {
			return nil, fmt.Errorf("%w: claims are not an object", ErrBadRequest)
		}
		for k, v := range rec.All() {
			attrs[k] = v
		}
		parents = groupsOf(pr.Claims, p.groupsClaim)
	}
	// Static entities may give a client more parents and attributes.
	if st, ok := p.entities[uid]; ok {
		for k, v := range st.Attributes.All() {
			if _, set := attrs[k]; !set {
				attrs[k] = v
			}
		}
		for g := range st.Parents.All() {
			parents = append(parents, g)
		}
	}
	ent = &cedar.Entity{UID: uid, Parents: cedar.NewEntityUIDSet(parents...), Attributes: cedar.NewRecord(attrs)}
	p.mu.Lock()
	if p.nprincipals >= maxCached {
		clear(p.principals)
		p.nprincipals = 0
	}
	byClaims := p.principals[pr.ID]
	if byClaims == nil {
		byClaims = map[string]*cedar.Entity{}
		p.principals[pr.ID] = byClaims
	}
	if _, dup := byClaims[string(pr.Claims)]; !dup {
		p.nprincipals++
	}
	byClaims[string(pr.Claims)] = ent
	p.mu.Unlock()
	return ent, nil
}

// targetEntities are the resource and plugin entities of a Target.
type targetEntities struct {
	resource, plugin cedar.Entity
	// subsets are the relevant policies of each action and kind of
	// principal (see relevant), built on first use; guarded by
	// Policies.mu.
	subsets map[subsetKey]*subset
}

// targetEntities returns the entities of t, cached by t's address: a
// caller that keeps its Targets (the server keeps one per item it
// serves) builds each once.
func (p *Policies) targetEntities(t *Target) (*targetEntities, error) {
	if te, ok := cacheGet(&p.mu, p.targets, t); ok {
		return te, nil
	}
	switch t.Type {
	case "Tool", "Prompt", "Resource":
	default:
		return nil, fmt.Errorf("%w: resource type %q", ErrBadRequest, t.Type)
	}
	te := &targetEntities{}
	plugin := cedar.NewEntityUID("Plugin", cedar.String(t.Plugin))
	grants := make([]cedar.Value, 0, len(t.Grants))
	for _, g := range t.Grants {
		grants = append(grants, cedar.String(g))
	}
	pattrs := cedar.RecordMap{
		"name":   cedar.String(t.Plugin),
		"digest": cedar.String(t.Digest),
		"grants": cedar.NewSet(grants...),
	}
	if st, ok := p.entities[plugin]; ok {
		for k, v := range st.Attributes.All() {
			if _, set := pattrs[k]; !set {
				pattrs[k] = v
			}
		}
	}
	te.plugin = cedar.Entity{UID: plugin, Attributes: cedar.NewRecord(pattrs)}
	rattrs := cedar.RecordMap{
		"name":   cedar.String(t.ID),
		"plugin": cedar.String(t.Plugin),
		"digest": cedar.String(t.Digest),
		"grants": cedar.NewSet(grants...),
	}
	switch t.Type {
	case "Tool":
		// MCP's defaults for absent hints (a tool is assumed to be
		// destructive and open-world unless it says otherwise).
		hints := map[string]bool{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true}
		if len(t.Annotations) > 0 {
			var ann map[string]json.RawMessage
			if json.Unmarshal(t.Annotations, &ann) == nil {
				for k := range hints {
					switch string(ann[k]) {
					case "true":
						hints[k] = true
					case "false":
						hints[k] = false
					}
				}
			}
		}
		for k, v := range hints {
			rattrs[cedar.String(k)] = cedar.Boolean(v)
		}
	case "Resource":
		rattrs["template"] = cedar.String(t.Template)
	}
	te.resource = cedar.Entity{UID: cedar.NewEntityUID(cedar.EntityType(t.Type), cedar.String(t.ID)),
		Parents: cedar.NewEntityUIDSet(plugin), Attributes: cedar.NewRecord(rattrs)}
	if !t.Ephemeral {
		cachePut(&p.mu, p.targets, t, te)
	}
	return te, nil
}

var (
	stdioEntity     = cedar.Entity{UID: cedar.NewEntityUID("Client", "stdio")}
	anonymousEntity = cedar.Entity{UID: cedar.NewEntityUID("Anonymous", "anonymous")}
	emptyRecord     = cedar.NewRecord(nil)
	// emptyArgs is emptyRecord as a Value, boxed once.
	emptyArgs cedar.Value = emptyRecord
)

// build returns the Cedar request of r and its entities, and, when its
// context is one kept for its second (no converted arguments), the key
// of that context (constant).
func (p *Policies) build(r *Request) (req cedar.Request, ents *entities, key contextKey, constant bool, err error) {
	var principal *cedar.Entity
	switch r.Principal.Kind {
	case "client":
		ent, err := p.principalEntity(&r.Principal)
		if err != nil {
			return cedar.Request{}, nil, contextKey{}, false, err
		}
		principal = ent
	case "stdio":
		principal = &stdioEntity
	case "anonymous":
		principal = &anonymousEntity
	default:
		return cedar.Request{}, nil, contextKey{}, false, fmt.Errorf("%w: principal kind %q", ErrBadRequest, r.Principal.Kind)
	}
	if r.Target == nil {
		return cedar.Request{}, nil, contextKey{}, false, fmt.Errorf("%w: no target", ErrBadRequest)
	}
	te, err := p.targetEntities(r.Target)
	if err != nil {
		return cedar.Request{}, nil, contextKey{}, false, err
	}
	action := cedar.NewEntityUID("Action", cedar.String(r.Action))
	p.mu.Lock()
	// Client::"stdio" and Anonymous::"anonymous" have no parents (Get
	// answers with the entities above, whatever the static entities
	// say), so their principal scopes are known with the subset; a
	// client's subset is the action's, narrowed for it (forClient).
	skey := subsetKey{r.Action, r.Principal.Kind}
	var who *cedar.EntityUID
	if skey.principal == "client" {
		skey.principal = ""
	} else {
		who = &principal.UID
	}
	sub := te.subsets[skey]
	if sub == nil {
		if te.subsets == nil {
			te.subsets = map[subsetKey]*subset{}
		}
		sub = p.relevant(action, te.resource.UID, te.plugin.UID, who)
		if who != nil {
			sub.fixed = &entities{static: p.entities, principal: principal, resource: &te.resource, plugin: &te.plugin, policies: sub}
		}
		te.subsets[skey] = sub
	}
	p.mu.Unlock()
	if who == nil {
		sub = p.forClient(sub, principal, &te.resource, &te.plugin, !r.Target.Ephemeral)
	}
	ents = sub.fixed

	var args cedar.Value
	converted := false
	if !r.Listing {
		args = emptyArgs
		// No policy can read an attribute it does not name: the
		// arguments are turned into Cedar values only when one does,
		// and only the members the policies name (project).
		if sub.readsArguments && len(r.Arguments) > 0 && string(r.Arguments) != "null" {
			var v cedar.Value
			n := -1
			var err error
			if sub.args.whole {
				v, err = valueOfJSON(r.Arguments)
			} else {
				v, n, err = project(r.Arguments, sub.args.names)
			}
			if err != nil {
				return cedar.Request{}, nil, contextKey{}, false, fmt.Errorf("%w: arguments: %w", ErrBadRequest, err)
			}
			// None of the members named: the context is that of
			// arguments {}, which is kept for its second.
			args, converted = v, n != 0
		}
	}
	key = contextKey{r.Transport, r.ProtocolVersion, r.Time.Unix(), r.Listing, sub.args.ctx}
	ctx := p.context(key, args, converted)
	return cedar.Request{
		Principal: principal.UID,
		Action:    action,
		Resource:  te.resource.UID,
		Context:   ctx,
	}, ents, key, !converted, nil
}

// subsetKey names a subset of a target's policies: its action, and the
// kind of principal ("stdio" or "anonymous"; "" for a client).
type subsetKey struct{ action, principal string }

// contextKey is a context without arguments (listing, or no relevant
// policy reads them): the same for every request of one second. members
// are the members it has besides arguments: those the policies
// evaluated name (argUse.ctx).
type contextKey struct {
	transport, version string
	sec                int64
	listing            bool
	members            ctxMembers
}

// context returns the context record of r with args (nil: none, when
// listing; converted: made of the request's arguments) and the other
// members key names; one without converted arguments is kept for the
// rest of its second, so that a list or a call that no policy checks the
// arguments of builds none.
func (p *Policies) context(key contextKey, args cedar.Value, converted bool) cedar.Record {
	sec := key.sec
	constant := !converted
	if constant {
		if c, ok := cacheGet(&p.mu, p.contexts, key); ok {
			return c
		}
	}
	ctx := make(cedar.RecordMap, 5)
	if key.members&ctxTransport != 0 {
		ctx["transport"] = cedar.String(key.transport)
	}
	if key.members&ctxProtocolVersion != 0 {
		ctx["protocolVersion"] = cedar.String(key.version)
	}
	if key.members&ctxTime != 0 {
		ctx["time"] = cedar.Long(sec)
	}
	if key.members&ctxListing != 0 {
		ctx["listing"] = cedar.Boolean(key.listing)
	}
	if args != nil {
		ctx["arguments"] = args
	}
	rec := cedar.NewRecord(ctx)
	if constant {
		p.mu.Lock()
		for k := range p.contexts {
			if k.sec != sec {
				delete(p.contexts, k) // an older second: not asked again
			}
		}
		p.mu.Unlock()
		cachePut(&p.mu, p.contexts, key, rec)
	}
	return rec
}

// groupsOf returns the Group parents named by claim in claims: a string
// array (or one string; a space-separated string is split).
func groupsOf(claims json.RawMessage, claim string) []cedar.EntityUID {
	var m map[string]json.RawMessage
	if json.Unmarshal(claims, &m) != nil {
		return nil
	}
	raw, ok := m[claim]
	if !ok {
		return nil
	}
	var names []string
	if json.Unmarshal(raw, &names) != nil {
		var one string
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		names = strings.Fields(one)
	}
	out := make([]cedar.EntityUID, 0, len(names))
	for _, n := range names {
		out = append(out, cedar.NewEntityUID("Group", cedar.String(n)))
	}
	return out
}

// maxDepth bounds the nesting of JSON turned into Cedar values.
const maxDepth = 32

// valueOfJSON turns JSON into a Cedar value: strings, booleans, integers
// (Long), other numbers (Decimal when exact to 4 places, else String),
// arrays (Set), objects (Record); nulls are left out of records and sets
// (a null alone is the empty record). It reads the bytes with jsonscan,
// with no value in between.
func valueOfJSON(raw json.RawMessage) (cedar.Value, error) {
	if !jsonscan.Valid(raw) {
		return nil, errors.New("invalid JSON")
	}
	return valueOf(raw, 0)
}

func valueOf(v []byte, depth int) (cedar.Value, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deep")
	}
	v = v[jsonscan.SkipSpace(v, 0):]
	switch jsonscan.Kind(v) {
	case 's':
		s, ok := jsonscan.String(v)
		if !ok {
			return nil, errors.New("invalid string")
		}
		return cedar.String(s), nil
	case 'b':
		return cedar.Boolean(v[0] == 't'), nil
	case 'n':
		n := strings.TrimSpace(string(v))
		if i, err := strconv.ParseInt(n, 10, 64); err == nil {
			return cedar.Long(i), nil
		}
		if f, err := strconv.ParseFloat(n, 64); err == nil && !math.IsInf(f, 0) {
			if d, err := cedar.NewDecimalFromFloat(f); err == nil {
				return d, nil
			}
		}
		return cedar.String(n), nil
	case 'a':
		it, _ := jsonscan.NewArrayIter(v)
		var vals []cedar.Value
		for {
			e, ok := it.Next()
			if !ok {
				break
			}
			if jsonscan.Kind(e) == 'z' {
				continue
			}
			cv, err := valueOf(e, depth+1)
			if err != nil {
				return nil, err
			}
			vals = append(vals, cv)
		}
		return cedar.NewSet(vals...), nil
	case 'o':
		rec := cedar.RecordMap{}
		err := members(v, func(k, e []byte) error {
			cv, err := valueOf(e, depth+1)
			if err == nil {
				rec[cedar.String(memberName(k))] = cv
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		return cedar.NewRecord(rec), nil
	case 'z':
		return emptyRecord, nil
	}
	return nil, errors.New("unexpected JSON value")
}

// members calls fn with the key (as written, escapes and all) and value
// of each member of the object v whose value is not null (an absent
// attribute, as Cedar has no null), in order, until fn fails.
func members(v []byte, fn func(k, e []byte) error) error {
	it, _ := jsonscan.NewObjectIter(v)
	for {
		k, e, ok := it.Next()
		if !ok {
			return nil
		}
		if jsonscan.Kind(e) == 'z' {
			continue
		}
		if err := fn(k, e); err != nil {
			return err
		}
	}
}

// memberName is the member name of key k as members gives it.
func memberName(k []byte) string {
	if bytes.IndexByte(k, '\\') >= 0 {
		name, _ := jsonscan.String(append(append([]byte{'"'}, k...), '"'))
		return name
	}
	return string(k)
}

// ParseEntityUID parses `Type::"id"` as the command line takes it.
func ParseEntityUID(s string) (typ, id string, err error) {
	t, rest, ok := strings.Cut(s, "::")
	if !ok || t == "" {
		return "", "", fmt.Errorf("authz: %q is not Type::\"id\"", s)
	}
	if err := json.Unmarshal([]byte(rest), &id); err != nil {
		return "", "", fmt.Errorf("authz: %q is not Type::\"id\": %w", s, err)
	}
	return t, id, nil
}
