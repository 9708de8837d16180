package authz

import (
	"encoding/json"
	"testing"
	"time"
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
