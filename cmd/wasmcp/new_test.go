package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNew: a `wasmcp new` project builds with its one command and answers
// a call through `wasmcp call`. C is the quickest to build; every language
// is built and called by internal/scaffold's own test, so this one checks
// the command's wiring (flags, SDK discovery, exit codes).
func TestNew(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin per language")
	}
	needs := map[string][]string{
		"go":             {"go"},
		"c":              {"clang", "wasm-ld"},
		"rust":           {"/usr/bin/rustc"},
		"assemblyscript": {"node", "npm"},
	}
	root, _ := filepath.Abs("../..")
	for _, lang := range []string{"c"} {
		t.Run(lang, func(t *testing.T) {
			for _, tool := range needs[lang] {
				if _, err := exec.LookPath(tool); err != nil {
					missingToolchain(t, "%s not installed (scripts/install-deps.sh installs it)", tool)
				}
			}
			dir := filepath.Join(t.TempDir(), "proj")
			if _, stderr, code := wasmcp(t, "", "new", "--lang", lang, "--dir", dir, "--sdk", root, "hello_"+lang[:1]); code != 0 {
				t.Fatalf("new: exit %d: %s", code, stderr)
			}
			build := exec.Command("./build.sh")
			build.Dir = dir
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("build.sh: %v\n%s", err, out)
			}
			stdout, stderr, code := wasmcp(t, "", "call", "--plugins", dir, "greet", `{"name":"Zed"}`)
			if code != 0 || !strings.Contains(stdout, "Zed") {
				t.Fatalf("call: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
}

// missingToolchain skips t, or fails it when WASMCP_REQUIRE_TOOLCHAINS is
// set (scripts/test.sh sets it after installing the toolchains, so that a
// missing install step cannot pass as a skip).
func missingToolchain(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("WASMCP_REQUIRE_TOOLCHAINS") != "" {
		t.Fatalf(format+" (WASMCP_REQUIRE_TOOLCHAINS is set)", args...)
	}
	t.Skipf(format, args...)
}
