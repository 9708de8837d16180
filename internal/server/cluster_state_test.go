package server

import (
	"encoding/json"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
)

// cutProxy forwards loopback TCP connections to a Redis server until Cut:
// then it closes every connection and refuses new ones, as a replica that
// died, or lost the network, would look to the store.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func startCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

// URL is the proxy's redis:// URL.
func (p *cutProxy) URL() string { return "redis://" + p.ln.Addr().String() + "/0" }

func (p *cutProxy) serve(c net.Conn) {
	u, err := net.Dial("tcp", p.target)
	p.mu.Lock()
	if err != nil || p.cut {
		p.mu.Unlock()
		c.Close()
		if u != nil {
			u.Close()
		}
		return
	}
	p.conns = append(p.conns, c, u)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(u, c); u.Close() }()
	_, _ = io.Copy(c, u)
	c.Close()
}

// Cut closes every connection and refuses new ones.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// stateReplica starts a replica of clusterTasksConfig on redis URL url,
// with more [limits] lines.
func stateReplica(t *testing.T, url, limits string) string {
	t.Helper()
	cfg := strings.NewReplacer("{{redis}}", url, "{{key}}", clusterKey).Replace(clusterTasksConfig)
	cfg = strings.Replace(cfg, "[cluster]", "[limits]\n"+limits+"\n[cluster]", 1)
	return serveHTTP(t, newTestServer(t, cfg))
}

var tasksCaps = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}

// modernOn sends a 2026-07-28 request declaring the tasks extension to
// the replica at base.
func modernOn(t *testing.T, base, method string, params map[string]any) httpResult {
	t.Helper()
	c := &httpClient{t: t, url: base + "/mcp"}
	return c.modernCaps(method, params, tasksCaps)
}

// startTask starts slow_compute as a task on base and returns its id.
func startTask(t *testing.T, base string, seconds float64) string {
	t.Helper()
	res := modernOn(t, base, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds, "label": "x"}})
	var out struct {
		ResultType, TaskID string
	}
	if res.Error != nil || json.Unmarshal(res.Result, &out) != nil || out.ResultType != "task" || out.TaskID == "" {
		t.Fatalf("tools/call as a task: %s", res.raw)
	}
	return out.TaskID
}

// taskStatus is the status tasks/get on base gives task id ("" on an
// error), and the raw answer.
func taskStatus(t *testing.T, base, id string) (string, string) {
	t.Helper()
	res := modernOn(t, base, "tasks/get", map[string]any{"taskId": id})
	var out struct{ Status string }
	_ = json.Unmarshal(res.Result, &out)
	return out.Status, res.raw
}

// TestClusterTaskLease: a task whose replica stops renewing its lease
// (here: it loses Redis, as a replica that died does) is seen failed by
// the other replicas once the lease passes, with an error that says so,
// and stops holding its principal's cap. Before, it stayed working there
// for the whole task_ttl (1 h).
func TestClusterTaskLease(t *testing.T) {
	r := redistest.Start(t)
	proxy := startCutProxy(t, r.Addr())
	limits := "task_lease = \"1s\"\nmax_tasks_per_principal = 1"
	doomed := stateReplica(t, proxy.URL(), limits)
	other := stateReplica(t, r.URL(), limits)

	id := startTask(t, doomed, 60)
	// The lease is renewed while the replica lives: still working,
	// polled over three leases.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if st, raw := taskStatus(t, other, id); st != "working" {
			t.Fatalf("a task whose replica is alive, seen from another: %s", raw)
		}
	}
	eventually(t, "the live task holds the principal's cap of 1", func() bool {
		res := modernOn(t, other, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "y"}})
		return res.Error != nil && res.Error.Code == -32001
	})

	proxy.Cut()
	var raw string
	eventually(t, "the task of a replica that died seen failed", func() bool {
		var st string
		st, raw = taskStatus(t, other, id)
		return st == "failed"
	})
	if !strings.Contains(raw, "lease passed") {
		t.Errorf("tasks/get of a task whose lease passed: %s; want an error saying so", raw)
	}
	// Its cap is free again: another task of the same principal starts.
	startTask(t, other, 0)
}

// TestClusterRedisOutageTasks: with Redis stopped, a task-optional tool
// that needs no kv answers directly to a client that declares the tasks
// extension, and tasks/get says the task store is unavailable (retry
// later). Before, both were a bare -32603 internal error.
func TestClusterRedisOutageTasks(t *testing.T) {
	r := redistest.Start(t)
	base := stateReplica(t, r.URL(), "")
	id := startTask(t, base, 0)
	r.Stop()
	tests := []struct {
		name, method string
		params       map[string]any
		want         string // in the answer
		wantErr      bool
	}{
		{"optional task answers directly", "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0, "label": "z"}}, `Computed \"z\"`, false},
		{"tasks/get", "tasks/get", map[string]any{"taskId": id}, "task store unavailable; retry later", true},
		{"tasks/cancel", "tasks/cancel", map[string]any{"taskId": id}, "task store unavailable; retry later", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := modernOn(t, base, tc.method, tc.params)
			if (res.Error != nil) != tc.wantErr || !strings.Contains(res.raw, tc.want) {
				t.Fatalf("%s with Redis down: %s; want %q", tc.method, res.raw, tc.want)
			}
			if tc.wantErr && !strings.Contains(res.raw, `"busy":true`) {
				t.Errorf("%s with Redis down: %s; want data.busy with retryAfterMs", tc.method, res.raw)
			}
		})
	}
}

// TestClusterInvalidRecords: records in Redis that parse but are invalid
// are not served: a task of status "bogus" is not found, and a legacy
// session whose record says protocol version 9999-01-01 (or carries
// megabytes of capabilities) is refused by a replica that adopts it (404)
// and ignored by the one that holds it. Before, both were served as read.
func TestClusterInvalidRecords(t *testing.T) {
	r := redistest.Start(t)
	urls := []string{stateReplica(t, r.URL(), ""), stateReplica(t, r.URL(), "")}

	t.Run("task", func(t *testing.T) {
		id := startTask(t, urls[0], 0)
		eventually(t, "task completed", func() bool { st, _ := taskStatus(t, urls[1], id); return st == "completed" })
		key := "{wasmcp:tasks}:t:" + id
		js, err := r.Do("GET", key)
		if err != nil || js == "" {
			t.Fatalf("GET %s: %q, %v", key, js, err)
		}
		tests := []struct{ name, from, to string }{
			{"status bogus", `"status":"completed"`, `"status":"bogus"`},
			{"era 9999", `"era":"2026-07-28"`, `"era":"9999-01-01"`},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if !strings.Contains(js, tc.from) {
					t.Fatalf("stored task has no %s: %s", tc.from, js)
				}
				if _, err := r.Do("SET", key, strings.Replace(js, tc.from, tc.to, 1), "KEEPTTL"); err != nil {
					t.Fatal(err)
				}
				res := modernOn(t, urls[1], "tasks/get", map[string]any{"taskId": id})
				if res.Error == nil || strings.Contains(res.raw, "bogus") || strings.Contains(res.raw, "9999") {
					t.Errorf("tasks/get of a planted invalid record: %s; want not found", res.raw)
				}
			})
		}
	})

	t.Run("session record bounded", func(t *testing.T) {
		// What a session keeps of 48 KiB of capabilities and clientInfo,
		// read from Redis on every request of a shared session: a few
		// hundred bytes (before: every byte).
		pad := strings.Repeat("x", 12<<10)
		c := &legacyClient{t: t, urls: urls}
		init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{"experimental": map[string]any{"a": pad}, "sampling": map[string]any{"b": pad},
				"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{"c": pad}}},
			"clientInfo": map[string]any{"name": pad, "version": "1"}}))
		c.sid = init.header.Get("Mcp-Session-Id")
		js, err := r.Do("GET", "wasmcp:session:"+c.sid)
		if err != nil || js == "" {
			t.Fatalf("session record: %q, %v (initialize: %s)", js, err, init.raw)
		}
		t.Logf("session record: %d bytes", len(js))
		if len(js) > 1024 || !strings.Contains(js, `"sampling":{}`) {
			t.Errorf("session record of %d bytes: %.300s", len(js), js)
		}
	})

	t.Run("session", func(t *testing.T) {
		big := strings.Repeat("x", 3<<20)
		tests := []struct {
			name  string
			plant func(map[string]any)
		}{
			{"protocol version 9999", func(st map[string]any) { st["v"] = "9999-01-01" }},
			{"log level 99", func(st map[string]any) { st["ll"] = 99 }},
			{"3 MB of capabilities", func(st map[string]any) { st["cc"] = map[string]any{"experimental": map[string]any{"x": big}} }},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				c := &legacyClient{t: t, urls: urls}
				init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
				c.sid = init.header.Get("Mcp-Session-Id")
				if c.sid == "" {
					t.Fatalf("initialize: %s", init.raw)
				}
				key := "wasmcp:session:" + c.sid
				js, err := r.Do("GET", key)
				var st map[string]any
				if err != nil || json.Unmarshal([]byte(js), &st) != nil {
					t.Fatalf("GET %s: %q, %v", key, js, err)
				}
				tc.plant(st)
				b, _ := json.Marshal(st)
				if _, err := r.Do("SET", key, string(b), "KEEPTTL"); err != nil {
					t.Fatal(err)
				}
				// The replica that does not hold the session refuses it.
				if res := c.post(1, rpc(2, "ping", map[string]any{})); res.status != 404 {
					t.Errorf("a planted invalid session adopted by another replica: %d %s, want 404", res.status, res.raw)
				}
				// The one that holds it keeps the state it has.
				if res := c.post(0, rpc(3, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bo"}})); !strings.Contains(res.raw, "Hello, Bo!") {
					t.Errorf("the holding replica after a planted invalid record: %d %s", res.status, res.raw)
				}
			})
		}
	})
}
