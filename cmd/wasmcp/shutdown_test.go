package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// serveConfig writes a configuration serving the kitchen test plugin with
// the given shutdown grace.
func serveConfig(t *testing.T, grace string) string {
	t.Helper()
	kitchen, err := filepath.Abs("../../internal/server/testdata/kitchen.wasm")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wasmcp.toml")
	doc := fmt.Sprintf("[server]\nkv_dir = \":memory:\"\nshutdown_grace = %q\n[[plugins]]\nname = \"kitchen\"\npath = %q\n", grace, kitchen)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// proc is a running `wasmcp serve`.
type proc struct {
	cmd  *exec.Cmd
	done chan error
}

func startServe(t *testing.T, stdin io.Reader, args ...string) (*proc, io.Reader, io.Reader) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cacheHome())
	cmd.Stdin = stdin
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
		}
	})
	return p, stdout, stderr
}

// exit waits for the process (after Wait's readers are done) and returns
// its exit code and how long it took.
func (p *proc) exit(t *testing.T, max time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	go func() { p.done <- p.cmd.Wait() }()
	select {
	case err := <-p.done:
		p.done <- err
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, time.Since(start)
	case <-time.After(max):
		t.Fatalf("still running %v after SIGTERM", max)
	}
	return -1, 0
}

func modernCall(url, tool string, args map[string]any) (*http.Request, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}},
	}})
	req, err := newPost(url, string(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	return req, nil
}

// TestServeHTTPShutdown: SIGTERM with a call in flight; the call finishes
// and is answered, the process exits 0 within the grace period (or, when
// the grace is shorter than the call, answers 503 and exits 0 just after
// it).
func TestServeHTTPShutdown(t *testing.T) {
	testutil.WallClock(t) // a real process's exit is timed against its grace period
	for _, tt := range []struct {
		name     string
		grace    string
		sleepMS  int
		status   int
		contains string
		maxExit  time.Duration
	}{
		{"in flight finishes", "10s", 1500, 200, "slept", 8 * time.Second},
		{"grace expires", "500ms", 8000, 503, "shutting down", 5 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, _, stderr := startServe(t, nil, "--config", serveConfig(t, tt.grace), "--http", "127.0.0.1:0")
			url := servedURL(t, stderr)
			type answer struct {
				status int
				body   string
				err    error
			}
			inflight := make(chan answer, 1)
			go func() {
				req, _ := modernCall(url, "slow", map[string]any{"ms": tt.sleepMS})
				resp, err := httpClient.Do(req)
				if err != nil {
					inflight <- answer{err: err}
					return
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				inflight <- answer{status: resp.StatusCode, body: string(b)}
			}()
			time.Sleep(500 * time.Millisecond) // the call is running
			start := time.Now()
			p.cmd.Process.Signal(syscall.SIGTERM)
			a := <-inflight
			if a.err != nil {
				t.Fatalf("in-flight call: %v", a.err)
			}
			if a.status != tt.status || !strings.Contains(a.body, tt.contains) {
				t.Errorf("in-flight call: %d %s", a.status, a.body)
			}
			code, _ := p.exit(t, tt.maxExit)
			if code != 0 {
				t.Errorf("exit code %d after SIGTERM", code)
			}
			t.Logf("exited %v after SIGTERM", time.Since(start))
		})
	}
}

// TestServeStdioShutdown: SIGTERM with a call in flight on stdio: new
// requests are refused, the call's answer is written, and the process
// exits 0 although stdin is still open.
func TestServeStdioShutdown(t *testing.T) {
	testutil.WallClock(t) // a real process's exit is timed after SIGTERM
	// An *os.File, so that Wait does not wait for stdin to be closed.
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inW.Close()
	p, stdout, stderr := startServe(t, inR, "--config", serveConfig(t, "10s"))
	inR.Close()
	go io.Copy(io.Discard, stderr)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	send := func(s string) { io.WriteString(inW, s+"\n") }
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("stdout closed")
			}
			return l
		case <-time.After(30 * time.Second):
			t.Fatal("no output")
		}
		return ""
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"slow","arguments":{"ms":1500}}}`)
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	time.Sleep(100 * time.Millisecond)
	send(`{"jsonrpc":"2.0","id":"late","method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`)
	got := map[string]string{}
	for len(got) < 2 {
		l := next()
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal([]byte(l), &m)
		got[string(m.ID)] = l
	}
	if !strings.Contains(got[`"slow"`], "slept") {
		t.Errorf("in-flight call: %s", got[`"slow"`])
	}
	if !strings.Contains(got[`"late"`], "shutting down") {
		t.Errorf("request after SIGTERM: %s", got[`"late"`])
	}
	code, _ := p.exit(t, 8*time.Second)
	if code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
	t.Logf("exited %v after SIGTERM", time.Since(start))
}
