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
//     access control;
//   - action: Action::"call_tool", "read_resource", "get_prompt",
//     "complete";
//   - resource: Tool::"<exposed name>", Prompt::"<name>" or
//     Resource::"<uri>", parent Plugin::"<plugin>", with the attributes
//     the server knows (annotations, plugin name, digest, grants);
//   - context: arguments, transport, protocolVersion, time (seconds since
//     the epoch, UTC) and listing (true when a list is being filtered).
//
// Nothing is allowed unless a permit policy allows it, and a forbid
// policy always wins.
package authz

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cedar-policy/cedar-go"
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
	effects     map[cedar.PolicyID]cedar.Effect
	refsArgs    map[cedar.PolicyID]bool // the policy reads context.arguments
	count       int
}

// Load reads the policies at path (a .cedar file, or a directory whose
// *.cedar files are read in name order), the entities file (JSON in
// Cedar's entity format; "" for none) and the claim that names a caller's
// groups ("" for "groups").
func Load(path, entities, groupsClaim string) (*Policies, error) {
	if groupsClaim == "" {
		groupsClaim = "groups"
	}
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
	p := &Policies{set: cedar.NewPolicySet(), groupsClaim: groupsClaim,
		effects: map[cedar.PolicyID]cedar.Effect{}, refsArgs: map[cedar.PolicyID]bool{}}
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
	return p, nil
}

// Parse builds Policies from Cedar source text (name labels its policy
// ids and errors) and entities JSON (nil for none).
func Parse(name string, src, entities []byte, groupsClaim string) (*Policies, error) {
	if groupsClaim == "" {
		groupsClaim = "groups"
	}
	p := &Policies{set: cedar.NewPolicySet(), groupsClaim: groupsClaim,
		effects: map[cedar.PolicyID]cedar.Effect{}, refsArgs: map[cedar.PolicyID]bool{}}
	if err := p.add(name, src); err != nil {
		return nil, err
	}
	if len(entities) > 0 {
		if err := json.Unmarshal(entities, &p.entities); err != nil {
			return nil, fmt.Errorf("authz: entities: %w", err)
		}
	}
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
		p.effects[id] = pol.Effect()
		p.refsArgs[id] = bytes.Contains(pol.MarshalCedar(), []byte("arguments"))
		p.count++
	}
	return nil
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
}

// Request is one decision to make.
type Request struct {
	Principal       Principal
	Action          string
	Target          Target
	Arguments       json.RawMessage // the call's arguments object; nil for none
	Transport       string          // "stdio" or "http"
	ProtocolVersion string
	Time            time.Time
	// Listing means a list is being filtered: the arguments are not
	// known, and a permit that reads context.arguments counts as one that
	// could allow the call.
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
	req, ents, err := p.build(r)
	if err != nil {
		return Decision{}, err
	}
	ok, diag := cedar.Authorize(p.set, ents, req)
	d := Decision{Allow: bool(ok)}
	for _, re := range diag.Reasons {
		d.Policies = append(d.Policies, string(re.PolicyID))
	}
	for _, e := range diag.Errors {
		d.Errors = append(d.Errors, string(e.PolicyID)+": "+e.Message)
	}
	if !d.Allow && r.Listing && len(d.Policies) == 0 {
		// No forbid applies and no permit applies outright: a permit that
		// failed only for want of the arguments may allow some call.
		for _, e := range diag.Errors {
			if p.effects[e.PolicyID] == cedar.Permit && p.refsArgs[e.PolicyID] {
				d.Allow = true
				d.Policies = append(d.Policies, string(e.PolicyID))
			}
		}
	}
	return d, nil
}

// entities layers the request's own entities over the static ones.
type entities struct {
	static cedar.EntityMap
	own    [4]cedar.Entity
	n      int
}

func (e *entities) Get(uid cedar.EntityUID) (cedar.Entity, bool) {
	for i := range e.n {
		if e.own[i].UID == uid {
			return e.own[i], true
		}
	}
	ent, ok := e.static[uid]
	return ent, ok
}

func (e *entities) add(ent cedar.Entity) {
	if e.n < len(e.own) {
		e.own[e.n] = ent
		e.n++
	}
}

func (p *Policies) build(r *Request) (cedar.Request, *entities, error) {
	ents := &entities{static: p.entities}
	var principal cedar.EntityUID
	switch r.Principal.Kind {
	case "client":
		principal = cedar.NewEntityUID("Client", cedar.String(r.Principal.ID))
		attrs := cedar.RecordMap{}
		var parents []cedar.EntityUID
		if len(r.Principal.Claims) > 0 {
			v, err := valueOfJSON(r.Principal.Claims)
			if err != nil {
				return cedar.Request{}, nil, fmt.Errorf("%w: claims: %w", ErrBadRequest, err)
			}
			rec, ok := v.(cedar.Record)
			if !ok {
				return cedar.Request{}, nil, fmt.Errorf("%w: claims are not an object", ErrBadRequest)
			}
			for k, v := range rec.All() {
				attrs[k] = v
			}
			parents = groupsOf(r.Principal.Claims, p.groupsClaim)
		}
		// Static entities may give a client more parents and attributes.
		if st, ok := p.entities[principal]; ok {
			for k, v := range st.Attributes.All() {
				if _, set := attrs[k]; !set {
					attrs[k] = v
				}
			}
			for g := range st.Parents.All() {
				parents = append(parents, g)
			}
		}
		ents.add(cedar.Entity{UID: principal, Parents: cedar.NewEntityUIDSet(parents...), Attributes: cedar.NewRecord(attrs)})
	case "stdio":
		principal = cedar.NewEntityUID("Client", "stdio")
	case "anonymous":
		principal = cedar.NewEntityUID("Anonymous", "anonymous")
	default:
		return cedar.Request{}, nil, fmt.Errorf("%w: principal kind %q", ErrBadRequest, r.Principal.Kind)
	}

	t := &r.Target
	switch t.Type {
	case "Tool", "Prompt", "Resource":
	default:
		return cedar.Request{}, nil, fmt.Errorf("%w: resource type %q", ErrBadRequest, t.Type)
	}
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
	ents.add(cedar.Entity{UID: plugin, Attributes: cedar.NewRecord(pattrs)})
	resource := cedar.NewEntityUID(cedar.EntityType(t.Type), cedar.String(t.ID))
	rattrs := cedar.RecordMap{
		"name":   cedar.String(t.ID),
		"plugin": cedar.String(t.Plugin),
		"digest": cedar.String(t.Digest),
		"grants": cedar.NewSet(grants...),
	}
	if t.Type == "Tool" {
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
	}
	ents.add(cedar.Entity{UID: resource, Parents: cedar.NewEntityUIDSet(plugin), Attributes: cedar.NewRecord(rattrs)})

	ctx := cedar.RecordMap{
		"transport":       cedar.String(r.Transport),
		"protocolVersion": cedar.String(r.ProtocolVersion),
		"time":            cedar.Long(r.Time.Unix()),
		"listing":         cedar.Boolean(r.Listing),
	}
	if !r.Listing {
		args := cedar.Value(cedar.NewRecord(nil))
		if len(r.Arguments) > 0 && string(r.Arguments) != "null" {
			v, err := valueOfJSON(r.Arguments)
			if err != nil {
				return cedar.Request{}, nil, fmt.Errorf("%w: arguments: %w", ErrBadRequest, err)
			}
			args = v
		}
		ctx["arguments"] = args
	}
	return cedar.Request{
		Principal: principal,
		Action:    cedar.NewEntityUID("Action", cedar.String(r.Action)),
		Resource:  resource,
		Context:   cedar.NewRecord(ctx),
	}, ents, nil
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
// arrays (Set), objects (Record); nulls are left out of records and sets.
func valueOfJSON(raw json.RawMessage) (cedar.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return valueOf(v, 0)
}

func valueOf(v any, depth int) (cedar.Value, error) {
	if depth > maxDepth {
		return nil, errors.New("nested too deep")
	}
	switch x := v.(type) {
	case string:
		return cedar.String(x), nil
	case bool:
		return cedar.Boolean(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return cedar.Long(i), nil
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) {
			if d, err := cedar.NewDecimalFromFloat(f); err == nil {
				return d, nil
			}
		}
		return cedar.String(x.String()), nil
	case []any:
		vals := make([]cedar.Value, 0, len(x))
		for _, e := range x {
			if e == nil {
				continue
			}
			cv, err := valueOf(e, depth+1)
			if err != nil {
				return nil, err
			}
			vals = append(vals, cv)
		}
		return cedar.NewSet(vals...), nil
	case map[string]any:
		rec := cedar.RecordMap{}
		for k, e := range x {
			if e == nil {
				continue
			}
			cv, err := valueOf(e, depth+1)
			if err != nil {
				return nil, err
			}
			rec[cedar.String(k)] = cv
		}
		return cedar.NewRecord(rec), nil
	case nil:
		return cedar.NewRecord(nil), nil
	}
	return nil, fmt.Errorf("unexpected JSON value %T", v)
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
