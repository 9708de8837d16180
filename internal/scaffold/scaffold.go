// Package scaffold writes new wasmcp plugin projects (`wasmcp new`): a
// small, working plugin with one tool, `greet`, in Go, C, Rust or
// AssemblyScript, plus build.sh (one command that builds NAME.wasm),
// test.sh (builds, then checks that the module exports wasmcp_call) and a
// README.
//
// The project finds its SDK through Options.SDKRoot, the root of a wasmcp
// checkout: Go projects get a go.mod that replaces github.com/wasmcp/wasmcp
// with it; C, Rust and AssemblyScript projects get a copy of the SDK's
// source files, so they build on their own afterwards.
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
	goruntime "runtime"
	"strings"
	"text/template"
)

//go:embed templates
var templates embed.FS

// Options configure Write.
type Options struct {
	// SDKRoot is the absolute path of a wasmcp checkout (the directory of
	// its go.mod). Required; FindSDKRoot can locate it.
	SDKRoot string
}

// language describes one supported language.
type language struct {
	title string
	// files maps template names (under templates/) to project paths.
	files map[string]string
	// sdk lists SDK files (relative to SDKRoot) copied into the project,
	// mapped to project paths.
	sdk   map[string]string
	notes string
}

var languages = map[string]language{
	"go": {
		title: "Go",
		files: map[string]string{"go/main.go.tmpl": "main.go", "go/go.mod.tmpl": "go.mod", "go/build.sh.tmpl": "build.sh"},
		notes: "Needs Go 1.24 or later. `go.mod` points `github.com/wasmcp/wasmcp` at the wasmcp\n" +
			"checkout the project was created from; change the `replace` line if it moves.\n" +
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
		files: map[string]string{"rust/lib.rs.tmpl": "lib.rs", "rust/build.sh.tmpl": "build.sh"},
		sdk:   map[string]string{"sdk/rust/wasmcp.rs": "wasmcp.rs", "sdk/rust/README.md": "SDK.md"},
		notes: "Needs rustc with the wasm32-wasi standard library (Debian: `apt-get install rustc\n" +
			"libstd-rust-dev-wasm32`; no cargo or crates). The SDK is the copied `wasmcp.rs`,\n" +
			"included as a module; its API is in `SDK.md`.",
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
	if opts.SDKRoot == "" {
		return errors.New("scaffold: Options.SDKRoot is required (the wasmcp checkout; see FindSDKRoot)")
	}
	root, err := filepath.Abs(opts.SDKRoot)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if !isSDKRoot(root) {
		return fmt.Errorf("scaffold: %s is not a wasmcp checkout (no go.mod for github.com/wasmcp/wasmcp)", root)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("scaffold: %s exists and is not empty", dir)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("scaffold: %w", err)
	}

	data := map[string]string{
		"Name":      name,
		"SDKRoot":   root,
		"GoVersion": goVersion(),
		"LangTitle": l.title,
		"LangNotes": l.notes,
	}
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
	for t, p := range l.files {
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
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(src)))
		if err != nil {
			return fmt.Errorf("scaffold: copying the SDK: %w", err)
		}
		files[dst] = b
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

// goVersion is the go directive of generated go.mod files: the language
// version of the Go toolchain that built this program (e.g. 1.26), which
// is at least what the wasmcp module itself requires.
func goVersion() string {
	v := strings.TrimPrefix(goruntime.Version(), "go")
	parts := strings.SplitN(v, ".", 3)
	if len(parts) >= 2 && parts[0] != "" {
		if i := strings.IndexFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }); i >= 0 {
			parts[1] = parts[1][:i]
		}
		return parts[0] + "." + parts[1]
	}
	return "1.26"
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
