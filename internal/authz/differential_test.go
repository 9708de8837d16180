package authz

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cedar-policy/cedar-go"
)

// plainDecide is Decide without any of its shortcuts, the reference the
// differential tests hold Decide to: entities built afresh (no cache),
// the arguments converted whole, the context built for the request, and
// every policy of the set evaluated. The one rule it shares with Decide
// is when arguments are converted at all (and so when arguments that do
// not convert are refused): when a policy whose scopes may match names
// "arguments" (TestRelevantAgreesWithAll holds that subset to the set).
func plainDecide(p *Policies, r *Request) (Decision, error) {
	fresh := newPolicies(p.groupsClaim)
	fresh.entities = p.entities
	ents := &entities{static: p.entities}
	switch r.Principal.Kind {
	case "client":
		ent, err := fresh.principalEntity(&r.Principal)
		if err != nil {
			return Decision{}, err
		}
		ents.principal = ent
	case "stdio":
		ents.principal = &cedar.Entity{UID: cedar.NewEntityUID("Client", "stdio")}
	case "anonymous":
		ents.principal = &cedar.Entity{UID: cedar.NewEntityUID("Anonymous", "anonymous")}
	default:
		return Decision{}, fmt.Errorf("%w: principal kind %q", ErrBadRequest, r.Principal.Kind)
	}
	if r.Target == nil {
		return Decision{}, fmt.Errorf("%w: no target", ErrBadRequest)
	}
	tc := *r.Target
	tc.Ephemeral = true
	te, err := fresh.targetEntities(&tc)
	if err != nil {
		return Decision{}, err
	}
	ents.resource, ents.plugin = &te.resource, &te.plugin
	action := cedar.NewEntityUID("Action", cedar.String(r.Action))
	ctx := cedar.RecordMap{
		"transport":       cedar.String(r.Transport),
		"protocolVersion": cedar.String(r.ProtocolVersion),
		"time":            cedar.Long(r.Time.Unix()),
		"listing":         cedar.Boolean(r.Listing),
	}
	if !r.Listing {
		ctx["arguments"] = emptyRecord
		if p.relevant(action, te.resource.UID, te.plugin.UID, nil).readsArguments && len(r.Arguments) > 0 && string(r.Arguments) != "null" {
			v, err := valueOfJSON(r.Arguments)
			if err != nil {
				return Decision{}, fmt.Errorf("%w: arguments: %w", ErrBadRequest, err)
			}
			ctx["arguments"] = v
		}
	}
	ok, diag := cedar.Authorize(p.set, ents, cedar.Request{Principal: ents.principal.UID, Action: action,
		Resource: te.resource.UID, Context: cedar.NewRecord(ctx)})
	d := Decision{Allow: bool(ok)}
	for _, re := range diag.Reasons {
		d.Policies = append(d.Policies, string(re.PolicyID))
	}
	for _, e := range diag.Errors {
		d.Errors = append(d.Errors, string(e.PolicyID)+": "+e.Message)
	}
	return d, nil
}

// agree fails t unless Decide answers r as plainDecide does: the same
// decision, the same deciding policies and the same evaluation errors
// (in any order), or both a bad request.
func agree(t *testing.T, p *Policies, r *Request, src string) {
	t.Helper()
	got, gerr := p.Decide(r)
	want, werr := plainDecide(p, r)
	if (gerr != nil) != (werr != nil) || gerr != nil && (!errors.Is(gerr, ErrBadRequest) || gerr.Error() != werr.Error()) {
		t.Fatalf("%s\n%s: error %v, want %v", src, describe(r), gerr, werr)
	}
	sorted := func(s []string) []string { return slices.Sorted(slices.Values(s)) }
	if got.Allow != want.Allow || !slices.Equal(sorted(got.Policies), sorted(want.Policies)) || !slices.Equal(sorted(got.Errors), sorted(want.Errors)) {
		t.Fatalf("%s\n%s:\ngot  %+v\nwant %+v", src, describe(r), got, want)
	}
}

func describe(r *Request) string {
	return fmt.Sprintf("%s %s %s::%q in %q args %s listing %v t %d %s %s", r.Principal.Kind+":"+r.Principal.ID+string(r.Principal.Claims),
		r.Action, r.Target.Type, r.Target.ID, r.Target.Plugin, r.Arguments, r.Listing, r.Time.Unix(), r.Transport, r.ProtocolVersion)
}

// Fragments of the random policies: scopes, and conditions that read
// context.arguments every way the argument analysis (argUseOf) tells
// apart, and the rest of what a request carries.
var (
	genPrincipals = []string{`principal`, `principal == Client::"a"`, `principal in Group::"admins"`, `principal is Client`,
		`principal is Anonymous`, `principal == Client::"stdio"`, `principal is Client in Group::"ops"`,
		`principal in Plugin::"hash"`, `principal in Group::"ops"`, `principal in Client::"c"`}
	genActions = []string{`action`, `action == Action::"call_tool"`, `action in [Action::"get_prompt", Action::"complete"]`,
		`action in Action::"writes"`, `action == Action::"read_resource"`}
	genResources = []string{`resource`, `resource == Tool::"fs_write"`, `resource in Plugin::"hash"`, `resource is Tool`,
		`resource is Prompt in Plugin::"notes"`, `resource == Resource::"x"`}
	genConds = []string{
		`context.arguments.path like "/etc/*"`,
		`context.arguments.path like "*..*"`,
		`context.arguments has path`,
		`context has arguments && context.arguments has path && context.arguments.path like "/tmp/ok/*"`,
		`context has arguments.amount && context.arguments.amount > 1000`,
		`context.arguments["a b"] == "x"`,
		`context.arguments has "a b"`,
		`context.arguments.nested.inner == "v"`,
		`context.arguments.nested has inner`,
		`context.arguments.amount + 1 > 5`,
		`[context.arguments.x].contains(true)`,
		`if context.listing then true else context.arguments.path like "/data/*"`,
		`context.arguments == {}`,
		`context.arguments == {"path": "/etc/x"}`,
		`context.arguments != {"x": true}`,
		`{v: context}.v.arguments has path`,
		`{Value: context}.Value.arguments.path == "/etc/x"`,
		`{".": context.arguments}["."] has amount`,
		`context == {}`,
		`context has arguments`,
		`context.listing`,
		`context.time > 1800000000`,
		`context.transport == "http"`,
		`context.protocolVersion == "2024-11-05"`,
		`resource.readOnlyHint`,
		`resource.grants.contains("http")`,
		`principal has role && principal.role == "writer"`,
		`principal.suspended`,
		`"arguments" == "arguments"`,
	}
	genArgKeys   = []string{"path", "amount", "a b", "x", "nested", `pa\u0074h`, "other"}
	genArgValues = []string{`"/etc/x"`, `"/tmp/ok/a"`, `"/data/../etc"`, `"/data/a"`, `5000`, `5`, `1.5`, `1e400`, `-0`, `true`, `false`,
		`null`, `{"inner":"v"}`, `{"inner":null}`, `[1,null,"x"]`, `[]`, `{}`, `"x"`, `" spaced "`}
)

func pick[T any](rng *rand.Rand, s []T) T { return s[rng.IntN(len(s))] }

// genPolicySet returns the Cedar source of 1 to 12 random policies.
func genPolicySet(rng *rand.Rand) string {
	var b strings.Builder
	for i := range 1 + rng.IntN(12) {
		effect := "permit"
		if rng.IntN(3) == 0 {
			effect = "forbid"
		}
		fmt.Fprintf(&b, "@id(\"p%d\")\n%s (%s, %s, %s)", i, effect, pick(rng, genPrincipals), pick(rng, genActions), pick(rng, genResources))
		for range rng.IntN(3) {
			kw := "when"
			if rng.IntN(4) == 0 {
				kw = "unless"
			}
			cond := pick(rng, genConds)
			switch rng.IntN(4) {
			case 0:
				cond = "(" + cond + ") && (" + pick(rng, genConds) + ")"
			case 1:
				cond = "(" + cond + ") || (" + pick(rng, genConds) + ")"
			case 2:
				cond = "!(" + cond + ")"
			}
			fmt.Fprintf(&b, " %s { %s }", kw, cond)
		}
		b.WriteString(";\n")
	}
	return b.String()
}

// genArguments returns random arguments: mostly objects of the members
// the policies name and others, with nulls, repeated and escaped keys,
// and now and then something that is not an object, not JSON, or
// nested deeper than valueOfJSON converts.
func genArguments(rng *rand.Rand) json.RawMessage {
	switch rng.IntN(14) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(pick(rng, []string{`null`, ` null `, `[1]`, `"s"`, `5`, `{"path":`, `{"path":"/etc/x"}x`, "{\"path\":\"\xff\"}"}))
	case 2:
		n := 31 + rng.IntN(4)
		inner := pick(rng, []string{`1`, `null`, `{}`, `[]`})
		return json.RawMessage(`{"path":"/etc/x","deep":` + strings.Repeat("[", n) + inner + strings.Repeat("]", n) + `}`)
	}
	var b strings.Builder
	b.WriteString(pick(rng, []string{"{", " { "}))
	for i := range rng.IntN(5) {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "%q:%s", pick(rng, genArgKeys), pick(rng, genArgValues))
	}
	b.WriteString("}")
	// %q escaped the backslash of pa\u0074h: undo it, so that the key
	// is the JSON escape of "path".
	return json.RawMessage(strings.ReplaceAll(b.String(), `\\u0074`, `\u0074`))
}

// genScenario decides requests of random principals, actions, targets,
// arguments, times and transports with one random policy set, each
// against plainDecide. Targets are kept, as the server keeps them, so
// that the caches of entities, subsets and contexts are exercised.
func genScenario(t *testing.T, seed uint64, requests int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	src := genPolicySet(rng)
	var ents []byte
	if rng.IntN(2) == 0 {
		ents = []byte(`[{"uid":{"type":"Action","id":"get_prompt"},"parents":[{"type":"Action","id":"writes"}],"attrs":{}},
			{"uid":{"type":"Group","id":"admins"},"parents":[{"type":"Group","id":"ops"}],"attrs":{}},
			{"uid":{"type":"Client","id":"c"},"parents":[{"type":"Group","id":"admins"},{"type":"Plugin","id":"hash"}],"attrs":{"role":"writer"}},
			{"uid":{"type":"Plugin","id":"notes"},"parents":[{"type":"Group","id":"ops"}],"attrs":{}},
			{"uid":{"type":"Group","id":"web"},"parents":[{"type":"Plugin","id":"notes"}],"attrs":{}}]`)
	}
	p, err := Parse("gen.cedar", []byte(src), ents, "")
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	principals := []Principal{{Kind: "stdio"}, {Kind: "anonymous"},
		{Kind: "client", ID: "a", Claims: json.RawMessage(`{"groups":["admins","web"],"role":"writer"}`)},
		{Kind: "client", ID: "b", Claims: json.RawMessage(`{"groups":"interns ops","suspended":true}`)},
		{Kind: "client", ID: "c"}, {Kind: "client", ID: "stdio"},
		{Kind: "client", ID: "d", Claims: json.RawMessage(`{"groups":["ops"]}`)}}
	var targets []*Target
	for _, plugin := range []string{"hash", "notes", ""} {
		for _, typ := range []string{"Tool", "Prompt", "Resource"} {
			for _, id := range []string{"fs_write", "x", "greet"} {
				targets = append(targets, &Target{Type: typ, ID: id, Plugin: plugin, Grants: pick(rng, [][]string{nil, {"http"}}),
					Annotations: json.RawMessage(pick(rng, []string{``, `{"readOnlyHint":true}`}))})
			}
		}
	}
	for range requests {
		r := &Request{Principal: pick(rng, principals), Action: pick(rng, []string{CallTool, ReadResource, GetPrompt, Complete}),
			Target: pick(rng, targets), Arguments: genArguments(rng), Transport: pick(rng, []string{"stdio", "http"}),
			ProtocolVersion: pick(rng, []string{"2024-11-05", "2025-11-25"}), Time: time.Unix(1_800_000_000+rng.Int64N(3), 0),
			Listing: rng.IntN(5) == 0}
		agree(t, p, r, src)
	}
}

// TestDecideAgreesWithPlain holds Decide (relevant subsets, projected
// arguments, cached entities and contexts) to plainDecide over random
// policy sets, principals, targets and arguments.
func TestDecideAgreesWithPlain(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	for seed := range uint64(n) {
		genScenario(t, seed, 200)
	}
}

// FuzzDecideAgreesWithPlain is TestDecideAgreesWithPlain from fuzzed
// seeds: go test -fuzz DecideAgreesWithPlain ./internal/authz
func FuzzDecideAgreesWithPlain(f *testing.F) {
	f.Add(uint64(0))
	f.Add(uint64(1) << 40)
	f.Fuzz(func(t *testing.T, seed uint64) {
		genScenario(t, seed, 50)
	})
}

// TestArgUseOf: the members a policy is found to read of
// context.arguments, or whole, and the other context members it names.
func TestArgUseOf(t *testing.T) {
	tests := []struct {
		cond  string
		names []string
		whole bool
		ctx   ctxMembers
	}{
		{`context.arguments.path like "/etc/*"`, []string{"path"}, false, 0},
		{`context has arguments && context.arguments has path`, []string{"path"}, false, 0},
		{`context has arguments.amount.x`, []string{"amount"}, false, 0},
		{`context.arguments["a b"] == 1 && context.arguments.nested.inner == 2`, []string{"a b", "nested"}, false, 0},
		{`context.listing && context.time > 0 && resource.arguments == 1`, nil, false, ctxListing | ctxTime},
		{`context has transport && context["protocolVersion"] == "x" && context.other == 1`, nil, false, ctxTransport | ctxProtocolVersion},
		{`context.arguments == {}`, nil, true, 0},
		{`context.arguments is Foo`, nil, true, 0},
		{`{v: context}.v.arguments.path == ""`, nil, true, ctxAll},
		{`{Value: context}.Value has arguments`, nil, true, ctxAll},
		{`{".": {left: context, attr: "arguments"}}["."].left.time > 0`, nil, true, ctxAll},
		{`[context.arguments].contains({})`, nil, true, 0},
		{`context == {}`, nil, true, ctxAll},
	}
	for _, tt := range tests {
		list, err := cedar.NewPolicyListFromBytes("t", []byte(`permit (principal, action, resource) when { `+tt.cond+` };`))
		if err != nil {
			t.Fatalf("%s: %v", tt.cond, err)
		}
		u := argUseOf(list[0])
		if u.whole != tt.whole || !tt.whole && !slices.Equal(slices.Sorted(slices.Values(u.names)), tt.names) || u.ctx != tt.ctx {
			t.Errorf("%s: got %+v, want names %v whole %v ctx %b", tt.cond, u, tt.names, tt.whole, tt.ctx)
		}
	}
}

// TestDecideConcurrent: decisions made at once from several goroutines
// on one Policies (its caches and subsets built and prepared by
// whichever comes first) agree with plainDecide; run with -race.
func TestDecideConcurrent(t *testing.T) {
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		src := genPolicySet(rng)
		p, err := Parse("gen.cedar", []byte(src), nil, "")
		if err != nil {
			t.Fatal(err)
		}
		targets := []*Target{{Type: "Tool", ID: "fs_write", Plugin: "hash"}, {Type: "Prompt", ID: "greet", Plugin: "notes"},
			{Type: "Tool", ID: "x", Plugin: "notes", Annotations: json.RawMessage(`{"readOnlyHint":true}`)}}
		principals := []Principal{{Kind: "stdio"}, {Kind: "anonymous"}, {Kind: "client", ID: "a", Claims: json.RawMessage(`{"groups":["admins"]}`)}}
		done := make(chan struct{})
		for g := range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range 200 {
					r := &Request{Principal: principals[(i+g)%len(principals)], Action: CallTool, Target: targets[i%len(targets)],
						Arguments: json.RawMessage(`{"path":"/etc/x","amount":5000}`), Transport: "http", Time: time.Unix(1_800_000_000, 0)}
					got, gerr := p.Decide(r)
					want, werr := plainDecide(p, r)
					if (gerr != nil) != (werr != nil) || got.Allow != want.Allow || len(got.Policies) != len(want.Policies) || len(got.Errors) != len(want.Errors) {
						t.Errorf("%s\n%s: got %+v %v, want %+v %v", src, describe(r), got, gerr, want, werr)
						return
					}
				}
			}()
		}
		for range 4 {
			<-done
		}
	}
}
