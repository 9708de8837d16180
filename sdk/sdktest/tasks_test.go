package sdktest

import (
	"fmt"
	"testing"

	"github.com/wasmcp/wasmcp/runtime"
)

// taskLangs are the SDK fixtures whose "task" tool declares task support
// (execution.taskSupport, docs/tasks.md) and calls task/start.
var taskLangs = []string{"as", "c", "rust"}

// TestTaskSupport: a tool the SDK declares optional carries
// execution.taskSupport "optional" in the manifest, one declared forbidden
// (echo) carries no execution, and the SDK's task-start call reaches the
// host as task/start with {} (a host error becomes a readable tool error).
func TestTaskSupport(t *testing.T) {
	for _, lang := range taskLangs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, fixtures[lang], runtime.Limits{})
			status, m := call(t, p, nil, envelope("wasmcp/describe", obj{}, nil))
			if status != 0 {
				t.Fatalf("status %d: %v", status, m)
			}
			exec := map[string]any{}
			for _, tl := range m["tools"].([]any) {
				tool := tl.(obj)
				if e, ok := tool["execution"]; ok {
					exec[tool["name"].(string)] = e
				}
			}
			if got := fmt.Sprint(exec); got != "map[task:map[taskSupport:optional]]" {
				t.Errorf("execution members = %s, want only task's taskSupport optional", got)
			}

			h := newHost(map[string]answer{"task/start": {result: `{}`}})
			if got, _ := toolText(t, p, h, "task", obj{}); got != "task done" {
				t.Errorf("task: %q", got)
			}
			calls, _ := h.seen()
			if len(calls) != 1 || calls[0].Method != "task/start" || len(calls[0].Params) != 0 {
				t.Errorf("task calls: %v, want one task/start with {}", calls)
			}

			h = newHost(map[string]answer{"task/start": {errno: -3}})
			if got := toolError(t, p, h, "task", obj{}); got != "task/start failed: canceled or past the deadline" {
				t.Errorf("task/start canceled: %q", got)
			}
		})
	}
}

// TestTaskSupportBadEntry: a task declaration naming no tool (C) or with a
// value that is not MCP's (AssemblyScript) fails describe with a JSON-RPC
// error that says what is wrong (the host then refuses the plugin).
func TestTaskSupportBadEntry(t *testing.T) {
	for _, tc := range []struct{ fixture, want string }{
		{"testdata/c-badtask/plugin.wasm", `plugin manifest: task_tools: each entry needs the name of a tool and support "optional", "required" or "forbidden"`},
		{"testdata/as-badtask/plugin.wasm", `plugin manifest: task support of "echo": want a tool's name and "optional", "required" or "forbidden"`},
	} {
		p := newPool(t, tc.fixture, runtime.Limits{})
		status, m := call(t, p, nil, envelope("wasmcp/describe", obj{}, nil))
		if status != 1 || fmt.Sprint(m["code"]) != "-32603" || m["message"] != tc.want {
			t.Errorf("%s describe: status %d, %v; want status 1, -32603 %q", tc.fixture, status, m, tc.want)
		}
	}
}
