package authz

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

const testPolicies = `
@id("read-only-for-all")
permit (principal, action == Action::"call_tool", resource is Tool)
when { resource.readOnlyHint };

@id("admins-destructive")
permit (principal in Group::"admins", action == Action::"call_tool", resource is Tool);

@id("files-under-data")
permit (principal is Client, action == Action::"call_tool", resource == Tool::"fs_write")
when { context.listing || context.arguments.path like "/data/*" };

@id("unguarded")
permit (principal, action == Action::"call_tool", resource == Tool::"tmp_write")
when { context.arguments.path like "/tmp/*" };

@id("no-etc")
forbid (principal, action == Action::"call_tool", resource)
when { context has arguments && context.arguments has path && context.arguments.path like "/etc/*" };
`

func TestDecide(t *testing.T) {
	p, err := Parse("test.cedar", []byte(testPolicies), nil, "")
	if err != nil {
		t.Fatal(err)
	}
	ro := &Target{Type: "Tool", ID: "read", Plugin: "files", Annotations: json.RawMessage(`{"readOnlyHint":true}`)}
	del := &Target{Type: "Tool", ID: "delete", Plugin: "files"}
	wr := &Target{Type: "Tool", ID: "fs_write", Plugin: "files"}
	tw := &Target{Type: "Tool", ID: "tmp_write", Plugin: "files"}
	alice := Principal{Kind: "client", ID: "alice", Claims: json.RawMessage(`{"sub":"alice","groups":["admins"]}`)}
	bob := Principal{Kind: "client", ID: "bob", Claims: json.RawMessage(`{"sub":"bob"}`)}
	tests := []struct {
		name     string
		r        Request
		allow    bool
		deciders []string
	}{
		{"read-only for anyone", Request{Principal: Principal{Kind: "stdio"}, Target: ro}, true, []string{"read-only-for-all"}},
		{"destructive for the group", Request{Principal: alice, Target: del}, true, []string{"admins-destructive"}},
		{"destructive not for others", Request{Principal: bob, Target: del}, false, nil},
		{"unannotated is not read-only", Request{Principal: Principal{Kind: "anonymous"}, Target: del}, false, nil},
		{"argument allowed", Request{Principal: bob, Target: wr, Arguments: json.RawMessage(`{"path":"/data/x"}`)}, true, []string{"files-under-data"}},
		{"argument refused", Request{Principal: bob, Target: wr, Arguments: json.RawMessage(`{"path":"/tmp/x"}`)}, false, nil},
		{"forbid wins", Request{Principal: alice, Target: del, Arguments: json.RawMessage(`{"path":"/etc/passwd"}`)}, false, []string{"no-etc"}},
		{"listed when arguments could allow", Request{Principal: bob, Target: wr, Listing: true}, true, []string{"files-under-data"}},
		{"not listed otherwise", Request{Principal: bob, Target: del, Listing: true}, false, nil},
		{"an unguarded read of the arguments does not list", Request{Principal: bob, Target: tw, Listing: true}, false, nil},
		{"an unguarded read of the arguments allows the call", Request{Principal: bob, Target: tw, Arguments: json.RawMessage(`{"path":"/tmp/a"}`)}, true, []string{"unguarded"}},
		{"a missing argument does not apply", Request{Principal: bob, Target: tw}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.r.Action, tt.r.Transport, tt.r.Time = CallTool, "http", time.Unix(0, 0)
			d, err := p.Decide(&tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allow != tt.allow {
				t.Fatalf("allow = %v, want %v (%+v)", d.Allow, tt.allow, d)
			}
			if len(tt.deciders) > 0 && (len(d.Policies) != len(tt.deciders) || d.Policies[0] != tt.deciders[0]) {
				t.Fatalf("policies = %v, want %v", d.Policies, tt.deciders)
			}
		})
	}
}

func TestParseRefusesBrokenPolicy(t *testing.T) {
	if _, err := Parse("bad.cedar", []byte(`permit (principal, action, resource`), nil, ""); err == nil {
		t.Fatal("a policy that does not parse was accepted")
	}
}

func TestParseEntityUID(t *testing.T) {
	typ, id, err := ParseEntityUID(`Client::"alice"`)
	if err != nil || typ != "Client" || id != "alice" {
		t.Fatalf("got %q %q %v", typ, id, err)
	}
	if _, _, err := ParseEntityUID(`alice`); err == nil {
		t.Fatal("accepted a bare name")
	}
}

func FuzzValueOfJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,"x",null,{"b":true}]}`))
	f.Add([]byte(`1e400`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = valueOfJSON(b)
	})
}

// BenchmarkDecide is one tools/call decision: a client with claims and
// groups calling a tool with arguments, against the 20 rules of
// testdata/bench20.cedar, the Target kept as the server keeps it.
//
//	go test -run XXX -bench Decide -benchmem ./internal/authz/
func BenchmarkDecide(b *testing.B) {
	t := &Target{Type: "Tool", ID: "base64_encode", Plugin: "hash", Digest: "ab12", Grants: []string{"kv"},
		Annotations: json.RawMessage(`{"readOnlyHint":false,"destructiveHint":false}`)}
	benchDecide(b, &Request{Principal: Principal{Kind: "client", ID: "alice", Claims: json.RawMessage(`{"sub":"alice","groups":["staff","dev"],"email":"a@example.com"}`)},
		Action: CallTool, Target: t, Arguments: json.RawMessage(`{"text":"hi","path":"/tmp/ok/a"}`), Transport: "http",
		ProtocolVersion: "2025-11-25", Time: time.Unix(1_700_000_000, 0)}, false)
}

// BenchmarkDecideStdio is the decision of BenchmarkAuthzToolCall in
// internal/server: Client::"stdio" calls base64_encode of plugin hash
// with {"text":"hi"}, against testdata/bench20.cedar.
func BenchmarkDecideStdio(b *testing.B) {
	benchDecide(b, stdioBenchRequest(time.Now()), false)
}

// BenchmarkDecideStdioNewSecond is BenchmarkDecideStdio with every
// request in a new second: nothing kept for the second (the context,
// the decision) is reused, as for the first call of each second.
func BenchmarkDecideStdioNewSecond(b *testing.B) {
	benchDecide(b, stdioBenchRequest(time.Unix(1_800_000_000, 0)), true)
}

func stdioBenchRequest(at time.Time) *Request {
	t := &Target{Type: "Tool", ID: "base64_encode", Plugin: "hash", Digest: "ab12",
		Annotations: json.RawMessage(`{"readOnlyHint":false,"destructiveHint":false}`)}
	return &Request{Principal: Principal{Kind: "stdio"}, Action: CallTool, Target: t, Arguments: json.RawMessage(`{"text":"hi"}`),
		Transport: "stdio", ProtocolVersion: "2025-11-25", Time: at}
}

// benchDecide decides r against testdata/bench20.cedar, allowed, once
// per iteration (each a second later with nextSecond).
func benchDecide(b *testing.B, r *Request, nextSecond bool) {
	p, err := Load("testdata/bench20.cedar", "", "")
	if err != nil {
		b.Fatal(err)
	}
	if p.Len() != 20 {
		b.Fatalf("%d policies", p.Len())
	}
	if d, err := p.Decide(r); err != nil || !d.Allow {
		b.Fatalf("%+v %v", d, err)
	}
	b.ReportAllocs()
	cpu := testutil.CPUTime()
	for b.Loop() {
		if nextSecond {
			r.Time = r.Time.Add(time.Second)
		}
		if d, _ := p.Decide(r); !d.Allow {
			b.Fatal("denied")
		}
	}
	testutil.ReportCPU(b, cpu)
}

// TestRelevantAgreesWithAll: deciding with the policies whose scopes may
// match (relevant) gives the decision, deciders and errors of the whole
// set (plainDecide), for every action, on tools, prompts and resources in and out of
// the plugins the policies name, with and without arguments, with an
// action group in the entities.
func TestRelevantAgreesWithAll(t *testing.T) {
	src, err := os.ReadFile("testdata/bench20.cedar")
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, strings.NewReplacer(`@id("`, `@id("again-`).Replace(testPolicies)+`
@id("action-group")
permit (principal, action in Action::"writes", resource is Prompt in Plugin::"notes");
@id("set")
permit (principal, action in [Action::"get_prompt", Action::"complete"], resource == Prompt::"greet");
`...)
	ents := []byte(`[{"uid":{"type":"Action","id":"get_prompt"},"parents":[{"type":"Action","id":"writes"}],"attrs":{}}]`)
	for _, withEnts := range []bool{false, true} {
		var e []byte
		if withEnts {
			e = ents
		}
		p, err := Parse("all.cedar", src, e, "")
		if err != nil {
			t.Fatal(err)
		}
		principals := []Principal{{Kind: "stdio"}, {Kind: "anonymous"},
			{Kind: "client", ID: "a", Claims: json.RawMessage(`{"groups":["admins","ops","web"],"role":"writer"}`)},
			{Kind: "client", ID: "b", Claims: json.RawMessage(`{"groups":["interns"],"suspended":true}`)}}
		var targets []*Target
		for _, plugin := range []string{"hash", "notes", "files", "quarantine", ""} {
			for _, typ := range []string{"Tool", "Prompt", "Resource"} {
				for _, id := range []string{"fs_write", "write_file", "deploy", "pay", "greet", "x"} {
					targets = append(targets, &Target{Type: typ, ID: id, Plugin: plugin, Grants: []string{"http"},
						Annotations: json.RawMessage(`{"readOnlyHint":true}`)})
				}
			}
		}
		n := 0
		for _, pr := range principals {
			for _, tg := range targets {
				for _, action := range []string{CallTool, ReadResource, GetPrompt, Complete} {
					for _, args := range []string{"", `{"path":"/etc/x","amount":5000}`, `{"path":"/data/a"}`} {
						for _, listing := range []bool{false, true} {
							r := &Request{Principal: pr, Action: action, Target: tg, Arguments: json.RawMessage(args),
								Transport: "http", ProtocolVersion: "2024-11-05", Time: time.Unix(1_800_000_000, 0), Listing: listing}
							agree(t, p, r, "")
							n++
						}
					}
				}
			}
		}
		t.Logf("%d requests agree", n)
	}
}

// TestEphemeralNotKept: deciding for Targets marked Ephemeral (items the
// server does not serve) keeps nothing of them, for a client either, so
// that calls to unknown names cannot churn the caches.
func TestEphemeralNotKept(t *testing.T) {
	p, err := Load("testdata/bench20.cedar", "", "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		for _, pr := range []Principal{{Kind: "stdio"}, {Kind: "client", ID: "a", Claims: json.RawMessage(`{"groups":["ops"]}`)}} {
			r := &Request{Principal: pr, Action: CallTool, Target: &Target{Type: "Tool", ID: strings.Repeat("x", i), Ephemeral: true},
				Transport: "http", Time: time.Unix(1_800_000_000, 0)}
			if _, err := p.Decide(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(p.targets) != 0 || len(p.clients) != 0 {
		t.Fatalf("kept %d targets and %d client subsets", len(p.targets), len(p.clients))
	}
}
