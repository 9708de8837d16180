package mcp_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// withTasks is the _meta extra of a 2026-07-28 request declaring the tasks
// extension.
var withTasks = map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
	"elicitation": map[string]any{}, "extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}}

func createTask(t *testing.T, c *stdioClient) string {
	t.Helper()
	res, _ := c.rpc("create", "tools/call", withMeta(map[string]any{"name": "task_ask"}, withTasks))
	wantResult(t, res)
	if rt := field(t, res.Result, "resultType"); rt != "task" {
		t.Fatalf("tools/call task_ask: %s", res.Result)
	}
	return field(t, res.Result, "taskId").(string)
}

// TestTaskNotifications: subscriptions/listen with taskIds acknowledges
// them and sends notifications/tasks (the task as tasks/get shows it) on
// each change, up to the inlined result.
func TestTaskNotifications(t *testing.T) {
	c := startStdio(t, &mcptest.Options{Tasks: true}, nil)
	id := createTask(t, c)
	for deadline := time.Now().Add(10 * time.Second); ; {
		res, _ := c.rpc("get", "tasks/get", withMeta(map[string]any{"taskId": id}, withTasks))
		if field(t, res.Result, "status") == "input_required" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task not input_required: %s", res.Result)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.send(request("listen", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}, withTasks)))
	ack := c.next()
	if ack.Method != "notifications/subscriptions/acknowledged" || !strings.Contains(string(ack.Params), `"taskIds":["`+id+`"]`) {
		t.Fatalf("acknowledgement: %s", ack.raw)
	}
	res, before := c.rpc("update", "tasks/update", withMeta(map[string]any{"taskId": id,
		"inputResponses": map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}}}, withTasks))
	wantResult(t, res)
	seen := before
	for deadline := time.Now().Add(10 * time.Second); ; {
		for _, m := range seen {
			if m.Method != "notifications/tasks" {
				continue
			}
			if field(t, m.Params, "taskId") != id || field(t, m.Params, "_meta", "io.modelcontextprotocol/subscriptionId") != "listen" {
				t.Fatalf("notification: %s", m.raw)
			}
			if field(t, m.Params, "status") == "completed" {
				if !strings.Contains(string(m.Params), "hello Ann") {
					t.Fatalf("completed notification without the result: %s", m.raw)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no notifications/tasks with status completed")
		}
		seen = []*msg{c.next()}
	}
}

// TestTaskExpiry: a task is gone once its ttl (Options.TaskTTL) passed,
// whatever its status: tasks/get answers -32602 as for an unknown id.
func TestTaskExpiry(t *testing.T) {
	c := startStdio(t, &mcptest.Options{Tasks: true}, &mcp.Options{TaskTTL: 200 * time.Millisecond})
	id := createTask(t, c)
	res, _ := c.rpc("get", "tasks/get", withMeta(map[string]any{"taskId": id}, withTasks))
	wantResult(t, res)
	if ttl, _ := field(t, res.Result, "ttlMs").(float64); ttl != 200 {
		t.Fatalf("ttlMs: %s", res.Result)
	}
	time.Sleep(300 * time.Millisecond)
	res, _ = c.rpc("get2", "tasks/get", withMeta(map[string]any{"taskId": id}, withTasks))
	wantError(t, res, -32602)
}
