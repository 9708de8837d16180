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
	r := redistest.Start(t)
	var urls []string
	for range 3 {
		cfg := strings.NewReplacer("{{redis}}", r.URL(), "{{key}}", clusterKey).Replace(clusterTasksConfig)
		urls = append(urls, serveHTTP(t, newTestServer(t, cfg)))
	}
	caps := map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	call := func(i int, method string, params map[string]any) map[string]any {
		t.Helper()
		params["_meta"] = modernMeta(caps)
		hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
		if n, ok := params["name"].(string); ok {
			hdr["Mcp-Name"] = n
		}
		if n, ok := params["taskId"].(string); ok {
			hdr["Mcp-Name"] = n
		}
		c := &httpClient{t: t, url: urls[i] + "/mcp"}
		res := c.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, hdr)
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

	long := start(30)
	if st := status(call(2, "tasks/get", map[string]any{"taskId": long})); st != "working" {
		t.Fatalf("long task on replica 2: %q", st)
	}
	call(2, "tasks/cancel", map[string]any{"taskId": long})
	eventually(t, "task cancelled, seen from replica 1", func() bool {
		return status(call(1, "tasks/get", map[string]any{"taskId": long})) == "cancelled"
	})
}
