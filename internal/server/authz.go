package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/authz"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/telemetry"
	"github.com/wasmcp/wasmcp/plugins"
)

// errForbidden is the one answer to a request the policies refuse: the
// same for an item the caller may not see, one that does not exist and
// arguments it may not pass, and it names no policy.
var errForbidden = &jsonrpc.Error{Code: jsonrpc.CodeForbidden, Message: "Forbidden: the server's authorization policy does not allow this request"}

// denial is the error of a refused request: to the client it is
// errForbidden (it unwraps to it, and the engine answers with the
// *jsonrpc.Error it finds), while the audit trail reads why.
type denial struct {
	// why names the policies that decided ("forbid by a, b"), or says
	// that none permitted or that the request could not be decided.
	why string
}

func (d *denial) Error() string { return errForbidden.Message }
func (d *denial) Unwrap() error { return errForbidden }

// authorizer enforces [authz] (docs/governance.md): every call, read,
// prompt and completion is decided by the Cedar policies, and the lists
// hold only what the caller may use. A nil *authorizer allows
// everything.
type authorizer struct {
	cfg    config.Authz
	log    *slog.Logger
	denied *telemetry.DenialLog
	reg    *plugins.Registry
	pol    atomic.Pointer[authz.Policies]
	now    func() time.Time

	// targets keeps one authz.Target per item served (the policies
	// cache the entities they build by its address).
	targets  sync.Map // targetKey -> *authz.Target
	ntargets atomic.Int64

	// lists keeps the lists filter decided, for the rest of their
	// second.
	listMu sync.Mutex
	lists  map[listKey]listed
}

// targetKey names an item: its kind ('T' tool, 'P' prompt, 'R'
// resource, 'M' resource template), the plugin that serves it (a
// re-describe makes a new one) and its name or URI.
type targetKey struct {
	kind     byte
	plugin   *plugins.Plugin
	id, tmpl string
}

// maxTargets bounds the Targets kept; past it they are built again.
const maxTargets = 8192

// newAuthorizer loads the policies of cfg; nil when [authz] names none.
func newAuthorizer(cfg *config.Config, log *slog.Logger, denied *telemetry.DenialLog, reg *plugins.Registry) (*authorizer, error) {
	if !cfg.Authz.Enabled() {
		return nil, nil
	}
	a := &authorizer{cfg: cfg.Authz, log: log, denied: denied, reg: reg, now: time.Now, lists: map[listKey]listed{}}
	p, err := a.load()
	if err != nil {
		return nil, err
	}
	a.pol.Store(p)
	log.Info("authorization policies loaded", "policies", p.Len(), "path", cfg.Authz.Policies)
	return a, nil
}

func (a *authorizer) load() (*authz.Policies, error) {
	return authz.Load(a.cfg.Policies, a.cfg.Entities, a.cfg.GroupsClaim)
}

// reload reads the policies again; when they do not load, the ones in
// force stay and the error is logged and returned.
func (a *authorizer) reload() error {
	p, err := a.load()
	if err != nil {
		a.log.Error("authorization policies not reloaded; the previous ones stay in force", "error", err)
		return err
	}
	a.pol.Store(p)
	a.log.Info("authorization policies reloaded", "policies", p.Len())
	return nil
}

// watch reloads the policies when their files change (their content, or
// the set of .cedar files of a directory), polling every interval. A
// change is loaded once two polls in a row see it, so that a file
// caught half written (truncated, then written) is not loaded.
func (a *authorizer) watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = time.Second
	}
	loaded := a.fingerprint()
	seen := loaded
	t := time.NewTicker(interval)
	defer t.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-t.C:
			fp := a.fingerprint()
			if fp != loaded && fp == seen {
				loaded = fp
				_ = a.reload()
			}
			seen = fp
		}
	}
}

// fingerprint describes the policy and entity files as they are now:
// the digest of each file's content (a rewrite within the clock's
// granularity is seen too) and the set of .cedar files of a directory.
func (a *authorizer) fingerprint() string {
	var b strings.Builder
	sum := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			fmt.Fprintf(&b, "%s -;", p)
			return
		}
		fmt.Fprintf(&b, "%s %x;", p, sha256.Sum256(data))
	}
	if st, err := os.Stat(a.cfg.Policies); err == nil && st.IsDir() {
		files, _ := filepath.Glob(filepath.Join(a.cfg.Policies, "*.cedar"))
		slices.Sort(files)
		for _, f := range files {
			sum(f)
		}
	} else {
		sum(a.cfg.Policies)
	}
	if a.cfg.Entities != "" {
		sum(a.cfg.Entities)
	}
	return b.String()
}

// principal is the caller of r as the policies see it.
func principal(r *mcp.Request) authz.Principal {
	switch {
	case !r.HTTP:
		return authz.Principal{Kind: "stdio"}
	case r.Principal != "":
		p := authz.Principal{Kind: "client", ID: r.Principal}
		if r.Claims != nil {
			p.Claims = *r.Claims
		}
		return p
	}
	return authz.Principal{Kind: "anonymous"}
}

// principalName is the principal's entity, for the audit.
func principalName(p *authz.Principal) string {
	switch p.Kind {
	case "stdio":
		return `Client::"stdio"`
	case "anonymous":
		return `Anonymous::"anonymous"`
	}
	id, _ := json.Marshal(p.ID)
	return "Client::" + string(id)
}

// target returns the Target of item (kind and id as targetKey), kept
// for the next requests; an item the registry does not serve (found
// false) gets a Target of its own with no plugin.
func (a *authorizer) target(kind byte, id string, it plugins.Item, found bool) *authz.Target {
	typ := "Resource"
	switch kind {
	case 'T':
		typ = "Tool"
	case 'P':
		typ = "Prompt"
	}
	if !found {
		return &authz.Target{Type: typ, ID: id, Ephemeral: true}
	}
	key := targetKey{kind, it.Plugin, id, it.Template}
	if t, ok := a.targets.Load(key); ok {
		return t.(*authz.Target)
	}
	t := &authz.Target{Type: typ, ID: id, Plugin: it.Plugin.Name(), Digest: it.Plugin.SHA256(), Grants: grantKinds(it.Plugin.Spec()), Template: it.Template}
	if kind == 'T' {
		if ann, ok := jsonscan.Member(it.Def, "annotations"); ok && jsonscan.Kind(ann) == 'o' {
			t.Annotations = slices.Clone(ann)
		}
	}
	if a.ntargets.Add(1) > maxTargets {
		a.targets.Clear()
		a.ntargets.Store(1)
	}
	if prev, loaded := a.targets.LoadOrStore(key, t); loaded {
		return prev.(*authz.Target)
	}
	return t
}

// grantKinds names what a plugin is granted: "http", "kv", "config",
// "elicitation", "sampling", "roots", "fs" and "env" when present.
func grantKinds(s plugins.Spec) []string {
	var g []string
	add := func(on bool, kind string) {
		if on {
			g = append(g, kind)
		}
	}
	add(len(s.Grants.HTTP) > 0, "http")
	add(s.Grants.KV, "kv")
	add(len(s.Grants.Config) > 0, "config")
	add(s.Grants.Elicitation, "elicitation")
	add(s.Grants.Sampling, "sampling")
	add(s.Grants.Roots, "roots")
	add(len(s.Sandbox.Mounts) > 0, "fs")
	add(len(s.Sandbox.Env) > 0, "env")
	return g
}

// request builds the decision of r for target t.
func (a *authorizer) request(r *mcp.Request, action string, t *authz.Target, args json.RawMessage, listing bool) authz.Request {
	transport := "stdio"
	if r.HTTP {
		transport = "http"
	}
	return authz.Request{Principal: principal(r), Action: action, Target: t, Arguments: args, Transport: transport,
		ProtocolVersion: r.ProtocolVersion, Time: a.now(), Listing: listing}
}

// callTarget returns the action and target of a call method, and the
// definition decided on: routed's, the item the registry routed r to,
// when set; else the item the registry would route r to now.
func (a *authorizer) callTarget(r *mcp.Request, routed *plugins.Item) (action string, t *authz.Target, args, def json.RawMessage) {
	p := &r.Parsed
	var kind byte
	var id string
	switch r.Method {
	case "tools/call":
		action, kind, id, args = authz.CallTool, 'T', p.Name, p.Arguments
	case "prompts/get":
		action, kind, id, args = authz.GetPrompt, 'P', p.Name, p.Arguments
	case "resources/read":
		action, kind, id = authz.ReadResource, 'R', p.URI
	default: // completion/complete
		action, kind, id = authz.Complete, 'R', p.Ref.URI
		if p.Ref.Type == "ref/prompt" {
			kind, id = 'P', p.Ref.Name
		}
	}
	var it plugins.Item
	found := routed != nil
	if found {
		it = *routed
	} else {
		switch kind {
		case 'T':
			it, found = a.reg.Tool(id)
		case 'P':
			it, found = a.reg.Prompt(id)
		default:
			if action == authz.Complete {
				it, found = a.reg.Template(id)
			}
			if !found {
				it, found = a.reg.Resource(id, access(r))
			}
		}
	}
	if kind == 'R' && action == authz.Complete && found && it.Template == id {
		kind = 'M' // the completion of a template's own argument
	}
	return action, a.target(kind, id, it, found), args, it.Def
}

// allow decides a call, read, prompt or completion, on the item routed
// when set (see callTarget): it returns the definition it decided on,
// and nil or a *denial (errForbidden to the client) after logging the
// denial.
func (a *authorizer) allow(r *mcp.Request, routed *plugins.Item) (json.RawMessage, error) {
	if a == nil {
		return nil, nil
	}
	req, d, def, err := a.decide(r, routed)
	if err == nil && d.Allow {
		return def, nil
	}
	detail := strings.Join(d.Policies, ",")
	why := "no policy permits it"
	switch {
	case err != nil:
		detail = err.Error()
		why = "it could not be decided: " + detail
	case detail != "":
		why = "forbidden by " + detail
	}
	t := req.Target
	a.denied.Authz(r, principalName(&req.Principal), req.Action, t.Type+"::"+entityID(t.ID), t.Plugin, detail)
	return def, &denial{why: why}
}

// decide is the decision of a call, read, prompt or completion r (on
// routed, when set), as the server takes it and `wasmcp authz check`
// shows it.
func (a *authorizer) decide(r *mcp.Request, routed *plugins.Item) (authz.Request, authz.Decision, json.RawMessage, error) {
	action, t, args, def := a.callTarget(r, routed)
	req := a.request(r, action, t, args, false)
	d, err := a.pol.Load().Decide(&req)
	return req, d, def, err
}

func entityID(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// filter returns the items of a list (kind as targetKey) that the caller
// of r may use: each decided with its action and context.listing true.
// items is not modified.
//
// Results are kept for the rest of the second (context.time counts
// seconds, so nothing a policy reads has changed): the engine reads the
// tool list on every tools/call (task support, x-mcp-header), and a list
// decided again each time would cost a decision per tool per call.
func (a *authorizer) filter(r *mcp.Request, kind byte, items []json.RawMessage) []json.RawMessage {
	if a == nil || len(items) == 0 {
		return items
	}
	pol := a.pol.Load()
	req := a.request(r, "", nil, nil, true)
	key := listKey{pol: pol, kind: kind, first: &items[0], n: len(items), principal: req.Principal.Kind, id: req.Principal.ID,
		claims: string(req.Principal.Claims), transport: req.Transport, version: req.ProtocolVersion}
	sec := req.Time.Unix()
	a.listMu.Lock()
	if l, ok := a.lists[key]; ok && l.sec == sec {
		a.listMu.Unlock()
		return l.items
	}
	a.listMu.Unlock()
	out := a.decideList(pol, &req, r, kind, items)
	a.listMu.Lock()
	if len(a.lists) >= maxLists {
		clear(a.lists)
	}
	a.lists[key] = listed{sec: sec, items: out}
	a.listMu.Unlock()
	return out
}

// listKey names one list as one caller sees it in one second: the
// policies, the list (its backing array: the registry's lists do not
// change once built) and everything of the request a policy can read.
type listKey struct {
	pol                                       *authz.Policies
	kind                                      byte
	first                                     *json.RawMessage
	n                                         int
	principal, id, claims, transport, version string
}

type listed struct {
	sec   int64
	items []json.RawMessage
}

// maxLists bounds the lists kept; past it they are decided again.
const maxLists = 1024

// decideList is filter's work: each item decided with its action.
func (a *authorizer) decideList(pol *authz.Policies, req *authz.Request, r *mcp.Request, kind byte, items []json.RawMessage) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(items))
	for _, item := range items {
		var it plugins.Item
		var ok bool
		var id string
		switch kind {
		case 'T':
			id = member(item, "name")
			it, ok = a.reg.Tool(id)
			req.Action = authz.CallTool
		case 'P':
			id = member(item, "name")
			it, ok = a.reg.Prompt(id)
			req.Action = authz.GetPrompt
		case 'R':
			id = member(item, "uri")
			it, ok = a.reg.Resource(id, access(r))
			req.Action = authz.ReadResource
		case 'M':
			id = member(item, "uriTemplate")
			it, ok = a.reg.Template(id)
			req.Action = authz.ReadResource
		}
		req.Target = a.target(kind, id, it, ok)
		if d, err := pol.Decide(req); err == nil && d.Allow {
			out = append(out, item)
		}
	}
	return out
}
