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

// allowed is, for each package of this module (its path relative to the
// module root, "." for the root), the packages of ours it may import
// directly. It is the import graph written out: a new package, or a new
// arrow between two packages, fails TestLayering until it is added here,
// so that it is chosen rather than noticed; an arrow that is no longer
// drawn fails too, so the list stays the graph. The invariants behind it
// (imports point one way, the protocol engine knows nothing of Wasm, the
// guest SDK knows nothing of the host) are checked on top, over the
// transitive dependencies, in TestLayering.
var allowed = map[string][]string{
	".":                                  {},
	"cmd/wasmcp":                         {"internal/config", "internal/jsonrpc", "internal/scaffold", "internal/server"},
	"examples/conformance/go-everything": {"sdk/go"},
	"examples/go-fetch":                  {"sdk/go"},
	"examples/go-dashboard":              {"sdk/go"},
	"examples/go-notes":                  {"examples/internal/slug", "sdk/go"},
	"examples/go-text":                   {"examples/internal/slug", "sdk/go"},
	"examples/internal/slug":             {},
	"hostapi":                            {"internal/abi", "runtime"},
	"hostapi/kvtest":                     {"hostapi", "internal/abi"},
	"hostapi/wasip2":                     {"hostapi", "internal/component", "runtime/component"},
	"internal/abi":                       {},
	"internal/audit":                     {},
	"internal/auth":                      {},
	"internal/authz":                     {"internal/jsonscan"},
	"internal/cluster":                   {"hostapi", "internal/tasks"},
	"internal/cluster/redistest":         {},
	"internal/component":                 {},
	"internal/component/canon":           {"internal/component"},
	"internal/config":                    {},
	"internal/denials":                   {},
	"internal/fetch":                     {},
	"internal/httpguard":                 {},
	"internal/jsonrpc":                   {"internal/jsonscan"},
	"internal/jsonscan":                  {},
	"internal/mcp":                       {"internal/httpguard", "internal/jsonrpc", "internal/jsonscan", "internal/mcpreq", "internal/tasks"},
	"internal/mcp/mcptest":               {"internal/jsonrpc", "internal/jsonscan", "internal/mcp"},
	"internal/mcpreq":                    {"internal/jsonscan"},
	"internal/scaffold":                  {"."},
	"internal/schema":                    {"internal/jsonscan"},
	"internal/server":                    {"hostapi", "internal/audit", "internal/auth", "internal/authz", "internal/cluster", "internal/component", "internal/config", "internal/fetch", "internal/jsonrpc", "internal/jsonscan", "internal/mcp", "internal/mcpreq", "internal/skills", "internal/tasks", "internal/telemetry", "internal/verify", "plugins", "runtime"},
	"internal/skills":                    {},
	"internal/tasks":                     {},
	"internal/tasks/taskstest":           {"internal/tasks"},
	"internal/testutil":                  {},
	"internal/telemetry":                 {"internal/abi", "internal/denials", "internal/jsonrpc", "internal/jsonscan", "internal/mcp", "plugins", "runtime"},
	"internal/verify":                    {"internal/fetch"},
	"plugins":                            {"hostapi", "hostapi/wasip2", "internal/abi", "internal/component", "internal/jsonscan", "internal/mcpreq", "internal/schema", "runtime", "runtime/component"},
	"runtime":                            {"internal/abi", "internal/component", "internal/component/canon", "internal/denials", "runtime/component", "runtime/internal/extism", "runtime/internal/instrument"},
	"runtime/component":                  {"internal/component", "internal/component/canon"},
	"runtime/internal/extism":            {},
	"runtime/internal/instrument":        {},
	"sdk/go":                             {"internal/abi", "internal/jsonscan"},
	"sdk/go/wasmcptest":                  {"internal/abi", "sdk/go"},
	"sdk/sdktest":                        {},
}

// relPath returns the path of our package p relative to the module root
// ("." for the root).
func relPath(p string) string {
	if p == mod {
		return "."
	}
	return strings.TrimPrefix(p, mod+"/")
}

// TestLayering enforces the import rules of DESIGN.md: every arrow between
// our packages is one listed in allowed; imports point one way, wazero
// stays inside runtime and hostapi, the protocol engine knows nothing of
// Wasm, the guest SDK nothing of the host or of the JSON-RPC wire format,
// and every third-party module has exactly one importer.
func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	pkgs := listPackages(t)
	checkAllowList(t, pkgs)
	ours := func(p string) bool { return within(p, mod) }
	wazero := "github.com/tetratelabs/wazero"
	owners := map[string][]string{ // third-party module -> packages allowed to import it
		wazero:                       {mod + "/runtime", mod + "/hostapi", mod + "/runtime/component"},
		"github.com/BurntSushi/toml": {mod + "/internal/config"},
		"go.yaml.in/yaml":            {mod + "/internal/config"},
		"golang.org/x/sys":           {mod + "/runtime"},
		"github.com/santhosh-tekuri/jsonschema/v6": {mod + "/internal/schema"},
		"github.com/google/go-containerregistry":   {mod + "/internal/fetch"},
		"github.com/sigstore/sigstore-go":          {mod + "/internal/verify"},
		"github.com/sigstore/sigstore":             {mod + "/internal/verify"},
		"go.opentelemetry.io":                      {mod + "/internal/telemetry"},
		"github.com/prometheus":                    {mod + "/internal/telemetry"},
		"github.com/redis/go-redis":                {mod + "/internal/cluster"},
		"google.golang.org/protobuf":               {mod + "/internal/telemetry"},
		"golang.org/x/net":                         {mod + "/internal/telemetry"},
		"github.com/go-jose/go-jose":               {mod + "/internal/auth"},
		"github.com/cedar-policy/cedar-go":         {mod + "/internal/authz"},
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
		case within(rel, "internal/jsonscan"), within(rel, "internal/abi"), within(rel, "internal/auth"), within(rel, "internal/httpguard"):
			// Leaves: they import nothing of ours (httpguard, a listener
			// wrapper any http.Server may use, knows nothing of MCP).
			forbidden = []string{mod}
		case within(rel, "internal/jsonrpc"):
			forbidden = []string{mod + "/internal/abi", mod + "/internal/mcp", mod + "/runtime", mod + "/hostapi", mod + "/plugins", mod + "/internal/server", mod + "/sdk"}
		case within(rel, "internal/mcpreq"):
			// The request as data, shared by the engine and the registry:
			// it may know neither of them, nor the wire format.
			forbidden = []string{mod + "/internal/mcp", mod + "/internal/jsonrpc", mod + "/plugins", mod + "/runtime", mod + "/hostapi", mod + "/internal/server", wazero}
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
			// The guest SDK and its examples share only the ABI and the
			// byte-level JSON toolkit with the host, never the JSON-RPC
			// wire format.
			forbidden = []string{mod + "/runtime", mod + "/hostapi", mod + "/plugins", mod + "/internal/mcp", mod + "/internal/server", mod + "/internal/config", mod + "/internal/jsonrpc", wazero}
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

// checkAllowList fails for every package of ours that allowed does not
// list, every direct import of ours it does not allow, and every allowed
// arrow that is no longer drawn.
func checkAllowList(t *testing.T, pkgs map[string]pkgInfo) {
	t.Helper()
	seen := map[string]bool{}
	for path, info := range pkgs {
		if !within(path, mod) {
			continue
		}
		rel := relPath(path)
		seen[rel] = true
		list, ok := allowed[rel]
		if !ok {
			t.Errorf("package %s is not in the allow-list of layering_test.go: add it with the packages of ours it may import", rel)
			continue
		}
		may := map[string]bool{}
		for _, a := range list {
			may[a] = true
		}
		drawn := map[string]bool{}
		for _, imp := range info.imports {
			if !within(imp, mod) {
				continue
			}
			r := relPath(imp)
			drawn[r] = true
			if !may[r] {
				t.Errorf("%s imports %s, an arrow the allow-list of layering_test.go does not have: choose it there (and keep DESIGN.md's layering true) or drop the import", rel, r)
			}
		}
		for _, a := range list {
			if !drawn[a] {
				t.Errorf("the allow-list of layering_test.go lets %s import %s, which it no longer does: remove the arrow", rel, a)
			}
		}
	}
	for rel := range allowed {
		if !seen[rel] {
			t.Errorf("the allow-list of layering_test.go names %s, which is not a package of the module any more", rel)
		}
	}
	// The Go guest SDK must not reach the host's JSON-RPC package, directly
	// or not (internal/jsonscan is what it shares with the host).
	for _, p := range []string{mod + "/sdk/go", mod + "/sdk/go/wasmcptest"} {
		info, ok := pkgs[p]
		if !ok {
			t.Fatalf("go list did not list %s", p)
		}
		for _, dep := range info.deps {
			if dep == mod+"/internal/jsonrpc" {
				t.Errorf("%s depends on internal/jsonrpc; the guest SDK may use only internal/jsonscan", p)
			}
		}
	}
}
