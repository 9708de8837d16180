package mcp

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// Tasks: a tools/call run in the background, its state kept in a
// tasks.Store (Options.TaskStore) and polled by the client. Both designs
// are served:
//
//   - 2026-07-28, the extension io.modelcontextprotocol/tasks (SEP-2663):
//     a request whose _meta client capabilities declare the extension, for
//     a tool whose execution.taskSupport is "optional" or "required", is
//     answered with a CreateTaskResult (resultType "task"). The server
//     decides: the call starts at once; the answer waits until the
//     provider calls Request.StartTask, the first round ends, or
//     Options.TaskStartWait passes. A first round that asks for input
//     (input_required) is answered as it is, with no task (the MRTR
//     exchange before the task); a later one makes the task input_required
//     until tasks/update brings every answer. tasks/get, tasks/update and
//     tasks/cancel need the extension (-32021); a tool that requires a
//     task is refused to a client without it (-32021).
//   - 2025-11-25 sessions: tools/call with params.task returns {task};
//     tasks/get, tasks/result (waits for the end), tasks/list and
//     tasks/cancel; notifications/tasks/status on the session. Input the
//     provider asks for (Request.ClientCall) goes to the session's stream
//     with the related-task _meta, the task input_required meanwhile.
//
// A task is bound to a principal (taskPrincipal): another caller gets
// -32602 as for an unknown id. The provider call runs with no run slot of
// the call limiter (the live-task caps bound it), under a context that
// ends with Options.TaskTimeout, tasks/cancel, the server's Close, or the
// end of the legacy session that created it.
//
// The engine reaches tasks through taskHook alone (Server.tasks), and a
// call through the task it runs for (call.task: start, taskProgress,
// taskInput); the rest lives in this file set: the taskEngine here, a
// task's background run in tasks_run.go, the tasks/* methods and the
// tools/call that becomes a task in tasks_methods.go, the wire shapes in
// tasks_wire.go.

// taskHook is all the engine sees of tasks.
type taskHook interface {
	// serve answers a tasks/* request (tasks/get, tasks/update,
	// tasks/cancel; in 2025-11-25 sessions tasks/list and tasks/result).
	serve(cl *call) ([]byte, error)
	// toolsCall runs the tools/call cl as a task when it is one (done
	// true: res or err is its answer); done false: cl runs as a normal
	// call.
	toolsCall(cl *call) (res []byte, err error, done bool)
	// detailed returns the DetailedTask object of task id of principal,
	// for the listen streams that asked for it; ok false when it is gone.
	detailed(principal, id string) (obj []byte, status tasks.Status, ok bool)
	// close stops listening for changes (the Server closes).
	close()
}

var _ taskHook = (*taskEngine)(nil)

const (
	metaRelatedTask = "io.modelcontextprotocol/related-task"

	methodTasksGet    = "tasks/get"
	methodTasksUpdate = "tasks/update"
	methodTasksCancel = "tasks/cancel"
	methodTasksList   = "tasks/list"
	methodTasksResult = "tasks/result"
	notifTasks        = "notifications/tasks"
	notifTaskStatus   = "notifications/tasks/status"

	taskOptional = "optional"
	taskRequired = "required"

	// maxTaskRounds bounds the input rounds of one 2026-07-28 task.
	maxTaskRounds = 32
)

func taskNotFound() *jsonrpc.Error {
	return invalidParams("Failed to retrieve task: task not found")
}

// taskPrincipal names whom the tasks of cl are bound to: the legacy
// session (itself bound to its authenticated principal), else the
// authenticated caller, else every anonymous stateless caller together
// (their task ids, 128 random bits, are the only key).
func taskPrincipal(cl *call) string {
	switch {
	case !cl.req.Stateless:
		return "s " + cl.req.SessionID
	case cl.req.Principal != "":
		return "p " + cl.req.Principal
	}
	return "a"
}

// taskEngine runs and tracks the tasks of one Server.
type taskEngine struct {
	s     *Server
	store tasks.Store
	note  tasks.Notifier
	unsub func()
	sweep sync.Once

	mu       sync.Mutex
	runs     map[string]*taskRun
	watchers map[string]map[chan struct{}]struct{}
}

func newTaskEngine(s *Server) *taskEngine {
	te := &taskEngine{s: s, store: s.opts.TaskStore, note: s.opts.TaskNotifier,
		runs: map[string]*taskRun{}, watchers: map[string]map[chan struct{}]struct{}{}}
	te.unsub = te.note.Subscribe(te.changed)
	return te
}

func (te *taskEngine) close() { te.unsub() }

// sweeper drops expired tasks until the server closes.
func (te *taskEngine) sweeper() {
	every := min(te.s.opts.TaskTTL/4, time.Minute)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-te.s.ctx.Done():
			return
		case now := <-t.C:
			if _, err := te.store.Expire(te.s.ctx, now); err != nil && te.s.ctx.Err() == nil {
				te.s.log.Warn("tasks: expiring tasks failed", "error", err)
			}
		}
	}
}

// changed handles a published change: it wakes whoever waits for the
// task, tells the listen streams that asked for it, stops a local run
// that was cancelled, and tells the legacy session of a local run.
func (te *taskEngine) changed(c tasks.Change) {
	te.mu.Lock()
	for ch := range te.watchers[c.ID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	run := te.runs[c.ID]
	te.mu.Unlock()
	te.s.notifyTaskListeners(c)
	if run == nil {
		// A task of a shared legacy session run by another server: this
		// server may hold the session's GET stream.
		if sc := te.s.sharedConnOf(c.Principal); sc != nil {
			te.notifyStatus(sc, c)
		}
		return
	}
	if run.principal != c.Principal {
		return
	}
	if c.Status == tasks.Cancelled {
		run.cancel()
	}
	if run.conn != nil {
		te.notifyStatus(run.conn, c)
	}
}

// notifyStatus sends notifications/tasks/status for c on legacy session
// sc.
func (te *taskEngine) notifyStatus(sc *conn, c tasks.Change) {
	if t, err := te.store.Get(te.s.ctx, c.Principal, c.ID); err == nil {
		msg := jsonrpc.AppendNotification(nil, notifTaskStatus, appendTaskObject(nil, t, false))
		sc.notify(notifTaskStatus+" "+c.ID, msg)
	}
}

// watch returns a channel that receives (coalesced) when task id changes.
func (te *taskEngine) watch(id string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	te.mu.Lock()
	m := te.watchers[id]
	if m == nil {
		m = map[chan struct{}]struct{}{}
		te.watchers[id] = m
	}
	m[ch] = struct{}{}
	te.mu.Unlock()
	return ch, func() {
		te.mu.Lock()
		delete(te.watchers[id], ch)
		if len(te.watchers[id]) == 0 {
			delete(te.watchers, id)
		}
		te.mu.Unlock()
	}
}

// update is Store.Update followed by the change notification.
func (te *taskEngine) update(ctx context.Context, principal, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	t, err := te.store.Update(ctx, principal, id, fn)
	if err != nil {
		return nil, err
	}
	te.publish(t)
	return t, nil
}

func (te *taskEngine) publish(t *tasks.Task) {
	c := tasks.Change{ID: t.ID, Principal: t.Principal, Status: t.Status, UpdatedAt: t.UpdatedAt}
	if err := te.note.Publish(te.s.ctx, c); err != nil {
		te.s.log.Warn("tasks: publishing a change failed", "task", t.ID, "error", err)
	}
}

// errTaskStore answers a request whose task store could not be reached
// (a shared store during an outage): the same clear error as the session
// store's and the kv store's, never a bare internal error.
var errTaskStore = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "task store unavailable; retry later",
	Data: json.RawMessage(`{"busy":true,"retryAfterMs":` + strconv.Itoa(retryAfterSeconds*1000) + `}`)}

// storeFailed logs a task store error and returns errTaskStore.
func (te *taskEngine) storeFailed(op string, err error) error {
	te.s.log.Warn("tasks: "+op+" failed", "error", err)
	return errTaskStore
}

// detailed implements taskHook.
func (te *taskEngine) detailed(principal, id string) ([]byte, tasks.Status, bool) {
	t, err := te.store.Get(te.s.ctx, principal, id)
	if err != nil {
		return nil, "", false
	}
	return appendDetailedTask(append(make([]byte, 0, 256), '{'), t), t.Status, true
}

// The call side of the hook: a background call reaches the task it runs
// for through call.task (start, and these two).

// taskProgress turns the progress of a 2026-07-28 task into its
// statusMessage.
func (cl *call) taskProgress(progress float64, total *float64, message string) {
	run := cl.task
	msg := strconv.FormatFloat(progress, 'g', -1, 64)
	if total != nil {
		msg += "/" + strconv.FormatFloat(*total, 'g', -1, 64)
	}
	if message != "" {
		msg += ": " + message
	}
	msg = strings.TrimSpace(msg)
	_, _ = run.te.update(cl.ctx, run.principal, run.id, func(t *tasks.Task) error {
		if t.Status != tasks.Working || t.StatusMessage == msg {
			return errNoChange
		}
		t.StatusMessage = msg
		return nil
	})
}

// taskInput marks a legacy task input_required while its provider waits
// for the client, and working again after; it returns the params with the
// related-task _meta.
func (cl *call) taskInput(params json.RawMessage, waiting bool) json.RawMessage {
	run := cl.task
	st, msg := tasks.Working, ""
	if waiting {
		st, msg = tasks.InputRequired, "waiting for the client"
	}
	_, _ = run.te.update(context.Background(), run.principal, run.id, func(t *tasks.Task) error {
		if t.Status.Terminal() {
			return tasks.ErrTerminal
		}
		t.Status, t.StatusMessage = st, msg
		return nil
	})
	if !waiting {
		return nil
	}
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	return withRelatedTask(params, run.id)
}
