package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// waitTask polls tasks/get until the task ended and returns the result
// object tasks/get answered.
func waitTask(t *testing.T, c *stdioClient, id string) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		res, _ := c.rpc("get", "tasks/get", withMeta(map[string]any{"taskId": id}, withTasks))
		wantResult(t, res)
		switch field(t, res.Result, "status") {
		case "completed", "failed", "cancelled":
			var m map[string]any
			if err := json.Unmarshal(res.Result, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s did not end: %.200s", id, res.Result)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTaskByteBudget: with the default budgets, the ended tasks of one
// principal hold at most 32 MiB of results: 4 MB results complete until
// the budget is full, then a result is refused and its task is failed
// with an error naming the budget (before: every result was kept for the
// task ttl, 1 GiB after 161 tasks). Ending tasks free nothing until they
// expire, so the refusal holds.
func TestTaskByteBudget(t *testing.T) {
	c := startStdio(t, &mcptest.Options{Tasks: true}, nil)
	const n = 4 << 20
	completed := 0
	for i := range 12 {
		res, _ := c.rpc("call", "tools/call", withMeta(map[string]any{"name": "task_big", "arguments": map[string]any{"n": n}}, withTasks))
		wantResult(t, res)
		if rt := field(t, res.Result, "resultType"); rt != "task" {
			// A first round done within the start wait answers at once.
			t.Fatalf("call %d: not a task: %.200s", i, res.Result)
		}
		got := waitTask(t, c, field(t, res.Result, "taskId").(string))
		switch got["status"] {
		case "completed":
			completed++
			continue
		case "failed":
			msg, _ := got["error"].(map[string]any)["message"].(string)
			if !strings.Contains(msg, "budget") || !strings.Contains(msg, "max_task_bytes_per_principal") {
				t.Fatalf("failed task's error does not name the budget: %q", msg)
			}
			if completed < 6 || completed > 8 {
				t.Fatalf("%d results of 4 MiB kept before the refusal, want 6..8 (32 MiB)", completed)
			}
			return
		default:
			t.Fatalf("call %d: status %v", i, got["status"])
		}
	}
	t.Fatalf("%d results of 4 MiB were all kept: no byte budget", completed)
}
