//go:build linux

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// maxRSS is the bound of issue 28: with the default limits, nothing a
// client or an unprivileged plugin does takes the server past 1 GiB.
const maxRSS = 1 << 30

// TestMemoryBudgetsRSS starts the real wasmcp binary over HTTP with the
// default limits (no [limits] table) and unprivileged plugins (no grants),
// drives each budget of docs/hardening.md that a client or such a plugin
// can reach to its limit, one case after another, and checks the
// process's peak resident set (VmHWM, reset before each case through
// /proc/PID/clear_refs) against 1 GiB. Each case's peak is logged. The
// server must still answer at the end. (Linux only: it reads /proc.)
func TestMemoryBudgetsRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the server and drives every budget to its limit (≈60 s)")
	}
	srv := startMemoryServer(t)
	loaded := srv.status(t, "VmHWM")
	t.Logf("loading (with /dev/zero, a FIFO and sparse files of 64 GiB and 1.5 GiB in plugin_dirs): peak RSS %d MiB, now %d MiB",
		loaded>>20, srv.status(t, "VmRSS")>>20)
	if loaded > maxRSS {
		t.Errorf("peak RSS while loading %d MiB, over the %d MiB bound", loaded>>20, maxRSS>>20)
	}

	cases := []struct {
		name string
		run  func(t *testing.T, s *memServer)
	}{
		{"linear memory: 4 calls growing to the 64 MiB limit and 4 Go plugins out of memory, at once", func(t *testing.T, s *memServer) {
			s.parallel(t, 4, "memory_grow", nil, "refused after 1024 pages")
			s.parallel(t, 4, "go_hog", nil, "out of memory")
			s.parallel(t, 8, "", nil, "") // the two together
		}},
		{"wasm stack: 4 overflowing recursions at once", func(t *testing.T, s *memServer) {
			s.parallel(t, 4, "traps_recurse", nil, "plugin crashed")
		}},
		{"notifications: 1,000 log lines of 1 MiB, 4 calls at once", func(t *testing.T, s *memServer) {
			s.parallel(t, 4, "flood_logs", map[string]any{"n": 1000, "size": 1 << 20}, "done")
		}},
		{"Extism host calls without grants: 60 MiB http_request bodies and elicitations, the kernel filled in 1 MiB blocks, 100,000 denials", func(t *testing.T, s *memServer) {
			s.parallel(t, 4, "post", nil, "")
			s.parallel(t, 4, "elicit", nil, "")
			s.parallel(t, 4, "fill", nil, "")
			s.parallel(t, 1, "deny", nil, "")
			s.parallel(t, 4, "url", nil, "")
		}},
		{"arguments and output: 40 calls with 4 MiB bodies (the [http] max_body) answering 4 MiB (the max_output), at once (the request bytes in flight)", func(t *testing.T, s *memServer) {
			text := strings.Repeat("a", 4<<20-1024)
			s.parallel(t, 40, "good_echo", map[string]any{"text": text}, "")
		}},
		{"task results: 48 tasks of 4 MiB results from one principal (max_task_bytes_per_principal)", func(t *testing.T, s *memServer) {
			s.tasks(t, 48)
		}},
		{"sessions: 1,000 legacy sessions, each initialize with 60 KiB of capabilities", func(t *testing.T, s *memServer) {
			s.sessions(t, 1000, 60<<10)
		}},
		{"subscriptions: 90 legacy sessions subscribing 100 URIs of 8 KiB each, past max_subscription_bytes (64 MiB)", func(t *testing.T, s *memServer) {
			s.subscriptions(t, 90, 100, 8100)
		}},
	}
	worst := loaded
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv.resetPeak(t)
			start := time.Now()
			tc.run(t, srv)
			peak := srv.status(t, "VmHWM")
			worst = max(worst, peak)
			t.Logf("peak RSS %d MiB (now %d MiB) in %v", peak>>20, srv.status(t, "VmRSS")>>20, time.Since(start).Round(time.Millisecond))
			if peak > maxRSS {
				t.Errorf("peak RSS %d MiB, over the %d MiB bound", peak>>20, maxRSS>>20)
			}
		})
	}
	if got := srv.call(t, "good_echo", map[string]any{"text": "still here"}); !strings.Contains(got, "still here") {
		t.Errorf("the server does not answer after the cases: %.300s", got)
	}
	t.Logf("worst peak RSS %d MiB (bound %d MiB)", worst>>20, maxRSS>>20)
}

// memServer is a wasmcp serve --http process.
type memServer struct {
	p       *proc
	url     string // the MCP endpoint
	pid     int
	session string       // a legacy session for the tool calls
	ids     atomic.Int64 // the session's request ids
}

// startMemoryServer writes a configuration serving the hostile corpus's
// memory-hungry plugins with the default limits and no grants, starts the
// binary on it and waits until every plugin serves.
func startMemoryServer(t *testing.T) *memServer {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	// A plugin directory of hostile entries, looked at before they are
	// read: a symbolic link to /dev/zero, a FIFO, sparse files of 64 GiB
	// and 1.5 GiB.
	dir := t.TempDir()
	if err := os.Symlink("/dev/zero", filepath.Join(dir, "zero.wasm")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int64{"sparse64g.wasm": 64 << 30, "sparse1g.wasm": 3 << 29} {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[server]\nkv_dir = \":memory:\"\nplugin_dirs = [%q]\n", dir)
	for _, p := range []struct{ name, file, prefix string }{
		{"good", "testdata/hostile/good.wasm", "good_"},
		{"memory", "testdata/hostile/memory.wasm", "memory_"},
		{"gocrash", "testdata/hostile/gocrash.wasm", "go_"},
		{"traps", "testdata/hostile/traps.wasm", "traps_"},
		{"output", "testdata/hostile/output.wasm", "output_"},
		{"flood", "testdata/hostile/flood.wasm", "flood_"},
		{"hoard", "testdata/hostile/hoard.wasm", "hoard_"},
		{"greedy", "testdata/extism/greedy.wasm", ""}, // its tools are picked by their first letter
	} {
		fmt.Fprintf(&cfg, "[[plugins]]\nname = %q\npath = %q\n", p.name, filepath.Join(root, p.file))
		if p.prefix != "" {
			fmt.Fprintf(&cfg, "prefix = %q\n", p.prefix)
		}
	}
	path := filepath.Join(t.TempDir(), "wasmcp.toml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, _, stderr := startServe(t, nil, "--config", path, "--http", "127.0.0.1:0")
	s := &memServer{p: p, pid: p.cmd.Process.Pid}
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default: // the server's log: not read past the address
			}
		}
		close(lines)
	}()
	timeout := time.After(60 * time.Second)
	for s.url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("wasmcp exited before serving")
			}
			if _, rest, ok := strings.Cut(l, "serving MCP on "); ok {
				s.url, _, _ = strings.Cut(rest, " ")
			}
		case <-timeout:
			t.Fatal("wasmcp did not start serving within 60 s")
		}
	}
	go func() { // keep the server's log flowing
		for range lines {
		}
	}()
	if _, s.session, _ = s.initialize(t, map[string]any{}, "memory-test"); s.session == "" {
		t.Fatal("no session")
	}
	// initialize does not wait for the plugins: wait until each serves.
	deadline := time.Now().Add(60 * time.Second)
	for {
		list := s.rpc(t, "tools/list", map[string]any{}, nil)
		if strings.Contains(list, `"post"`) && strings.Contains(list, `"hoard_big"`) && strings.Contains(list, `"go_hog"`) &&
			strings.Contains(list, `"good_echo"`) && strings.Contains(list, `"flood_logs"`) && strings.Contains(list, `"traps_recurse"`) &&
			strings.Contains(list, `"memory_grow"`) && strings.Contains(list, `"output_huge"`) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugins did not all load within 60 s: %.500s", list)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// status returns a size field of /proc/PID/status (VmRSS, VmHWM), bytes.
func (s *memServer) status(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, s.pid)
	return 0
}

// resetPeak sets the process's VmHWM to its current RSS (clear_refs 5),
// so that each case's peak is its own.
func (s *memServer) resetPeak(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.pid), []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS (%v): each peak below includes the cases before", err)
	}
}

// modern is the _meta of a 2026-07-28 request declaring the tasks
// extension.
var modern = map[string]any{
	"io.modelcontextprotocol/protocolVersion": "2026-07-28",
	"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}},
	"io.modelcontextprotocol/clientInfo": map[string]any{"name": "memory-test", "version": "1"},
}

// memClient is httpClient waiting for 100 Continue before it sends a
// body that asks for one.
var memClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{ExpectContinueTimeout: 10 * time.Second, MaxIdleConnsPerHost: 64}}

// post sends one JSON-RPC message and returns the status, the headers and
// the response message (the last data line of an event stream).
func (s *memServer) post(t *testing.T, msg map[string]any, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	body, _ := json.Marshal(msg)
	req, err := newPost(s.url, string(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if len(body) > 256<<10 {
		// As a careful client sends a large body: only once the server
		// asks for it. A body the server refuses unread (past the request
		// bytes in flight) is then not sent, instead of being cut off by
		// the connection's close, which can reach the client as a reset
		// before the 503 does.
		req.Header.Set("Expect", "100-continue")
	}
	resp, err := memClient.Do(req)
	if err != nil {
		t.Errorf("POST %v: %v", msg["method"], err)
		return 0, nil, ""
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	out := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if d, ok := strings.CutPrefix(lines[i], "data: "); ok {
				out = d
				break
			}
		}
	}
	return resp.StatusCode, resp.Header, out
}

// rpc sends a 2026-07-28 request (stateless: every one is the same
// anonymous principal) and returns the response message.
func (s *memServer) rpc(t *testing.T, method string, params map[string]any, _ map[string]string) string {
	t.Helper()
	params["_meta"] = modern
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for _, key := range []string{"name", "uri", "taskId"} {
		if v, ok := params[key].(string); ok {
			hdr["Mcp-Name"] = v
		}
	}
	_, _, out := s.post(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, hdr)
	return out
}

// call calls tool with args in the legacy session and returns the
// response message. (The corpus's WAT plugins pick their tool by the first
// "name" of the request they get, and a 2026-07-28 request's clientInfo
// comes first.)
func (s *memServer) call(t *testing.T, tool string, args map[string]any) string {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	_, _, out := s.post(t, map[string]any{"jsonrpc": "2.0", "id": s.ids.Add(1), "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}},
		map[string]string{"Mcp-Session-Id": s.session, "MCP-Protocol-Version": "2025-11-25"})
	return out
}

// initialize opens a legacy (2025-11-25) session and returns its id.
func (s *memServer) initialize(t *testing.T, caps map[string]any, name string) (int, string, string) {
	t.Helper()
	code, hdr, out := s.post(t, map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": map[string]any{"name": name, "version": "1"},
	}}, nil)
	if hdr == nil {
		return code, "", out
	}
	id := hdr.Get("Mcp-Session-Id")
	if code == http.StatusOK && id != "" {
		s.post(t, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
			map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"})
	}
	return code, id, out
}

// parallel makes n calls of tool at once and checks that each answers
// (containing want, when set). An empty tool makes the calls of the
// linear-memory case's two tools, half each.
func (s *memServer) parallel(t *testing.T, n int, tool string, args map[string]any, want string) {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]string, n)
	for i := range n {
		name := tool
		if name == "" {
			name = []string{"memory_grow", "go_hog"}[i%2]
		}
		wg.Go(func() { out[i] = s.call(t, name, args) })
	}
	wg.Wait()
	answers := map[string]int{}
	for _, o := range out {
		switch {
		case strings.Contains(o, "request bytes in flight"):
			answers["busy: request bytes in flight"]++
		case strings.Contains(o, `"error"`):
			answers["error"]++
		case strings.Contains(o, `"result"`):
			answers["result"]++
		}
	}
	for i, o := range out {
		if !strings.Contains(o, `"result"`) && !strings.Contains(o, `"error"`) {
			t.Errorf("%s call %d: no answer: %.300s", tool, i, o)
		} else if want != "" && !strings.Contains(o, want) {
			t.Errorf("%s call %d: %.300s, want %q", tool, i, o, want)
		}
	}
	t.Logf("%s ×%d: %v; %.160s", tool, n, answers, out[0])
}

// tasks starts n tasks of the hoard plugin's 4 MiB result, 8 at a time,
// waits for each to end and checks that past the per-principal budget
// they fail naming it.
func (s *memServer) tasks(t *testing.T, n int) {
	t.Helper()
	var mu sync.Mutex
	status := map[string]int{}
	var failed string
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			var r struct {
				Result struct {
					ResultType, TaskID, Status string
					Error                      json.RawMessage
				}
				Error json.RawMessage
			}
			out := s.rpc(t, "tools/call", map[string]any{"name": "hoard_big", "arguments": map[string]any{}}, nil)
			if json.Unmarshal([]byte(out), &r) != nil || r.Error != nil || r.Result.TaskID == "" {
				mu.Lock()
				status["refused"]++
				failed = out
				mu.Unlock()
				return
			}
			id := r.Result.TaskID
			for deadline := time.Now().Add(30 * time.Second); ; {
				out = s.rpc(t, "tasks/get", map[string]any{"taskId": id}, nil)
				r.Result.Status = ""
				_ = json.Unmarshal([]byte(out), &r)
				if st := r.Result.Status; st == "completed" || st == "failed" || st == "cancelled" {
					mu.Lock()
					status[st]++
					if st == "failed" {
						failed = string(r.Result.Error)
					}
					mu.Unlock()
					return
				}
				if time.Now().After(deadline) {
					t.Errorf("task %s did not end: %.300s", id, out)
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	t.Logf("tasks: %v; a refusal: %.300s", status, failed)
	if status["completed"] == 0 || status["completed"] > 8 {
		t.Errorf("%d tasks completed, want 1 to 8 (32 MiB of 4 MiB results)", status["completed"])
	}
	if status["failed"]+status["refused"] == 0 || !strings.Contains(failed, "budget") {
		t.Errorf("no task was refused by the budget: %v %.300s", status, failed)
	}
}

// sessions opens n legacy (2025-11-25) sessions, each initialize
// carrying capabilities of about size bytes, 8 at a time, and checks that
// each was answered (a session, or a refusal of its size).
func (s *memServer) sessions(t *testing.T, n, size int) {
	t.Helper()
	blob := strings.Repeat("c", size)
	var mu sync.Mutex
	codes := map[int]int{}
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			code, id, out := s.initialize(t, map[string]any{"experimental": map[string]any{"blob": blob}, "roots": map[string]any{}}, fmt.Sprintf("client-%d", i))
			mu.Lock()
			codes[code]++
			mu.Unlock()
			if code == http.StatusOK && (id == "" || !bytes.Contains([]byte(out), []byte(`"protocolVersion"`))) {
				t.Errorf("initialize %d: no session: %.300s", i, out)
			}
		})
	}
	wg.Wait()
	t.Logf("initialize answers by status: %v", codes)
	if codes[http.StatusOK] == 0 {
		t.Error("no session was opened")
	}
}

// subscriptions opens n legacy sessions and subscribes each to per URIs
// of size bytes, 8 requests at once, and checks that the server-wide
// budget (64 MiB by default, 64 bytes more a subscription) refused the
// ones past it as busy.
func (s *memServer) subscriptions(t *testing.T, n, per, size int) {
	t.Helper()
	var ok, busy, other atomic.Int64
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i := range n {
		_, id, _ := s.initialize(t, map[string]any{}, fmt.Sprintf("subscriber-%d", i))
		if id == "" {
			t.Fatalf("initialize %d: no session", i)
		}
		for j := range per {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				p := fmt.Sprintf("file:///sub/%d/%d/", i, j)
				_, _, out := s.post(t, map[string]any{"jsonrpc": "2.0", "id": j, "method": "resources/subscribe", "params": map[string]any{"uri": p + strings.Repeat("u", size-len(p))}},
					map[string]string{"Mcp-Session-Id": id, "MCP-Protocol-Version": "2025-11-25"})
				switch {
				case strings.Contains(out, `"result"`):
					ok.Add(1)
				case strings.Contains(out, `"busy":true`):
					busy.Add(1)
				default:
					if other.Add(1) == 1 {
						t.Errorf("subscribe: %.300s", out)
					}
				}
			})
		}
	}
	wg.Wait()
	t.Logf("subscriptions kept %d, refused as busy %d, other answers %d", ok.Load(), busy.Load(), other.Load())
	if most := int64(64<<20) / int64(size+64); ok.Load() > most || busy.Load() == 0 {
		t.Errorf("%d subscriptions of %d bytes kept (the budget holds %d), %d refused", ok.Load(), size, most, busy.Load())
	}
}
