package wasmcp_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const mod = "github.com/wasmcp/wasmcp"

// pkgInfo is what `go list` says of one package.
type pkgInfo struct {
	imports []string // direct imports
	deps    []string // transitive dependencies
}

// listPackages runs go list over the module (host build) and over the guest
// packages (wasip1 build).
func listPackages(t *testing.T) map[string]pkgInfo {
	t.Helper()
	pkgs := map[string]pkgInfo{}
	run := func(env []string, patterns ...string) {
		args := append([]string{"list", "-e", "-f", "{{.ImportPath}}|{{join .Imports \" \"}}|{{join .Deps \" \"}}"}, patterns...)
		cmd := exec.Command("go", args...)
		cmd.Env = append(cmd.Environ(), env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v\n%s", err, stderr.String())
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "|", 3)
			if len(parts) != 3 {
				continue
			}
			pkgs[parts[0]] = pkgInfo{imports: strings.Fields(parts[1]), deps: strings.Fields(parts[2])}
		}
	}
	run(nil, "./...")
	run([]string{"GOOS=wasip1", "GOARCH=wasm"}, "./sdk/...", "./examples/...")
	return pkgs
}

func within(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// TestLayering enforces the import rules of DESIGN.md: imports point one
// way, wazero stays inside runtime and hostapi, the protocol engine knows
// nothing of Wasm, and every third-party module has exactly one importer.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t)
	ours := func(p string) bool { return within(p, mod) }
	wazero := "github.com/tetratelabs/wazero"
	owners := map[string][]string{ // third-party module -> packages allowed to import it
		wazero:                       {mod + "/runtime", mod + "/hostapi"},
		"github.com/BurntSushi/toml": {mod + "/internal/config"},
		"golang.org/x/sys":           {mod + "/runtime"},
		"github.com/santhosh-tekuri/jsonschema/v6": {mod + "/internal/schema"},
		"github.com/google/go-containerregistry":   {mod + "/internal/fetch"},
		"github.com/sigstore/sigstore-go":          {mod + "/internal/verify"},
		"github.com/sigstore/sigstore":             {mod + "/internal/verify"},
		"go.opentelemetry.io":                      {mod + "/internal/telemetry"},
		"github.com/prometheus":                    {mod + "/internal/telemetry"},
	}
	for path, info := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, mod), "/")
		for _, imp := range info.imports {
			if !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") || ours(imp) {
				continue
			}
			allowed := false
			for m, pkgsAllowed := range owners {
				if within(imp, m) {
					for _, a := range pkgsAllowed {
						if path == a || within(path, a) {
							allowed = true
						}
					}
				}
			}
			if !allowed {
				t.Errorf("%s imports third-party %s; only the owners listed in layering_test.go may", path, imp)
			}
		}
		var forbidden []string
		switch {
		case within(rel, "internal/jsonscan"), within(rel, "internal/abi"), within(rel, "internal/auth"):
			forbidden = []string{mod}
		case within(rel, "internal/jsonrpc"):
			for _, dep := range info.deps {
				if ours(dep) && dep != path && dep != mod+"/internal/jsonscan" {
					t.Errorf("%s depends on %s; of ours it may use only internal/jsonscan", path, dep)
				}
			}
		case within(rel, "internal/mcp"):
			forbidden = []string{mod + "/runtime", mod + "/hostapi", mod + "/plugins", mod + "/internal/server", wazero}
		case within(rel, "runtime"):
			forbidden = []string{mod + "/hostapi", mod + "/plugins", mod + "/internal/mcp", mod + "/internal/server", mod + "/internal/config"}
		case within(rel, "hostapi"):
			forbidden = []string{mod + "/plugins", mod + "/internal/mcp", mod + "/internal/server", mod + "/internal/config"}
		case within(rel, "plugins"):
			// plugins reaches wazero only through runtime and hostapi.
			for _, imp := range info.imports {
				if within(imp, wazero) {
					t.Errorf("%s imports %s directly; only runtime and hostapi may", path, imp)
				}
			}
			forbidden = []string{mod + "/internal/mcp", mod + "/internal/server", mod + "/internal/config"}
		case within(rel, "sdk"), within(rel, "examples"):
			forbidden = []string{mod + "/runtime", mod + "/hostapi", mod + "/plugins", mod + "/internal/mcp", mod + "/internal/server", mod + "/internal/config", wazero}
		}
		for _, dep := range info.deps {
			for _, f := range forbidden {
				if within(dep, f) && !(f == mod && dep == path) {
					t.Errorf("%s depends on %s, which the layering rules forbid", path, dep)
				}
			}
		}
	}
}
