// Package scaffold writes new wasmcp plugin projects (`wasmcp new`): a
// small, working plugin with one tool, `greet`, in Go, C, Rust or
// AssemblyScript, plus build.sh (one command that builds NAME.wasm),
// test.sh (builds, then checks that the module exports wasmcp_call) and a
// README.
//
// The SDK comes from the copy embedded in the binary (wasmcp.SDK), so a
// project builds on its own, without a wasmcp checkout: C, Rust and
// AssemblyScript projects get a copy of the SDK's source files; Go
// projects get the Go SDK vendored in wasmcp-sdk/ (a module named
// github.com/wasmcp/wasmcp that go.mod replaces the import with, so no
// module is fetched). With Options.SDKRoot, the files come from that
// checkout instead, and a Go project's go.mod points at the checkout.
package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"

	"github.com/wasmcp/wasmcp"
)

//go:embed templates
var templates embed.FS

// Options configure Write.
type Options struct {
	// SDKRoot, when set, is a wasmcp checkout (the directory of its
	// go.mod) whose SDK files the project uses instead of the embedded
	// ones; a Go project's go.mod then replaces github.com/wasmcp/wasmcp
	// with it. FindSDKRoot can locate one.
	SDKRoot string
	// WithApp adds an MCP App (docs/apps-and-skills.md): app.html served
	// as ui://NAME/view, greet linked to it and an app-only tool, shout,
	// that the app's button calls. Go only.
	WithApp bool
}

// language describes one supported language.
type language struct {
	title string
	// files maps template names (under templates/) to project paths.
	files map[string]string
	// sdk lists SDK files (paths in the wasmcp module) copied into the
	// project, mapped to project paths.
	sdk map[string]string
	// notes is a template (the data of Write) for the README.
	notes string
}

var languages = map[string]language{
	"go": {
		title: "Go",
		files: map[string]string{"go/main.go.tmpl": "main.go", "go/main_test.go.tmpl": "main_test.go", "go/go.mod.tmpl": "go.mod", "go/build.sh.tmpl": "build.sh"},
		notes: "Needs Go {{.GoVersion}} or later. " +
			"{{if .Vendored}}The SDK is vendored in `" + goVendorDir + "/` (the Go SDK and the\n" +
			"wasmcp packages it imports), which `go.mod` replaces `github.com/wasmcp/wasmcp`\n" +
			"with, so the build needs no wasmcp checkout and downloads no module.\n" +
			"{{else}}`go.mod` points `github.com/wasmcp/wasmcp` at the wasmcp\n" +
			"checkout the project was created from; change the `replace` line if it moves.\n{{end}}" +
			"`go test` runs `main_test.go` natively with the SDK's fake host (`wasmcptest`).\n" +
			"See `go doc github.com/wasmcp/wasmcp/sdk/go` for the SDK.",
	},
	"c": {
		title: "C",
		files: map[string]string{"c/plugin.c.tmpl": "{{.Name}}.c", "c/build.sh.tmpl": "build.sh"},
		sdk:   map[string]string{"sdk/c/wasmcp.h": "wasmcp.h", "sdk/c/wasmcp_json.h": "wasmcp_json.h", "sdk/c/README.md": "SDK.md"},
		notes: "Needs clang with the wasm32 target and wasi-libc (Debian: `apt-get install clang lld\n" +
			"wasi-libc libclang-rt-14-dev-wasm32`). The SDK is the copied header pair\n" +
			"`wasmcp.h` + `wasmcp_json.h`; its API is in `SDK.md`.",
	},
	"rust": {
		title: "Rust",
		files: map[string]string{"rust/lib.rs.tmpl": "lib.rs", "rust/build.sh.tmpl": "build.sh", "rust/Cargo.toml.tmpl": "Cargo.toml"},
		sdk:   map[string]string{"sdk/rust/wasmcp.rs": "wasmcp.rs", "sdk/rust/README.md": "SDK.md"},
		notes: "Needs rustc with the WASI standard library: `wasm32-wasip1` (Rust 1.78 and later;\n" +
			"rustup: `rustup target add wasm32-wasip1`) or `wasm32-wasi` (older Rust; Debian:\n" +
			"`apt-get install rustc libstd-rust-dev-wasm32`). `build.sh` uses no cargo or\n" +
			"crates and picks the target the rustc at hand has; with cargo,\n" +
			"`cargo build --release --target wasm32-wasip1` builds the same crate from\n" +
			"`Cargo.toml` (no dependencies) into `target/wasm32-wasip1/release/{{.Name}}.wasm`.\n" +
			"The SDK is the copied `wasmcp.rs`, included as a module; its API is in `SDK.md`.",
	},
	"assemblyscript": {
		title: "AssemblyScript",
		files: map[string]string{
			"assemblyscript/index.ts.tmpl": "index.ts", "assemblyscript/package.json.tmpl": "package.json",
			"assemblyscript/build.sh.tmpl": "build.sh", "assemblyscript/gitignore.tmpl": ".gitignore",
		},
		sdk: map[string]string{
			"sdk/assemblyscript/assembly/index.ts": "sdk/index.ts", "sdk/assemblyscript/assembly/json.ts": "sdk/json.ts",
			"sdk/assemblyscript/assembly/float.ts": "sdk/float.ts", "sdk/assemblyscript/README.md": "SDK.md",
		},
		notes: "Needs Node 20+ and npm; the first build installs the pinned `assemblyscript` and\n" +
			"`@assemblyscript/wasi-shim` into `node_modules`. The SDK is the copied `sdk/`\n" +
			"directory; its API is in `SDK.md`.",
	},
}

// Languages returns the languages Write supports, sorted.
func Languages() []string {
	return []string{"assemblyscript", "c", "go", "rust"}
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// Write creates a new plugin project named name in lang under dir, which
// must not exist or be empty. name must match ^[a-z][a-z0-9_-]{0,63}$ (it
// names the module, the .wasm file and, for AssemblyScript, the npm
// package).
func Write(dir, lang, name string, opts Options) error {
	l, ok := languages[lang]
	if !ok {
		return fmt.Errorf("scaffold: unknown language %q (want one of %s)", lang, strings.Join(Languages(), ", "))
	}
	if !nameRE.MatchString(name) {
		return fmt.Errorf("scaffold: invalid plugin name %q: use lowercase letters, digits, '-' and '_', starting with a letter, at most 64", name)
	}
	var sdk fs.FS = wasmcp.SDK
	root := ""
	if opts.SDKRoot != "" {
		var err error
		if root, err = filepath.Abs(opts.SDKRoot); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
		if !isSDKRoot(root) {
			return fmt.Errorf("scaffold: %s is not a wasmcp checkout (no go.mod for github.com/wasmcp/wasmcp)", root)
		}
		sdk = os.DirFS(root)
	}
	files0 := l.files
	if opts.WithApp {
		if lang != "go" {
			return fmt.Errorf("scaffold: --with-app is for Go projects only (the other SDKs declare apps too; see their SDK.md)")
		}
		files0 = map[string]string{}
		for t, p := range l.files {
			files0[t] = p
		}
		delete(files0, "go/main.go.tmpl")
		delete(files0, "go/main_test.go.tmpl")
		files0["go/main_app.go.tmpl"] = "main.go"
		files0["go/main_app_test.go.tmpl"] = "main_test.go"
		files0["go/app.html.tmpl"] = "app.html"
	}
	goVer, err := goVersion(sdk)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("scaffold: %s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scaffold: %w", err)
	}

	data := map[string]any{
		"Name":      name,
		"SDKRoot":   root,
		"Vendored":  root == "",
		"VendorDir": goVendorDir,
		"GoVersion": goVer,
		"LangTitle": l.title,
		"WithApp":   opts.WithApp,
	}
	notes, err := execute(lang+" notes", l.notes, data)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	data["LangNotes"] = string(notes)
	files := map[string][]byte{}
	render := func(tmplName, path string) error {
		src, err := templates.ReadFile("templates/" + tmplName)
		if err != nil {
			return err
		}
		out, err := execute(tmplName, string(src), data)
		if err != nil {
			return err
		}
		p, err := execute(tmplName+" path", path, data)
		if err != nil {
			return err
		}
		files[string(p)] = out
		return nil
	}
	for t, p := range files0 {
		if err := render(t, p); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	if err := render("common_test.sh.tmpl", "test.sh"); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if err := render("common_README.md.tmpl", "README.md"); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	for src, dst := range l.sdk {
		b, err := fs.ReadFile(sdk, src)
		if err != nil {
			return fmt.Errorf("scaffold: copying the SDK: %w", err)
		}
		files[dst] = b
	}
	if lang == "go" && root == "" {
		if err := vendorGo(files, goVer); err != nil {
			return fmt.Errorf("scaffold: vendoring the Go SDK: %w", err)
		}
	}

	for p, b := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
		mode := os.FileMode(0o644)
		if strings.HasSuffix(p, ".sh") {
			mode = 0o755
		}
		if err := os.WriteFile(full, b, mode); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	return nil
}

func execute(name, src string, data any) ([]byte, error) {
	t, err := template.New(name).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// goVendorDir is where a Go project gets its vendored copy of the SDK.
const goVendorDir = "wasmcp-sdk"

// vendorGo adds to files every non-test .go file of the embedded SDK (the
// Go SDK and the wasmcp packages it imports) under goVendorDir, with a
// go.mod that names the module github.com/wasmcp/wasmcp and requires
// nothing.
func vendorGo(files map[string][]byte, goVer string) error {
	n := 0
	err := fs.WalkDir(wasmcp.SDK, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || !strings.Contains(p, "/") {
			return err
		}
		b, err := fs.ReadFile(wasmcp.SDK, p)
		if err != nil {
			return err
		}
		files[goVendorDir+"/"+p] = b
		n++
		return nil
	})
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("no Go files embedded")
	}
	files[goVendorDir+"/go.mod"] = []byte("// The part of github.com/wasmcp/wasmcp that a Go plugin builds with,\n" +
		"// vendored by `wasmcp new`.\nmodule github.com/wasmcp/wasmcp\n\ngo " + goVer + "\n")
	return nil
}

// goVersion is the go directive of the wasmcp module's go.mod in sdk (e.g.
// 1.26.8): the Go version the SDK needs, and the go directive of the
// generated go.mod.
func goVersion(sdk fs.FS) (string, error) {
	b, err := fs.ReadFile(sdk, "go.mod")
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "go" {
			return f[1], nil
		}
	}
	return "", errors.New("go.mod has no go directive")
}

// isSDKRoot reports whether dir holds the go.mod of github.com/wasmcp/wasmcp.
func isSDKRoot(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1] == "github.com/wasmcp/wasmcp"
		}
	}
	return false
}

// FindSDKRoot returns the wasmcp checkout that contains start (a file or
// directory), searching start and its parents.
func FindSDKRoot(start string) (string, error) {
	dir, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	for {
		if isSDKRoot(dir) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("scaffold: no wasmcp checkout at or above %s", start)
		}
		dir = parent
	}
}
