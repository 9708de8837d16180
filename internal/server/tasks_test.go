package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// Tasks (internal/mcp tasks*.go) end to end with real plugins: the
// conformance fixtures of go-everything (slow_compute, confirm_delete,
// failing_job, greet) and testdata/hostile/taskspin (a tool that may be a
// task and spins until interrupted).

// tasksConfig serves both; [limits] timeout is 2 s, shorter than the
// 3 s slow_compute calls that must succeed as tasks (task_timeout).
func tasksConfig(t *testing.T, extra string) string {
	return `
[server]
name = "test"
kv_dir = ":memory:"
[limits]
timeout = "2s"
memory = "64MiB"
task_timeout = "30s"
max_tasks = 3
max_tasks_per_principal = 2
` + extra + `
[[plugins]]
name = "everything"
path = "../../../examples/conformance/go-everything/go-everything.wasm"
[plugins.grants]
kv = true
elicitation = true
[[plugins]]
name = "spin"
path = ` + quote(hostilePath(t, "taskspin")) + `
instances = 1
queue_wait = "1s"
`
}

// taskClient sends 2026-07-28 requests declaring the tasks extension.
type taskClient struct {
	*httpClient
	noExtension bool
}

func (c taskClient) req(method string, params map[string]any) httpResult {
	c.t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if !c.noExtension {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	return c.modernCaps(method, params, caps)
}

// waitAlive calls the spin plugin's alive tool until it answers (its only
// instance is free), failing the test with msg if it does not within d.
func (c taskClient) waitAlive(d time.Duration, msg string) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		r := c.req("tools/call", map[string]any{"name": "alive", "arguments": map[string]any{}})
		if r.Error == nil && strings.Contains(r.raw, `"alive"`) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: %s", msg, r.raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// task is the task members of a result (CreateTaskResult, tasks/get).
type task struct {
	ResultType    string                     `json:"resultType"`
	TaskID        string                     `json:"taskId"`
	Status        string                     `json:"status"`
	StatusMessage string                     `json:"statusMessage"`
	TTL           *int64                     `json:"ttl"`
	TTLMs         *int64                     `json:"ttlMs"`
	Result        json.RawMessage            `json:"result"`
	Error         json.RawMessage            `json:"error"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
}

func decodeTask(t *testing.T, raw json.RawMessage) task {
	t.Helper()
	var tk task
	if err := json.Unmarshal(raw, &tk); err != nil || tk.TaskID == "" {
		t.Fatalf("not a task: %s (%v)", raw, err)
	}
	return tk
}

func (c taskClient) create(tool string, args map[string]any) task {
	c.t.Helper()
	r := c.req("tools/call", map[string]any{"name": tool, "arguments": args})
	if r.Error != nil {
		c.t.Fatalf("tools/call %s: %s", tool, r.raw)
	}
	tk := decodeTask(c.t.(*testing.T), r.Result)
	if tk.ResultType != "task" {
		c.t.Fatalf("tools/call %s: %s, want a CreateTaskResult", tool, r.raw)
	}
	return tk
}

func (c taskClient) get(id string) (task, httpResult) {
	c.t.Helper()
	r := c.req("tasks/get", map[string]any{"taskId": id})
	if r.Error != nil {
		return task{}, r
	}
	return decodeTask(c.t.(*testing.T), r.Result), r
}

// waitStatus polls tasks/get until the task has one of the statuses.
func (c taskClient) waitStatus(id string, want ...string) task {
	c.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		tk, r := c.get(id)
		if r.Error != nil {
			c.t.Fatalf("tasks/get: %s", r.raw)
		}
		for _, w := range want {
			if tk.Status == w {
				return tk
			}
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("task %s still %q after 30 s, want %v", id, tk.Status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func wantCode(t *testing.T, what string, r httpResult, code int) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("%s: %s, want error %d", what, r.raw, code)
	}
}

// TestTasksModernHTTP: the 2026-07-28 extension over HTTP with real
// plugins: a call longer than [limits] timeout completes as a task
// (task_timeout), input inside a task (input_required, tasks/update), a
// required tool without the extension, and a task that outlives the
// client's connection and is fetched on a new one.
func TestTasksModernHTTP(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, "")))
	c := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp"}}

	// Sync, the same call fails at the plugin's 2 s timeout...
	plain := taskClient{httpClient: c.httpClient, noExtension: true}
	r := plain.req("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 3, "label": "sync"}})
	if r.Error == nil || !strings.Contains(r.raw, "timed out") {
		t.Fatalf("sync slow_compute of 3 s with a 2 s timeout: %s", r.raw)
	}
	// ...and as a task it runs under task_timeout. The task is created on
	// a connection that is then closed; it is fetched on new ones.
	tk := c.create("slow_compute", map[string]any{"seconds": 3, "label": "long"})
	http.DefaultClient.CloseIdleConnections()
	if tk.Status != "working" || tk.TTLMs == nil || *tk.TTLMs != time.Hour.Milliseconds() {
		t.Fatalf("CreateTaskResult: %+v", tk)
	}
	done := c.waitStatus(tk.TaskID, "completed", "failed", "cancelled")
	if done.Status != "completed" || !strings.Contains(string(done.Result), `Computed \"long\" in 3 s.`) {
		t.Fatalf("task after 3 s: %+v %s", done, done.Result)
	}

	// Input asked for inside a task.
	tk = c.create("confirm_delete", map[string]any{"filename": "a.txt"})
	in := c.waitStatus(tk.TaskID, "input_required")
	if _, ok := in.InputRequests["confirm"]; !ok {
		t.Fatalf("input_required task: %+v", in)
	}
	r = c.req("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{
		"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	if r.Error != nil || string(r.Result) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/update: %s", r.raw)
	}
	if done := c.waitStatus(tk.TaskID, "completed"); !strings.Contains(string(done.Result), "Deleted a.txt.") {
		t.Fatalf("confirm_delete result: %s", done.Result)
	}

	// A tool that requires a task, from a client without the extension.
	r = plain.req("tools/call", map[string]any{"name": "failing_job", "arguments": map[string]any{}})
	wantCode(t, "failing_job without the extension", r, -32021)
	if !strings.Contains(string(r.Error.Data), `"io.modelcontextprotocol/tasks"`) {
		t.Fatalf("-32021 data: %s", r.Error.Data)
	}
	wantCode(t, "tasks/get without the extension", plain.req("tasks/get", map[string]any{"taskId": tk.TaskID}), -32021)
	_, r = c.get("no-such-task")
	wantCode(t, "tasks/get of an unknown id", r, -32602)
}

// TestTasksCancelSpinningGuest: tasks/cancel interrupts a guest in a
// tight loop. The spin plugin has one instance: "alive" can only run once
// the cancelled spin gave it back (else it waits out queue_wait, 1 s, and
// fails busy; the spin would hold it for task_timeout, 30 s).
func TestTasksCancelSpinningGuest(t *testing.T) {
	testutil.WallClock(t) // a guest spins in native code past the real 2 s plugin timeout
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, "")))
	c := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp"}}
	tk := c.create("spin", map[string]any{})
	time.Sleep(2500 * time.Millisecond) // past [limits] timeout: a task is not bound by it
	if got := c.waitStatus(tk.TaskID, "working", "failed", "completed", "cancelled"); got.Status != "working" {
		t.Fatalf("spinning task after 2.5 s (plugin timeout 2 s): %+v", got)
	}
	r := c.req("tasks/cancel", map[string]any{"taskId": tk.TaskID})
	if r.Error != nil || string(r.Result) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel: %s", r.raw)
	}
	if got := c.waitStatus(tk.TaskID, "cancelled", "failed", "completed"); got.Status != "cancelled" {
		t.Fatalf("after tasks/cancel: %+v", got)
	}
	c.waitAlive(20*time.Second, "the spin plugin's only instance is still busy after the cancel")
	// A cancel of an ended task is acknowledged (2026-07-28).
	if r := c.req("tasks/cancel", map[string]any{"taskId": tk.TaskID}); r.Error != nil {
		t.Fatalf("second tasks/cancel: %s", r.raw)
	}
}

const taskTokens = `
[auth]
[[auth.token]]
name = "alice"
token = "alice-0123456789abcdef"
[[auth.token]]
name = "bob"
token = "bob-0123456789abcdef0"
[[auth.token]]
name = "carol"
token = "carol-0123456789abcdef"
`

// TestTasksPrincipalBinding: a task is bound to the principal that
// created it; another token gets -32602 on every task method, as for an
// unknown id, and cannot cancel it.
func TestTasksPrincipalBinding(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, taskTokens)))
	alice := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp", token: "alice-0123456789abcdef"}}
	bob := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp", token: "bob-0123456789abcdef0"}}
	tk := alice.create("spin", map[string]any{})
	t.Cleanup(func() { alice.req("tasks/cancel", map[string]any{"taskId": tk.TaskID}) })
	_, r := bob.get(tk.TaskID)
	wantCode(t, "bob's tasks/get of alice's task", r, -32602)
	_, unknown := bob.get("AAAAAAAAAAAAAAAAAAAAAA")
	if r.Error.Message != unknown.Error.Message {
		t.Errorf("another's task (%q) is told apart from an unknown one (%q)", r.Error.Message, unknown.Error.Message)
	}
	wantCode(t, "bob's tasks/cancel", bob.req("tasks/cancel", map[string]any{"taskId": tk.TaskID}), -32602)
	wantCode(t, "bob's tasks/update", bob.req("tasks/update", map[string]any{"taskId": tk.TaskID, "inputResponses": map[string]any{}}), -32602)
	if got, r := alice.get(tk.TaskID); r.Error != nil || got.Status != "working" {
		t.Fatalf("alice's own task after bob tried: %+v %s", got, r.raw)
	}
}

// TestTasksLiveCap: max_tasks_per_principal (2) and max_tasks (3) bound
// the live tasks; an ended task gives its place back.
func TestTasksLiveCap(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, taskTokens)))
	alice := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp", token: "alice-0123456789abcdef"}}
	bob := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp", token: "bob-0123456789abcdef0"}}
	carol := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp", token: "carol-0123456789abcdef"}}
	var live []struct {
		c  taskClient
		id string
	}
	t.Cleanup(func() {
		for _, l := range live {
			l.c.req("tasks/cancel", map[string]any{"taskId": l.id})
		}
	})
	slow := map[string]any{"seconds": 25, "label": "cap"}
	for _, c := range []taskClient{alice, alice, bob} {
		tk := c.create("slow_compute", slow)
		live = append(live, struct {
			c  taskClient
			id string
		}{c, tk.TaskID})
	}
	r := alice.req("tools/call", map[string]any{"name": "slow_compute", "arguments": slow})
	wantCode(t, "alice's third live task (max_tasks_per_principal 2)", r, -32001)
	r = carol.req("tools/call", map[string]any{"name": "slow_compute", "arguments": slow})
	wantCode(t, "carol's first task, the fourth live one (max_tasks 3)", r, -32001)
	// Cancelling one gives its place back.
	alice.req("tasks/cancel", map[string]any{"taskId": live[0].id})
	alice.waitStatus(live[0].id, "cancelled")
	tk := carol.create("slow_compute", slow)
	live = append(live, struct {
		c  taskClient
		id string
	}{carol, tk.TaskID})
}

// TestTasksLegacyStdio: the 2025-11-25 tasks over stdio: capabilities,
// execution.taskSupport in tools/list, params.task, tasks/get,
// tasks/list, tasks/result (waits), tasks/cancel, the -32601 refusals,
// input inside a task sent with the related-task _meta, and
// notifications/tasks/status.
func TestTasksLegacyStdio(t *testing.T) {
	srv := newTestServer(t, tasksConfig(t, ""))
	c := startStdio(t, srv)
	var elicitMeta = make(chan json.RawMessage, 1)
	c.onRequest = func(method string, params json.RawMessage) (any, error) {
		var p struct {
			Meta json.RawMessage `json:"_meta"`
		}
		_ = json.Unmarshal(params, &p)
		select {
		case elicitMeta <- p.Meta:
		default:
		}
		return map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}, nil
	}
	r := c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"elicitation": map[string]any{}},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	if !strings.Contains(string(r.Result), `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`) {
		t.Fatalf("initialize: no tasks capability: %s", r.Result)
	}
	c.notify("notifications/initialized", map[string]any{})
	if r := c.call("tools/list", map[string]any{}); !strings.Contains(string(r.Result), `"name":"slow_compute"`) ||
		!strings.Contains(string(r.Result), `"execution":{"taskSupport":"optional"}`) {
		t.Fatalf("tools/list: %s", r.Result)
	}
	legacyTests(t, c.call)

	// Input inside a task goes to the session with the related-task _meta.
	r = c.call("tools/call", map[string]any{"name": "confirm_delete", "arguments": map[string]any{"filename": "b.txt"}, "task": map[string]any{}})
	id := createdTask(t, r)
	res := c.call("tasks/result", map[string]any{"taskId": id})
	if res.Error != nil || !strings.Contains(string(res.Result), "Deleted b.txt.") {
		t.Fatalf("tasks/result of confirm_delete: %s %+v", res.Result, res.Error)
	}
	select {
	case meta := <-elicitMeta:
		if !strings.Contains(string(meta), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
			t.Fatalf("elicitation/create _meta: %s", meta)
		}
	default:
		t.Fatal("no elicitation/create reached the client")
	}
	// Status notifications and the task's progress came on the session.
	deadline := time.After(10 * time.Second)
	status, progress := false, false
	for !status || !progress {
		select {
		case n := <-c.notes:
			s := string(n)
			status = status || strings.Contains(s, `"notifications/tasks/status"`) && strings.Contains(s, `"status":"completed"`)
			progress = progress || strings.Contains(s, `"notifications/progress"`) && strings.Contains(s, `"progressToken":"legacy-progress"`)
		case <-deadline:
			t.Fatalf("notifications/tasks/status completed: %v, notifications/progress of the task: %v", status, progress)
		}
	}
}

// createdTask returns the id of a 2025-11-25 CreateTaskResult {task}.
func createdTask(t *testing.T, r response) string {
	t.Helper()
	var res struct {
		Task task `json:"task"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || res.Task.TaskID == "" || res.Task.Status != "working" || res.Task.TTL == nil {
		t.Fatalf("not a CreateTaskResult: %s %+v", r.Result, r.Error)
	}
	return res.Task.TaskID
}

// legacyTests runs the 2025-11-25 task methods through call (stdio or an
// HTTP session).
func legacyTests(t *testing.T, call func(method string, params any) response) {
	t.Helper()
	r := call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 3, "label": "legacy"},
		"task": map[string]any{"ttl": 60000}, "_meta": map[string]any{"progressToken": "legacy-progress"}})
	id := createdTask(t, r)
	if r := call("tasks/get", map[string]any{"taskId": id}); r.Error != nil || !strings.Contains(string(r.Result), `"ttl":60000`) {
		t.Fatalf("tasks/get: %s %+v", r.Result, r.Error)
	}
	if r := call("tasks/list", map[string]any{}); r.Error != nil || !strings.Contains(string(r.Result), id) {
		t.Fatalf("tasks/list: %s %+v", r.Result, r.Error)
	}
	res := call("tasks/result", map[string]any{"taskId": id}) // waits for the end, past the 2 s plugin timeout
	if res.Error != nil || !strings.Contains(string(res.Result), `Computed \"legacy\" in 3 s.`) ||
		!strings.Contains(string(res.Result), `"io.modelcontextprotocol/related-task":{"taskId":"`+id+`"}`) {
		t.Fatalf("tasks/result: %s %+v", res.Result, res.Error)
	}
	if r := call("tasks/get", map[string]any{"taskId": id}); !strings.Contains(string(r.Result), `"status":"completed"`) {
		t.Fatalf("tasks/get after the end: %s", r.Result)
	}
	for _, tc := range []struct {
		what, method string
		params       map[string]any
		code         int
	}{
		{"cancel of an ended task", "tasks/cancel", map[string]any{"taskId": id}, -32602},
		{"get of an unknown task", "tasks/get", map[string]any{"taskId": "nope"}, -32602},
		{"required tool without params.task", "tools/call", map[string]any{"name": "failing_job", "arguments": map[string]any{}}, -32601},
		{"task of a tool without task support", "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}, "task": map[string]any{}}, -32601},
		{"tasks/update (2026-07-28 only)", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{}}, -32601},
	} {
		if r := call(tc.method, tc.params); r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("%s: %s %+v, want %d", tc.what, r.Result, r.Error, tc.code)
		}
	}
	// A running task is cancelled and says so.
	r = call("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 20, "label": "x"}, "task": map[string]any{}})
	id = createdTask(t, r)
	if r := call("tasks/cancel", map[string]any{"taskId": id}); r.Error != nil || !strings.Contains(string(r.Result), `"status":"cancelled"`) {
		t.Fatalf("tasks/cancel: %s %+v", r.Result, r.Error)
	}
}

// TestTasksLegacyHTTP: the 2025-11-25 task methods over Streamable HTTP
// sessions; a task is bound to its session (another session gets -32602
// and an empty tasks/list), and is fetched on a new connection.
func TestTasksLegacyHTTP(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, "")))
	open := func() *legacyClient {
		c := &legacyClient{t: t, urls: []string{url}}
		init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
			"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
		c.sid = init.header.Get("Mcp-Session-Id")
		if c.sid == "" || !strings.Contains(init.raw, `"tasks":{"list":{}`) {
			t.Fatalf("initialize: %s", init.raw)
		}
		c.post(0, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
		return c
	}
	a, b := open(), open()
	call := func(c *legacyClient) func(string, any) response {
		return func(method string, params any) response {
			p, _ := params.(map[string]any)
			http.DefaultClient.CloseIdleConnections() // every request on a new connection
			return c.post(0, rpc(7, method, p)).response
		}
	}
	legacyTests(t, call(a))
	r := call(a)("tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 20, "label": "a"}, "task": map[string]any{}})
	id := createdTask(t, r)
	if r := call(b)("tasks/get", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("another session's tasks/get: %s %+v", r.Result, r.Error)
	}
	if r := call(b)("tasks/cancel", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("another session's tasks/cancel: %s %+v", r.Result, r.Error)
	}
	if r := call(b)("tasks/list", map[string]any{}); r.Error != nil || string(r.Result) != `{"tasks":[]}` {
		t.Fatalf("another session's tasks/list: %s %+v", r.Result, r.Error)
	}
	if r := call(a)("tasks/cancel", map[string]any{"taskId": id}); r.Error != nil {
		t.Fatalf("own tasks/cancel: %+v", r.Error)
	}
}

// TestTasksSDKFixtures: the task spelling of each guest SDK (sdk/sdktest
// fixtures, whose "task" tool is declared optional and calls task/start)
// reaches a real server: tools/list shows execution.taskSupport, and a
// task-augmented call completes as a task.
func TestTasksSDKFixtures(t *testing.T) {
	for _, lang := range []string{"as", "c", "rust"} {
		t.Run(lang, func(t *testing.T) {
			cfg := `
[server]
name = "test"
kv_dir = ":memory:"
[[plugins]]
name = "fixture"
path = "../../../sdk/sdktest/testdata/` + lang + `/plugin.wasm"
`
			url := serveHTTP(t, newTestServer(t, cfg))
			c := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp"}}
			r := c.req("tools/list", map[string]any{})
			var list struct {
				Tools []struct {
					Name      string          `json:"name"`
					Execution json.RawMessage `json:"execution"`
				} `json:"tools"`
			}
			if r.Error != nil || json.Unmarshal(r.Result, &list) != nil {
				t.Fatalf("tools/list: %s", r.raw)
			}
			exec := map[string]string{}
			for _, tl := range list.Tools {
				if tl.Execution != nil {
					exec[tl.Name] = string(tl.Execution)
				}
			}
			if len(exec) != 1 || exec["task"] != `{"taskSupport":"optional"}` {
				t.Fatalf("execution members in tools/list: %v, want only task's optional", exec)
			}
			tk := c.create("task", map[string]any{})
			if done := c.waitStatus(tk.TaskID, "completed", "failed", "cancelled"); done.Status != "completed" || !strings.Contains(string(done.Result), "task done") {
				t.Fatalf("task: %+v %s", done, done.Result)
			}
		})
	}
}

// TestTasksSDKBadEntry: a plugin whose SDK task declaration names no tool
// (sdk/sdktest/testdata/c-badtask) is refused at load, with the SDK's
// message.
func TestTasksSDKBadEntry(t *testing.T) {
	_, err := buildServer(t, `
[server]
name = "test"
kv_dir = ":memory:"
[[plugins]]
name = "bad"
path = "../../../sdk/sdktest/testdata/c-badtask/plugin.wasm"
`, "testdata", Options{Version: "test"})
	if err == nil {
		t.Fatal("loaded")
	}
	if !strings.Contains(err.Error(), "task_tools: each entry needs the name of a tool") {
		t.Errorf("load error %q does not name the bad task_tools entry", err)
	}
}

// TestTasksEndWithSession: a 2025-11-25 task belongs to its session; when
// the client DELETEs the session, the task is cancelled and its guest
// interrupted, so the spin plugin's only instance serves again long before
// task_timeout (30 s) would have freed it.
func TestTasksEndWithSession(t *testing.T) {
	url := serveHTTP(t, newTestServer(t, tasksConfig(t, "")))
	c := &legacyClient{t: t, urls: []string{url}}
	init := c.post(0, rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	c.sid = init.header.Get("Mcp-Session-Id")
	if c.sid == "" {
		t.Fatalf("initialize: %s", init.raw)
	}
	c.post(0, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	createdTask(t, c.post(0, rpc(2, "tools/call", map[string]any{"name": "spin", "arguments": map[string]any{}, "task": map[string]any{}})).response)
	modern := taskClient{httpClient: &httpClient{t: t, url: url + "/mcp"}}
	req, _ := http.NewRequest(http.MethodDelete, url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: HTTP %d", resp.StatusCode)
	}
	modern.waitAlive(15*time.Second, "the session ended but its task still holds the instance")
}
