package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session is a JSON-RPC client over a `wasmcp serve` process's stdio.
type session struct {
	t   *testing.T
	in  io.WriteCloser
	out *bufio.Scanner
	id  int
}

func (s *session) call(method string, params any) (json.RawMessage, *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	s.t.Helper()
	s.id++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": s.id, "method": method, "params": params})
	if _, err := s.in.Write(append(b, '\n')); err != nil {
		s.t.Fatal(err)
	}
	for s.out.Scan() {
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(s.out.Bytes(), &m); err != nil {
			s.t.Fatalf("stdout line is not JSON: %q", s.out.Text())
		}
		if m.Method != "" {
			continue // a notification
		}
		if m.ID != s.id {
			s.t.Fatalf("response id %d, want %d", m.ID, s.id)
		}
		return m.Result, m.Error
	}
	s.t.Fatalf("server closed stdout: %v", s.out.Err())
	return nil, nil
}

// TestExamplesOverStdio serves every bundled example plugin (Go, C, Rust,
// AssemblyScript, WAT) through `wasmcp serve` on stdio and calls each of
// their tools, resources and prompts with real arguments, checking real
// results.
func TestExamplesOverStdio(t *testing.T) {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Test page</title></head><body><h1>Hello</h1><p>Fetched through the host.</p></body></html>")
	}))
	defer site.Close()

	root, _ := filepath.Abs("../..")
	cfg := filepath.Join(t.TempDir(), "wasmcp.toml")
	// Each example is served under its name from examples/NAME/NAME.wasm.
	toml := "[server]\nkv_dir = \":memory:\"\n"
	for _, ex := range []struct{ name, grants string }{
		{"go-text", ""},
		{"go-notes", "kv = true"},
		{"go-fetch", fmt.Sprintf("http = [%q]\nkv = true", site.URL+"/")},
		{"c-hash", ""},
		{"rust-dates", `config = { default_offset = "+02:00" }`},
		{"as-calc", "kv = true"},
		{"wat-ping", ""},
	} {
		toml += fmt.Sprintf("[[plugins]]\nname = %q\npath = %q\n", ex.name, filepath.Join(root, "examples", ex.name, ex.name+".wasm"))
		if ex.grants != "" {
			toml += "[plugins.grants]\n" + ex.grants + "\n"
		}
	}
	if err := os.WriteFile(cfg, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome())
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve exited with %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Errorf("serve did not exit after stdin closed")
		}
	}()
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	s := &session{t: t, in: stdin, out: sc}
	if _, e := s.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "t", "version": "1"}}); e != nil {
		t.Fatalf("initialize: %s\n%s", e.Message, stderr.String())
	}

	type step struct {
		method string
		params map[string]any
		want   []string // substrings of the result
	}
	tool := func(name string, args map[string]any, want ...string) step {
		return step{"tools/call", map[string]any{"name": name, "arguments": args}, want}
	}
	steps := []step{
		// Go: text
		tool("text_stats", map[string]any{"text": "One two three. Four five!"}, `"words":5`, `"sentences":2`),
		tool("convert_case", map[string]any{"text": "hello big world", "to": "snake"}, "hello_big_world"),
		tool("slugify", map[string]any{"text": "Héllo, Wörld & Friends!"}, "hello-world-friends"),
		tool("regex_extract", map[string]any{"text": "a1 b22 c333", "pattern": `\d+`}, `"1"`, `"22"`, `"333"`),
		tool("wrap_text", map[string]any{"text": "aaa bbb ccc ddd eee fff ggg hhh", "width": 10}, `aaa bbb\nccc ddd`, `"lines":4`),
		// Go: notes (kv, resources, template, prompts, completion)
		tool("add_note", map[string]any{"title": "Reactors", "body": "Use defer runtime.Gosched().", "tags": []string{"go"}}, "Reactors"),
		tool("search_notes", map[string]any{"query": "gosched"}, "Reactors"),
		{"resources/read", map[string]any{"uri": "notes://index"}, []string{"Reactors"}},
		{"prompts/get", map[string]any{"name": "summarize_note", "arguments": map[string]any{"id": "reactors"}}, []string{"Gosched"}},
		tool("update_note", map[string]any{"id": "reactors", "append": "Also runtime.GC for big calls."}, "notes://reactors"),
		{"resources/read", map[string]any{"uri": "notes://reactors"}, []string{"runtime.GC"}},
		tool("delete_note", map[string]any{"id": "reactors", "confirm": true}, "reactors"),
		// Go: fetch (granted loopback site, kv cache)
		tool("fetch_page", map[string]any{"url": site.URL + "/page"}, "Test page", "Fetched through the host"),
		tool("fetch_page", map[string]any{"url": site.URL + "/page"}, `"cached":true`),
		tool("clear_cache", map[string]any{}, `"removed"`),
		// C: hashing and encoding
		tool("sha256", map[string]any{"text": "abc"}, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
		tool("crc32", map[string]any{"text": "The quick brown fox jumps over the lazy dog"}, "414fa339"),
		tool("base64_encode", map[string]any{"text": "hello"}, "aGVsbG8="),
		tool("base64_decode", map[string]any{"data": "aGVsbG8="}, "hello"),
		tool("hex_encode", map[string]any{"text": "hi"}, "6869"),
		tool("hex_decode", map[string]any{"hex": "6869"}, "hi"),
		{"resources/read", map[string]any{"uri": "hash://sha256/abc"}, []string{"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"}},
		// Rust: dates (config granted)
		tool("now", map[string]any{}, "+02:00"),
		tool("unix_to_iso", map[string]any{"timestamp": 0, "offset": "Z"}, "1970-01-01T00:00:00Z"),
		tool("iso_to_unix", map[string]any{"date": "2001-09-09T01:46:40Z"}, "1000000000"),
		tool("date_add", map[string]any{"date": "2024-01-31", "months": 1}, "2024-02-29"),
		tool("date_diff", map[string]any{"from": "2024-01-01", "to": "2024-03-01"}, `"days":60`),
		tool("iso_week", map[string]any{"date": "2026-11-29"}, "2026-W48-7"),
		// AssemblyScript: calculator with kv variables
		tool("calc", map[string]any{"expression": "2^10 - sqrt(16)"}, "1020"),
		tool("calc_store", map[string]any{"name": "r", "expression": "3"}, "3"),
		tool("calc", map[string]any{"expression": "r * 2"}, "6"),
		tool("calc_vars", map[string]any{}, `"r"`),
		// WAT
		tool("ping", map[string]any{}, "pong"),
	}
	for i, st := range steps {
		name := fmt.Sprintf("%d-%s", i, st.method)
		if n, ok := st.params["name"].(string); ok {
			name = fmt.Sprintf("%d-%s", i, n)
		}
		t.Run(name, func(t *testing.T) {
			s.t = t
			res, e := s.call(st.method, st.params)
			if e != nil {
				t.Fatalf("error %d: %s", e.Code, e.Message)
			}
			var r struct {
				IsError bool `json:"isError"`
			}
			json.Unmarshal(res, &r)
			if r.IsError {
				t.Fatalf("tool error: %s", res)
			}
			for _, w := range st.want {
				if !strings.Contains(string(res), w) {
					t.Errorf("result lacks %q:\n%s", w, res)
				}
			}
		})
	}
}
