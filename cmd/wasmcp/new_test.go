package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewOutsideCheckout is the first use of `wasmcp new`: the binary is
// copied out of the checkout and run from an empty folder elsewhere; the
// project of every language builds with its one command (./build.sh),
// with Go's module proxy off, and answers a call through `wasmcp call`.
func TestNewOutsideCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a plugin per language")
	}
	needs := map[string][]string{
		"go":             {"go"},
		"c":              {"clang", "wasm-ld"},
		"rust":           {"rustc"},
		"assemblyscript": {"node", "npm"},
	}
	exe := filepath.Join(t.TempDir(), "wasmcp")
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, dir string, env []string, name string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"XDG_CACHE_HOME=" + cacheHome(), "GOPROXY=off", "GOFLAGS=-mod=readonly"}, env...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return stdout.String(), stderr.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), 0
	}
	for _, lang := range []string{"c", "go", "rust", "assemblyscript"} {
		t.Run(lang, func(t *testing.T) {
			for _, tool := range needs[lang] {
				if _, err := exec.LookPath(tool); err != nil {
					missingToolchain(t, "%s not installed (scripts/install-deps.sh installs it)", tool)
				}
			}
			work := t.TempDir()
			name := "hello_" + lang[:1]
			if _, stderr, code := run(t, work, nil, exe, "new", "--lang", lang, name); code != 0 {
				t.Fatalf("new: exit %d: %s", code, stderr)
			}
			proj := filepath.Join(work, name)
			if lang == "assemblyscript" {
				linkNodeModules(t, proj)
			}
			if stdout, stderr, code := run(t, proj, nil, "./build.sh"); code != 0 {
				t.Fatalf("build.sh: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if lang == "go" { // the SDK's docs and native tests work at once, without go mod tidy
				if stdout, stderr, code := run(t, proj, nil, "go", "doc", "github.com/wasmcp/wasmcp/sdk/go", "AddTool"); code != 0 || !strings.Contains(stdout, "func AddTool") {
					t.Errorf("go doc: exit %d\n%s\n%s", code, stdout, stderr)
				}
				if stdout, stderr, code := run(t, proj, nil, "go", "test", "."); code != 0 {
					t.Errorf("go test: exit %d\n%s\n%s", code, stdout, stderr)
				}
			}
			if err := os.WriteFile(filepath.Join(work, "wasmcp.toml"), []byte("[server]\nplugin_dirs = [\""+name+"\"]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			stdout, stderr, code := run(t, work, nil, exe, "call", "--config", "wasmcp.toml", "greet", `{"name":"Zed"}`)
			if code != 0 || !strings.Contains(stdout, "Hello, Zed!") {
				t.Fatalf("call: exit %d\n%s\n%s", code, stdout, stderr)
			}
		})
	}
	t.Run("exists", func(t *testing.T) {
		work := t.TempDir()
		if err := os.WriteFile(filepath.Join(work, "x"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := run(t, work, nil, exe, "new", "--lang", "c", "--dir", ".", "p")
		if code != 2 || !strings.Contains(stderr, "not empty") {
			t.Fatalf("new into a non-empty dir: exit %d: %s", code, stderr)
		}
	})
}

// linkNodeModules points an AssemblyScript project's node_modules at the
// checkout's npm cache (.cache/npm, filled by scripts/build-sdk-examples.sh)
// when it exists, so the test does not install the packages again.
func linkNodeModules(t *testing.T, proj string) {
	t.Helper()
	cache, _ := filepath.Abs("../../.cache/npm/node_modules")
	if _, err := os.Stat(filepath.Join(cache, ".bin", "asc")); err != nil {
		return // build.sh runs npm install
	}
	if err := os.Symlink(cache, filepath.Join(proj, "node_modules")); err != nil {
		t.Fatal(err)
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
