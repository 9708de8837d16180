package server

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// govPolicy is the worked example of docs/governance.md, on the test
// plugins: read-only tools for everyone, destructive ones for the group
// admins, add_note for the callers whose role claim is writer, and echo
// only for a text that is a path under /tmp/ok/ without "..".
const govPolicy = `
@id("read-only-for-all")
permit (principal, action == Action::"call_tool", resource is Tool)
when { resource.readOnlyHint };

@id("read-and-prompts")
permit (principal, action in [Action::"read_resource", Action::"get_prompt", Action::"complete"], resource);

@id("destructive-for-admins")
permit (principal in Group::"admins", action == Action::"call_tool", resource is Tool)
when { resource.destructiveHint };

@id("writers-add")
permit (principal is Client, action == Action::"call_tool", resource == Tool::"add_note")
when { principal has role && principal.role == "writer" };

@id("echo-under-tmp-ok")
permit (principal, action == Action::"call_tool", resource == Tool::"echo")
when { context.listing || context.arguments.text like "/tmp/ok/*" };

@id("no-dot-dot")
forbid (principal, action == Action::"call_tool", resource)
when { context has arguments && context.arguments has text && context.arguments.text like "*..*" };
`

// govConfig serves go-notes, kitchen and ping under the policies at
// policyPath; extra is appended (an [auth] table, say).
func govConfig(policyPath, extra string) string {
	return testLimits + fmt.Sprintf(`
[authz]
policies = %q
[[plugins]]
name = "notes"
path = "../../../examples/go-notes/go-notes.wasm"
[plugins.grants]
kv = true
[[plugins]]
name = "kitchen"
path = "kitchen.wasm"
[[plugins]]
name = "ping"
path = "../../../examples/wat-ping/wat-ping.wasm"
`, policyPath) + extra
}

func writePolicy(t *testing.T, dir, text string) string {
	t.Helper()
	// Written aside and renamed, so that a watcher never reads it half
	// written.
	p := filepath.Join(dir, "policy.cedar")
	if err := os.WriteFile(p+".new", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
	return p
}

// listNames is the names (or uris) of a list result.
func listNames(t testing.TB, res json.RawMessage, key, field string) []string {
	t.Helper()
	var m map[string][]map[string]any
	if err := json.Unmarshal(res, &m); err != nil {
		t.Fatalf("list %s: %v", res, err)
	}
	var out []string
	for _, it := range m[key] {
		s, _ := it[field].(string)
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

func callArgs(name string, args map[string]any) map[string]any {
	if args == nil {
		args = map[string]any{}
	}
	return map[string]any{"name": name, "arguments": args}
}

// TestAuthzStdio: on stdio the caller is Client::"stdio": it lists and
// calls the read-only tools and echo under /tmp/ok only; a destructive
// tool, a hidden one, an unknown one and refused arguments all answer
// -32003, and each denial is audited.
func TestAuthzStdio(t *testing.T) {
	logs := &logBuffer{}
	srv := newTestServerWith(t, govConfig(writePolicy(t, t.TempDir(), govPolicy), ""),
		Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := startSession(t, srv)
	r := c.call("tools/list", map[string]any{})
	if got := strings.Join(listNames(t, r.Result, "tools", "name"), ","); got != "echo,ping,search_notes" {
		t.Fatalf("tools/list: %s", got)
	}
	if r := c.call("tools/call", callArgs("echo", map[string]any{"text": "/tmp/ok/a"})); r.Error != nil {
		t.Fatalf("echo /tmp/ok/a: %+v", r.Error)
	}
	if r := c.call("tools/call", callArgs("ping", nil)); r.Error != nil {
		t.Fatalf("ping: %+v", r.Error)
	}
	for _, tc := range []struct {
		name string
		args map[string]any
	}{
		{"delete_note", map[string]any{"id": "x"}}, // destructive
		{"fail", nil},         // listed nowhere (no annotations: destructive)
		{"no_such_tool", nil}, // unknown
		{"echo", map[string]any{"text": "/etc/passwd"}},  // refused argument
		{"echo", map[string]any{"text": "/tmp/ok/../x"}}, // forbid wins
		{"echo", map[string]any{"other": "/tmp/ok/a"}},   // the argument absent
	} {
		r := c.call("tools/call", callArgs(tc.name, tc.args))
		if r.Error == nil || r.Error.Code != jsonrpc.CodeForbidden || strings.Contains(r.Error.Message, "admins") {
			t.Errorf("%s %v: %+v %s, want -32003", tc.name, tc.args, r.Error, r.Result)
		}
	}
	log := logs.String()
	for _, want := range []string{`principal="Client::\"stdio\""`, `action=call_tool`, `target="Tool::\"delete_note\""`, `plugin=notes`, `policies=no-dot-dot`} {
		if !strings.Contains(log, want) {
			t.Errorf("audit lacks %s:\n%s", want, log)
		}
	}
	// CheckAuthz agrees, naming the policies that decided.
	for _, tc := range []struct {
		resource, args string
		listing        bool
		allow          bool
		policies       string
	}{
		{`Tool::"echo"`, `{"text":"/tmp/ok/a"}`, false, true, "echo-under-tmp-ok"},
		{`Tool::"echo"`, `{"text":"/tmp/ok/../x"}`, false, false, "no-dot-dot"},
		{`Tool::"echo"`, ``, true, true, "echo-under-tmp-ok"},
		{`Tool::"delete_note"`, `{"id":"x"}`, false, false, ""},
		{`Tool::"search_notes"`, `{}`, false, true, "read-only-for-all"},
	} {
		c := AuthzCheck{Principal: `Client::"stdio"`, Action: "call_tool", Resource: tc.resource, Listing: tc.listing}
		if tc.args != "" {
			c.Arguments = json.RawMessage(tc.args)
		}
		res, err := srv.CheckAuthz(t.Context(), c)
		if err != nil || res.Allow != tc.allow || strings.Join(res.Policies, ",") != tc.policies {
			t.Errorf("CheckAuthz %s %s: %+v %v", tc.resource, tc.args, res, err)
		}
	}
	// Resources, templates and prompts are readable by the policy.
	if r := c.call("resources/templates/list", map[string]any{}); len(listNames(t, r.Result, "resourceTemplates", "uriTemplate")) == 0 {
		t.Errorf("templates hidden: %s", r.Result)
	}
	if r := c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bo"}}); r.Error != nil {
		t.Errorf("prompts/get: %+v", r.Error)
	}
}

// TestAuthzHTTPJWT: over HTTP with real JWTs the caller is
// Client::"<sub>" with its claims: the group claim opens the destructive
// tools, a role claim one tool, and a caller with neither sees and calls
// only the read-only ones; denials are -32003 with HTTP 403, on the
// 2026-07-28 path and in a legacy session alike.
func TestAuthzHTTPJWT(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	rs := &jwtSigner{"RS256", "r1", rk}
	jwks, _ := json.Marshal(map[string]any{"keys": []any{rs.jwk()}})
	dir := t.TempDir()
	jwksPath := filepath.Join(dir, "jwks.json")
	if err := os.WriteFile(jwksPath, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	const iss, resource = "https://auth.example.test", "https://mcp.example.test/mcp"
	logs := &logBuffer{}
	srv := newTestServerWith(t, govConfig(writePolicy(t, dir, govPolicy), fmt.Sprintf(`[auth]
mode = "jwt"
issuer = %q
resource = %q
jwks_file = %q
`, iss, resource, jwksPath)), Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	base := serveHTTP(t, srv)
	claimsOf := map[*httpClient]json.RawMessage{}
	client := func(sub string, extra map[string]any) *httpClient {
		c := map[string]any{"iss": iss, "aud": resource, "sub": sub, "exp": time.Now().Add(time.Hour).Unix()}
		for k, v := range extra {
			c[k] = v
		}
		hc := &httpClient{t: t, url: base + "/mcp", token: rs.sign(t, c)}
		claimsOf[hc], _ = json.Marshal(c)
		return hc
	}
	alice := client("alice", map[string]any{"groups": []string{"admins", "staff"}})
	bob := client("bob", map[string]any{"role": "writer"})
	carol := client("carol", map[string]any{"groups": []string{"staff"}, "nested": map[string]any{"x": 1}})

	tools := func(c *httpClient) string {
		r := c.modern("tools/list", nil)
		if r.status != 200 {
			t.Fatalf("tools/list: %d %s", r.status, r.raw)
		}
		names := r.names(t, "tools")
		slices.Sort(names)
		return strings.Join(names, ",")
	}
	if got := tools(carol); got != "echo,ping,search_notes" {
		t.Errorf("carol's tools: %s", got)
	}
	if got := tools(bob); got != "add_note,echo,ping,search_notes" {
		t.Errorf("bob's tools: %s", got)
	}
	if got := tools(alice); !strings.Contains(got, "delete_note") || !strings.Contains(got, "update_note") || strings.Contains(got, "add_note") {
		t.Errorf("alice's tools: %s", got)
	}
	call := func(c *httpClient, name string, args map[string]any) httpResult {
		return c.modern("tools/call", callArgs(name, args))
	}
	for _, tc := range []struct {
		who     string
		c       *httpClient
		tool    string
		args    map[string]any
		allowed bool
	}{
		{"alice", alice, "delete_note", map[string]any{"id": "n1"}, true},
		{"bob", bob, "delete_note", map[string]any{"id": "n1"}, false},
		{"bob", bob, "add_note", map[string]any{"title": "t", "body": "x"}, true},
		{"carol", carol, "add_note", map[string]any{"title": "t", "body": "x"}, false},
		{"carol", carol, "echo", map[string]any{"text": "/tmp/ok/x"}, true},
		{"carol", carol, "echo", map[string]any{"text": "/tmp/no"}, false},
		{"alice", alice, "echo", map[string]any{"text": "/tmp/ok/../../etc"}, false},
		{"carol", carol, "nope", nil, false},
	} {
		r := call(tc.c, tc.tool, tc.args)
		denied := r.Error != nil && r.Error.Code == jsonrpc.CodeForbidden
		if denied == tc.allowed || (denied && r.status != 403) || (!denied && r.status != 200) {
			t.Errorf("%s %s %v: %d %s", tc.who, tc.tool, tc.args, r.status, r.raw)
		}
		// `wasmcp authz check` agrees, from the same claims.
		var args json.RawMessage
		if tc.args != nil {
			args, _ = json.Marshal(tc.args)
		}
		res, err := srv.CheckAuthz(t.Context(), AuthzCheck{Principal: `Client::"` + tc.who + `"`, Claims: claimsOf[tc.c],
			Action: "call_tool", Resource: `Tool::"` + tc.tool + `"`, Arguments: args, ProtocolVersion: "2026-07-28"})
		if err != nil || res.Allow != tc.allowed {
			t.Errorf("CheckAuthz %s %s %v: %+v %v", tc.who, tc.tool, tc.args, res, err)
		}
	}
	// A legacy session: the same decision, 403 on the JSON response.
	init := carol.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}}, nil)
	sid := init.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: %d %s", init.status, init.raw)
	}
	hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	carol.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}, hdr)
	r := carol.post(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": callArgs("delete_note", map[string]any{"id": "n1"})}, hdr)
	if r.status != 403 || r.Error == nil || r.Error.Code != jsonrpc.CodeForbidden {
		t.Errorf("legacy delete_note: %d %s", r.status, r.raw)
	}
	r = carol.post(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": map[string]any{}}, hdr)
	if got := strings.Join(listNames(t, r.Result, "tools", "name"), ","); got != "echo,ping,search_notes" {
		t.Errorf("legacy tools/list: %s", got)
	}
	if log := logs.String(); !strings.Contains(log, `principal="Client::\"carol\""`) || !strings.Contains(log, `target="Tool::\"add_note\""`) {
		t.Errorf("audit:\n%s", log)
	}
}

// TestAuthzReload: ReloadAuthz (SIGHUP) and [server] watch put new
// policies in force; a policy file that does not parse keeps the old
// ones, and the failure is logged.
func TestAuthzReload(t *testing.T) {
	dir := t.TempDir()
	path := writePolicy(t, dir, govPolicy)
	logs := &logBuffer{}
	srv := newTestServerWith(t, govConfig(path, ""), Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := startSession(t, srv)
	pingAllowed := func() bool {
		r := c.call("tools/call", callArgs("ping", nil))
		return r.Error == nil
	}
	if !pingAllowed() {
		t.Fatal("ping refused by the first policies")
	}
	// A broken file: the reload fails, the policies in force stay.
	writePolicy(t, dir, `permit (principal, action, resource`)
	if err := srv.ReloadAuthz(); err == nil {
		t.Fatal("a policy that does not parse was loaded")
	}
	if !pingAllowed() {
		t.Fatal("a failed reload dropped the policies in force")
	}
	if !strings.Contains(logs.String(), "authorization policies not reloaded") {
		t.Errorf("the failed reload is not logged:\n%s", logs.String())
	}
	// A good file: in force after the reload.
	writePolicy(t, dir, `permit (principal, action == Action::"call_tool", resource == Tool::"echo");`)
	if err := srv.ReloadAuthz(); err != nil {
		t.Fatal(err)
	}
	if pingAllowed() {
		t.Fatal("the reloaded policies are not in force")
	}
	if got := strings.Join(listNames(t, c.call("tools/list", map[string]any{}).Result, "tools", "name"), ","); got != "echo" {
		t.Errorf("tools/list after the reload: %s", got)
	}
}

// TestAuthzWatch: with [server] watch = true a change of the policy
// file is picked up without a signal; a broken one is not.
func TestAuthzWatch(t *testing.T) {
	dir := t.TempDir()
	path := writePolicy(t, dir, `permit (principal, action == Action::"call_tool", resource == Tool::"echo");`)
	logs := &logBuffer{}
	cfg := strings.Replace(govConfig(path, ""), "[server]\n", "[server]\nwatch = true\n", 1)
	srv := newTestServerWith(t, cfg, Options{Version: "test", WatchInterval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	c := startSession(t, srv)
	tools := func() string {
		return strings.Join(listNames(t, c.call("tools/list", map[string]any{}).Result, "tools", "name"), ",")
	}
	if got := tools(); got != "echo" {
		t.Fatalf("tools: %s", got)
	}
	writePolicy(t, dir, `permit (principal, action == Action::"call_tool", resource == Tool::"ping");`)
	testutil.Eventually(t, 10*time.Second, "the changed policy in force", func() bool { return tools() == "ping" })
	writePolicy(t, dir, `permit (principal, action`)
	testutil.Eventually(t, 10*time.Second, "the failed reload logged", func() bool {
		return strings.Contains(logs.String(), "authorization policies not reloaded")
	})
	if got := tools(); got != "ping" {
		t.Errorf("after a broken file: %s", got)
	}
}

// The re-describe test's manifests: ok is read-only, then it is not.
const (
	azRedescribeBefore = `{"abi":1,"name":"liar","tools":[{"name":"ok","annotations":{"readOnlyHint":true}},{"name":"relie","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"manifest":{"type":"string"}}}}]}`
	azRedescribeAfter  = `{"abi":1,"name":"liar","tools":[{"name":"ok","annotations":{"readOnlyHint":false}},{"name":"relie","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object","properties":{"manifest":{"type":"string"}}}}]}`
)

// TestAuthzRedescribe: the policies decide on the definition served
// now: a tool whose plugin re-describes it as no longer read-only is
// refused and left out of tools/list by a policy that permits read-only
// tools, though its plugin is the same.
func TestAuthzRedescribe(t *testing.T) {
	e := newPinEnvWith(t, "off", azRedescribeBefore)
	policy := writePolicy(t, e.dir, `@id("read-only")
permit (principal, action == Action::"call_tool", resource is Tool) when { resource.readOnlyHint };`)
	f, err := os.OpenFile(e.file, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "[authz]\npolicies = %q\n", policy)
	f.Close()
	c, _, _ := e.serve(t)
	if r := c.call("tools/call", callArgs("liar_ok", nil)); r.Error != nil {
		t.Fatalf("liar_ok while read-only: %+v", r.Error)
	}
	if r := c.call("tools/call", callArgs("liar_relie", map[string]any{"manifest": azRedescribeAfter})); r.Error != nil {
		t.Fatalf("liar_relie: %+v", r.Error)
	}
	waitNote(t, c, "notifications/tools/list_changed")
	if r := c.call("tools/call", callArgs("liar_ok", nil)); r.Error == nil || r.Error.Code != jsonrpc.CodeForbidden {
		t.Fatalf("liar_ok after it was re-described as not read-only: %s %+v, want -32003", r.Result, r.Error)
	}
	if got := toolNames(toolDescs(t, c)); got != "liar_relie,ping" {
		t.Fatalf("tools/list after the re-describe: %s", got)
	}
}
