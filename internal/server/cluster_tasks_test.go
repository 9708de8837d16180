package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
)

// clusterTasksConfig serves the conformance fixture's task tools behind
// a [cluster] table.
const clusterTasksConfig = `
[server]
name = "test"
[cluster]
redis = "{{redis}}"
key = "{{key}}"
[[plugins]]
name = "everything"
path = "../../../examples/conformance/go-everything/go-everything.wasm"
[plugins.grants]
kv = true
`

// TestClusterTasks checks that a task started on one replica (2026-07-28,
// io.modelcontextprotocol/tasks) is polled to its result on another, and
// cancelled through a third while it runs on the first.
func TestClusterTasks(t *testing.T) {
	urls := taskReplicas(t, 3)
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	call := func(i int, method string, params map[string]any) map[string]any {
		t.Helper()
		c := &httpClient{t: t, url: urls[i] + "/mcp"}
		res := c.modernCaps(method, params, caps)
		var out map[string]any
		if res.Error != nil || json.Unmarshal(res.Result, &out) != nil {
			t.Fatalf("%s on replica %d: %s", method, i, res.raw)
		}
		return out
	}
	start := func(seconds float64) string {
		res := call(0, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": seconds, "label": "x"}})
		id, _ := res["taskId"].(string)
		if res["resultType"] != "task" || id == "" {
			t.Fatalf("tools/call as a task: %v", res)
		}
		return id
	}
	status := func(res map[string]any) string {
		s, _ := res["status"].(string)
		return s
	}

	id := start(0.5)
	var done map[string]any
	eventually(t, "task completed, seen from replica 1", func() bool {
		done = call(1, "tasks/get", map[string]any{"taskId": id})
		return status(done) == "completed"
	})
	if b, _ := json.Marshal(done); !strings.Contains(string(b), `Computed \"x\"`) {
		t.Errorf("tasks/get on replica 1 after completion: %s", b)
	}

	// A listen stream on replica 2 hears of a task run on replica 0.
	watched := start(2)
	lines := listenWith(t, urls[2], map[string]any{"taskIds": []string{watched}}, caps)
	for d := next(t, lines, "notifications/tasks"); !strings.Contains(d, `"status":"completed"`); d = next(t, lines, "notifications/tasks") {
		if !strings.Contains(d, watched) {
			t.Fatalf("listen stream on replica 2: %s", d)
		}
	}

	long := start(30)
	if st := status(call(2, "tasks/get", map[string]any{"taskId": long})); st != "working" {
		t.Fatalf("long task on replica 2: %q", st)
	}
	call(2, "tasks/cancel", map[string]any{"taskId": long})
	eventually(t, "task cancelled, seen from replica 1", func() bool {
		return status(call(1, "tasks/get", map[string]any{"taskId": long})) == "cancelled"
	})
}

// taskReplicas starts n replicas of clusterTasksConfig sharing one Redis.
func taskReplicas(t *testing.T, n int) []string {
	r := redistest.Start(t)
	var urls []string
	for range n {
		cfg := strings.NewReplacer("{{redis}}", r.URL(), "{{key}}", clusterKey).Replace(clusterTasksConfig)
		urls = append(urls, serveHTTP(t, newTestServer(t, cfg)))
	}
	return urls
}

// TestClusterLegacyTaskStatus checks that the notifications/tasks/status
// of a task a 2025-11-25 session started on one replica reach the
// session's GET stream held by another.
func TestClusterLegacyTaskStatus(t *testing.T) {
	c := &legacyClient{t: t, urls: taskReplicas(t, 2)}
	init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{"tasks": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	c.sid = init.header.Get("Mcp-Session-Id")
	get := c.sse(1, nil)
	res := c.post(0, rpc(2, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 2, "label": "y"}, "task": map[string]any{}}))
	if res.Error != nil || !strings.Contains(res.raw, "taskId") {
		t.Fatalf("tools/call with params.task on replica 0: %s", res.raw)
	}
	for d := next(t, get, "notifications/tasks/status"); !strings.Contains(d, `"status":"completed"`); d = next(t, get, "notifications/tasks/status") {
	}
}
