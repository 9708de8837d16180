package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAuthzCheck: `wasmcp authz check` loads the plugins to know a
// tool's annotations and plugin, prints allow or deny with the policies
// that decided, and exits 0, 1 or 2 (a usage error).
func TestAuthzCheck(t *testing.T) {
	dir := t.TempDir()
	policy := `
@id("read-only")
permit (principal, action == Action::"call_tool", resource is Tool) when { resource.readOnlyHint };
@id("admins")
permit (principal in Group::"admins", action == Action::"call_tool", resource in Plugin::"notes");
@id("no-dots")
forbid (principal, action, resource) when { context has arguments && context.arguments has id && context.arguments.id like "*..*" };
`
	if err := os.WriteFile(filepath.Join(dir, "policy.cedar"), []byte(policy), 0o600); err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("../..")
	cfg := filepath.Join(dir, "wasmcp.toml")
	toml := fmt.Sprintf(`[server]
kv_dir = ":memory:"
[authz]
policies = "policy.cedar"
[[plugins]]
name = "notes"
path = %q
[plugins.grants]
kv = true
`, filepath.Join(root, "examples/go-notes/go-notes.wasm"))
	if err := os.WriteFile(cfg, []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"read-only for anyone", []string{"--principal", `Client::"carol"`, "--resource", `Tool::"search_notes"`}, 0, "allow\npermitted by: read-only\n"},
		{"destructive not for carol", []string{"--principal", `Client::"carol"`, "--resource", `Tool::"delete_note"`}, 1, "deny\nno policy permits it (default deny)\n"},
		{"destructive for a group", []string{"--principal", `Client::"alice"`, "--claims", `{"groups":["admins"]}`, "--resource", `Tool::"delete_note"`, "--args", `{"id":"a"}`}, 0, "allow\npermitted by: admins\n"},
		{"forbid wins", []string{"--principal", `Client::"alice"`, "--claims", `{"groups":["admins"]}`, "--resource", `Tool::"delete_note"`, "--args", `{"id":"../a"}`}, 1, "deny\nforbidden by: no-dots\n"},
		{"stdio", []string{"--resource", `Tool::"add_note"`}, 1, "deny\n"},
		{"no resource", []string{"--principal", `Client::"carol"`}, 2, ""},
		{"bad principal", []string{"--principal", `User::"x"`, "--resource", `Tool::"search_notes"`}, 2, ""},
		{"bad args", []string{"--resource", `Tool::"search_notes"`, "--args", `{nope`}, 2, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := wasmcp(t, "", append([]string{"authz", "check", "--config", cfg}, tc.args...)...)
			if code != tc.code || !strings.HasPrefix(stdout, tc.out) {
				t.Errorf("exit %d, want %d; stdout %q, want %q; stderr %s", code, tc.code, stdout, tc.out, stderr)
			}
		})
	}
}
