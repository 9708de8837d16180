package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmcp-cmd")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "wasmcp")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// wasmcp runs the binary in the repository root and returns stdout,
// stderr and the exit code.
func wasmcp(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome())
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func cacheHome() string { return filepath.Join(testutil.CacheDir(), "xdg") }

func TestExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no command", nil, 2, "no command"},
		{"unknown command", []string{"frobnicate"}, 2, "unknown command"},
		{"bad flag", []string{"serve", "--nope"}, 2, "flag provided but not defined"},
		{"missing config", []string{"serve", "--config", "does-not-exist.toml"}, 2, "does-not-exist.toml"},
		{"plugins not a dir", []string{"call", "--plugins", "README.md", "x"}, 2, "neither a directory nor a .wasm file"},
		{"call bad json", []string{"call", "sha256", "{nope"}, 2, "not valid JSON"},
		{"unknown tool", []string{"call", "no_such_tool"}, 1, "Unknown tool"},
		{"call result not a CallToolResult", []string{"call", "--plugins", "testdata/hostile/garbage.wasm", "shape"}, 1, "the tool reported an error"},
		{"inspect missing file", []string{"inspect", "nope.wasm"}, 2, "nope.wasm"},
		{"call no tool", []string{"call"}, 2, "call: want TOOL [JSON]"},
		{"inspect two files", []string{"inspect", "a.wasm", "b.wasm"}, 2, "inspect: want one PLUGIN.wasm"},
		{"serve extra", []string{"serve", "extra"}, 2, `serve: unexpected argument "extra"`},
		{"plugins extra", []string{"plugins", "extra"}, 2, `plugins: unexpected argument "extra"`},
		{"lock extra", []string{"lock", "extra"}, 2, `lock: unexpected argument "extra"`},
		{"pull no ref", []string{"pull"}, 2, "pull: want one REF"},
		{"push not oci", []string{"push", "a.wasm", "https://x"}, 2, "push: want FILE.wasm oci://HOST/REPO:TAG"},
		{"new no name", []string{"new", "--lang", "c"}, 2, "new: want --lang LANG NAME"},
		{"version", []string{"version"}, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := wasmcp(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if !strings.Contains(stderr, tc.err) {
				t.Errorf("stderr does not mention %q:\n%s", tc.err, stderr)
			}
		})
	}
}

func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "wasmcp.toml")
	os.WriteFile(cfg, []byte("[server]\nnmae = \"typo\"\n"), 0o644)
	_, stderr, code := wasmcp(t, "", "serve", "--config", cfg)
	if code != 2 || !strings.Contains(stderr, "nmae") || !strings.Contains(stderr, "line 2") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}

// TestServeStdio: `wasmcp serve` from the repository root serves the
// bundled examples (wasmcp.toml) on stdio; stdout carries only protocol.
func TestServeStdio(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sha256","arguments":{"text":"abc"}}}`,
	}, "\n") + "\n"
	stdout, stderr, code := wasmcp(t, in, "serve")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<24)
	got := map[string]json.RawMessage{}
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("stdout has a non-JSON line %q", sc.Text())
		}
		got[string(m.ID)] = m.Result
	}
	if !strings.Contains(string(got["3"]), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") {
		t.Errorf("sha256 result %s", got["3"])
	}
	for _, tool := range []string{`"sha256"`, `"calc"`, `"date_add"`, `"ping"`} {
		if !strings.Contains(string(got["2"]), tool) {
			t.Errorf("tools/list lacks %s", tool)
		}
	}
}

// TestServeHTTP: `serve --http 127.0.0.1:0` prints the bound URL on
// stderr and answers there.
func TestServeHTTP(t *testing.T) {
	cmd := exec.Command(bin, "serve", "--http", "127.0.0.1:0")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome())
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("after SIGINT: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			t.Error("no exit 10s after SIGINT")
		}
	}()
	url := servedURL(t, stderr)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := newPost(url, body)
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/list")
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"sha256"`) {
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
}

func TestCallAndInspect(t *testing.T) {
	stdout, stderr, code := wasmcp(t, "", "call", "calc", `{"expression":"6*7"}`)
	if code != 0 || !strings.Contains(stdout, "42") {
		t.Fatalf("call: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, stderr, code = wasmcp(t, "", "inspect", "examples/c-hash/c-hash.wasm")
	if code != 0 || !strings.Contains(stdout, "sha256") || !strings.Contains(stdout, "wasmcp.output_write") {
		t.Fatalf("inspect: exit %d\n%s\n%s", code, stdout, stderr)
	}
	stdout, _, code = wasmcp(t, "", "inspect", "--json", "examples/as-calc/as-calc.wasm")
	var rep struct {
		Requested struct {
			KV bool `json:"kv"`
		} `json:"requested"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || !rep.Requested.KV {
		t.Fatalf("inspect --json: exit %d\n%s", code, stdout)
	}
}

// TestInspectEveryExample: `wasmcp inspect` works on every bundled plugin
// (a component's tools are its report's own, it has no manifest).
func TestInspectEveryExample(t *testing.T) {
	files, _ := filepath.Glob("../../examples/*/*.wasm")
	more, _ := filepath.Glob("../../examples/conformance/*/*.wasm")
	files = append(files, more...)
	if len(files) < 7 {
		t.Fatalf("found only %d example plugins", len(files))
	}
	for _, f := range files {
		rel, _ := filepath.Rel("../..", f)
		t.Run(rel, func(t *testing.T) {
			stdout, stderr, code := wasmcp(t, "", "inspect", "--json", rel)
			var rep struct {
				Manifest struct {
					Tools     []json.RawMessage `json:"tools"`
					Resources []json.RawMessage `json:"resources"`
					Templates []json.RawMessage `json:"resourceTemplates"`
					Prompts   []json.RawMessage `json:"prompts"`
				} `json:"manifest"`
				Imports []string          `json:"imports"`
				Mode    string            `json:"mode"`
				Tools   []json.RawMessage `json:"tools"` // a component's
			}
			if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			m := rep.Manifest
			if len(m.Tools)+len(m.Resources)+len(m.Templates)+len(m.Prompts)+len(rep.Tools) == 0 || len(rep.Imports) == 0 {
				t.Errorf("empty report: %s", stdout)
			}
		})
	}
}

// servedURL reads the URL that `serve --http 127.0.0.1:0` prints on
// stderr, then drains stderr in the background.
func servedURL(t *testing.T, stderr io.Reader) string {
	t.Helper()
	urlRe := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
	sc := bufio.NewScanner(stderr)
	var url string
	for sc.Scan() {
		if u := urlRe.FindString(sc.Text()); u != "" {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatal("no URL on stderr")
	}
	go io.Copy(io.Discard, stderr)
	return url
}
