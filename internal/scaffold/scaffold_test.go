package scaffold

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/runtime"
)

func sdkRoot(t *testing.T) string {
	t.Helper()
	root, err := FindSDKRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func TestWriteRefuses(t *testing.T) {
	root := sdkRoot(t)
	dir := t.TempDir()
	for _, c := range []struct {
		lang, name string
		opts       Options
		want       string
	}{
		{"cobol", "x", Options{SDKRoot: root}, "unknown language"},
		{"c", "Bad Name", Options{SDKRoot: root}, "invalid plugin name"},
		{"c", "1abc", Options{SDKRoot: root}, "invalid plugin name"},
		{"c", "ok", Options{SDKRoot: dir}, "not a wasmcp checkout"},
	} {
		err := Write(filepath.Join(dir, "p"), c.lang, c.name, c.opts)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Write(%q, %q, %+v) = %v, want %q", c.lang, c.name, c.opts, err, c.want)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, "c", "ok", Options{SDKRoot: root}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("Write into a non-empty dir = %v", err)
	}
}

func TestLanguages(t *testing.T) {
	got := Languages()
	if strings.Join(got, " ") != "assemblyscript c go rust" {
		t.Errorf("Languages() = %v", got)
	}
	for _, l := range got {
		if _, ok := languages[l]; !ok {
			t.Errorf("language %q has no templates", l)
		}
	}
}

// toolchain lists the programs each language's build needs.
var toolchain = map[string][]string{
	"go":             {"go"},
	"c":              {"clang", "wasm-ld"},
	"rust":           {"rustc"},
	"assemblyscript": {"node", "npm"},
}

// missingLibrary names a missing wasm32 library of lang's toolchain, or "".
func missingLibrary(lang string) string {
	switch lang {
	case "c":
		if _, err := os.Stat("/usr/include/wasm32-wasi/stdio.h"); err != nil {
			return "C toolchain missing: wasi-libc (Debian: wasi-libc)"
		}
		if m, _ := filepath.Glob("/usr/lib/llvm-*/lib/clang/*/lib/wasi/libclang_rt.builtins-wasm32.a"); len(m) == 0 {
			return "C toolchain missing: clang's wasm32 builtins (Debian: libclang-rt-14-dev-wasm32)"
		}
	case "rust":
		if _, err := os.Stat("/usr/lib/rustlib/wasm32-wasi"); err != nil {
			return "Rust toolchain missing: no wasm32-wasi standard library (Debian: libstd-rust-dev-wasm32)"
		}
	}
	return ""
}

// TestScaffoldBuildsAndRuns writes a project from the checkout's SDK
// (Options.SDKRoot), runs its test.sh (build + export check), then loads
// the .wasm and calls greet. Projects from the embedded SDK, in every
// language, are built and called by cmd/wasmcp's TestNewOutsideCheckout;
// this covers --sdk, with the two quick languages.
func TestScaffoldBuildsAndRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two plugins")
	}
	root := sdkRoot(t)
	engine, err := runtime.NewEngine(context.Background(), runtime.Config{NoCache: true, Modules: runtime.ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = engine.Close(context.Background()) })

	for _, tc := range []struct {
		lang    string
		withApp bool
	}{{"c", false}, {"go", false}, {"go", true}} {
		lang, name := tc.lang, tc.lang
		if tc.withApp {
			name += "-app"
		}
		t.Run(name, func(t *testing.T) {
			for _, tool := range toolchain[lang] {
				if _, err := exec.LookPath(tool); err != nil {
					missingToolchain(t, "%s toolchain missing: %s not on PATH", lang, tool)
				}
			}
			if why := missingLibrary(lang); why != "" {
				missingToolchain(t, "%s", why)
			}
			dir := filepath.Join(t.TempDir(), "hello-"+lang)
			if err := Write(dir, lang, "hello", Options{SDKRoot: root, WithApp: tc.withApp}); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("./test.sh")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("test.sh: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "ok: hello.wasm exports wasmcp_call") {
				t.Fatalf("test.sh output:\n%s", out)
			}

			wasm, err := os.ReadFile(filepath.Join(dir, "hello.wasm"))
			if err != nil {
				t.Fatal(err)
			}
			m, err := engine.Compile(context.Background(), lang, wasm)
			if err != nil {
				t.Fatal(err)
			}
			p, err := m.NewPool(runtime.Limits{}, runtime.Sandbox{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background())
			env := []byte(`{"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}},"context":{}}`)
			status, res, err := p.Call(context.Background(), env, nopHost{}, nil)
			if err != nil || status != 0 {
				t.Fatalf("greet: %d %s %v", status, res, err)
			}
			var r struct {
				Content []struct{ Text string }
				IsError bool
			}
			if err := json.Unmarshal(res, &r); err != nil || r.IsError || len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, "Hello, Ada!") {
				t.Fatalf("greet result: %s (%v)", res, err)
			}
			status, res, err = p.Call(context.Background(), []byte(`{"method":"wasmcp/describe","params":{},"context":{}}`), nopHost{}, nil)
			if err != nil || status != 0 || !strings.Contains(string(res), `"name":"hello"`) {
				t.Fatalf("describe: %d %s %v", status, res, err)
			}
			if !tc.withApp {
				return
			}
			// The app: listed with its MIME type, greet linked to it, shout
			// app-only, and the read answers the HTML with _meta.ui.
			for _, want := range []string{`"uri":"ui://hello/view"`, `"mimeType":"text/html;profile=mcp-app"`,
				`"resourceUri":"ui://hello/view"`, `"visibility":["app"]`} {
				if !strings.Contains(string(res), want) {
					t.Errorf("describe lacks %s: %s", want, res)
				}
			}
			status, res, err = p.Call(context.Background(), []byte(`{"method":"resources/read","params":{"uri":"ui://hello/view"},"context":{}}`), nopHost{}, nil)
			if err != nil || status != 0 || !strings.Contains(string(res), `"_meta":{"ui":{}}`) || !strings.Contains(string(res), "ui/initialize") {
				t.Fatalf("read the app: %d %.300s %v", status, res, err)
			}
		})
	}
}

// TestEmbeddedGoSDK: the Go files embedded for vendoring (wasmcp.SDK) are
// exactly the packages of this module that the Go SDK (wasip1 build) and
// its test harness sdk/go/wasmcptest (native build) depend on, so a
// vendored project builds and carries nothing else.
func TestEmbeddedGoSDK(t *testing.T) {
	deps := map[string]bool{}
	for _, env := range [][]string{{"GOOS=wasip1", "GOARCH=wasm"}, nil} {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "github.com/wasmcp/wasmcp/sdk/go", "github.com/wasmcp/wasmcp/sdk/go/wasmcptest")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list: %v", err)
		}
		for _, p := range strings.Fields(string(out)) {
			if rel, ok := strings.CutPrefix(p, "github.com/wasmcp/wasmcp/"); ok {
				deps[rel] = true
			}
		}
	}
	var want []string
	for d := range deps {
		want = append(want, d)
	}
	files := map[string][]byte{}
	if err := vendorGo(files, "1.0"); err != nil {
		t.Fatal(err)
	}
	dirs := map[string]bool{}
	for p := range files {
		if d, ok := strings.CutPrefix(path.Dir(p), goVendorDir+"/"); ok {
			dirs[d] = true
		}
	}
	var got []string
	for d := range dirs {
		got = append(got, d)
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("vendored Go packages %v, want the SDK's dependencies %v (fix the go:embed lines of sdk.go)", got, want)
	}
	if _, ok := files[goVendorDir+"/sdk/go/args_test.go"]; ok {
		t.Error("test files are vendored")
	}
}

// TestWriteGoVendored: a Go project from the embedded SDK replaces the
// module with its vendored copy, not with a path of this machine, and its
// README states the go.mod's Go version.
func TestWriteGoVendored(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if err := Write(dir, "go", "p", Options{}); err != nil {
		t.Fatal(err)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(gomod), "=> ./"+goVendorDir+"\n") {
		t.Errorf("go.mod:\n%s", gomod)
	}
	ver, err := goVersion(os.DirFS(sdkRoot(t)))
	if err != nil {
		t.Fatal(err)
	}
	readme, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(readme), "Needs Go "+ver+" or later") || !strings.Contains(string(gomod), "go "+ver+"\n") {
		t.Errorf("want Go %s in README and go.mod:\n%s\n%s", ver, readme, gomod)
	}
	if _, err := os.Stat(filepath.Join(dir, goVendorDir, "sdk", "go", "plugin.go")); err != nil {
		t.Error(err)
	}
	// The docs state the same Go version.
	for doc, want := range map[string]string{"sdk/go/README.md": "Go " + ver + " or later", "docs/languages.md": "Go ≥ " + ver} {
		b, err := os.ReadFile(filepath.Join(sdkRoot(t), doc))
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s does not say %q (%v)", doc, want, err)
		}
	}
}

// nopHost denies every host call.
type nopHost struct{}

func (nopHost) Log(context.Context, int32, []byte) {}

func (nopHost) Call(context.Context, string, []byte) ([]byte, int32) { return nil, -1 }

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

// TestRustBuildPicksTarget: a Rust project's build.sh compiles for the
// WASI target the rustc at hand lists and has a standard library for:
// wasm32-wasip1 on current Rust, wasm32-wasi on Rust before 1.78 (Debian's
// 1.63), and it says what to install when there is neither. The rustc is
// a stand-in script that records its arguments.
func TestRustBuildPicksTarget(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "p")
	if err := Write(dir, "rust", "p", Options{}); err != nil {
		t.Fatal(err)
	}
	cargo, _ := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	for _, want := range []string{"name = \"p\"", "path = \"lib.rs\"", "crate-type = [\"cdylib\"]", "[dependencies]\n\n["} {
		if !strings.Contains(string(cargo), want) {
			t.Errorf("Cargo.toml lacks %q:\n%s", want, cargo)
		}
	}
	for _, tc := range []struct {
		name          string
		listed, stdOf []string
		want          string // the --target, or "" for a failed build
	}{
		{"current rust", []string{"wasm32-wasip1", "wasm32-wasip2"}, []string{"wasm32-wasip1"}, "wasm32-wasip1"},
		{"old rust", []string{"wasm32-wasi", "wasm32-unknown-unknown"}, []string{"wasm32-wasi"}, "wasm32-wasi"},
		{"both listed, old std", []string{"wasm32-wasip1", "wasm32-wasi"}, []string{"wasm32-wasi"}, "wasm32-wasi"},
		{"no std", []string{"wasm32-wasip1"}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat("/usr/bin/rustc"); err == nil && tc.want == "" {
				t.Skip("/usr/bin/rustc is installed: build.sh falls back to it")
			}
			fake := t.TempDir()
			for _, s := range tc.stdOf {
				if err := os.MkdirAll(filepath.Join(fake, "lib", "rustlib", s), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			script := "#!/bin/sh\n" +
				"case \"$*\" in\n" +
				"'--print sysroot') echo '" + fake + "';;\n" +
				"'--print target-list') printf '%s\\n' " + strings.Join(tc.listed, " ") + ";;\n" +
				"*) echo \"$*\" > '" + fake + "/args'; for a; do [ \"$prev\" = -o ] && : > \"$a\"; prev=$a; done;;\n" +
				"esac\n"
			rustc := filepath.Join(fake, "rustc")
			if err := os.WriteFile(rustc, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("./build.sh")
			cmd.Dir = dir
			// Only the stand-in: PATH has no rustc, and /usr/bin/rustc,
			// tried last, is not reached when the stand-in has a target.
			cmd.Env = append(os.Environ(), "RUSTC="+rustc, "PATH="+fake+":/bin:/usr/bin")
			out, err := cmd.CombinedOutput()
			if tc.want == "" {
				if err == nil || !strings.Contains(string(out), "rustup target add wasm32-wasip1") {
					t.Fatalf("build.sh without a WASI std: %v\n%s", err, out)
				}
				return
			}
			if err != nil {
				t.Fatalf("build.sh: %v\n%s", err, out)
			}
			args, _ := os.ReadFile(filepath.Join(fake, "args"))
			if !strings.Contains(string(args), "--target "+tc.want+" ") {
				t.Errorf("rustc called with %q, want --target %s", args, tc.want)
			}
		})
	}
}
