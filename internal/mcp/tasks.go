package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
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

// taskRun is a task whose provider call runs in this process.
type taskRun struct {
	te        *taskEngine
	id        string
	principal string
	conn      *conn // the legacy session, nil for 2026-07-28
	call      *call // the background call
	params    json.RawMessage

	started   chan struct{} // closed by Request.StartTask
	startOnce sync.Once
	first     chan firstRound // the first round's outcome, before the announce

	mu          sync.Mutex
	announced   bool // the client was given the task
	claimed     bool // the first round asked for input before the announce: no task
	startedTask bool // Request.StartTask was called
}

type firstRound struct {
	res           []byte
	inputRequired bool
}

func (run *taskRun) cancel() { run.call.cancel() }

// start records Request.StartTask: from now on the call is a task (its
// first round can no longer be answered without one).
func (run *taskRun) start() {
	run.startOnce.Do(func() {
		run.mu.Lock()
		run.startedTask = true
		run.mu.Unlock()
		close(run.started)
	})
}

// announce marks the task given to the client; false when the first
// round claimed the answer first.
func (run *taskRun) announce() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.claimed {
		return false
	}
	run.announced = true
	return true
}

func (run *taskRun) claimFirst() bool {
	run.mu.Lock()
	defer run.mu.Unlock()
	if run.announced || run.startedTask {
		return false
	}
	run.claimed = true
	return true
}

// create stores a new task for cl and starts its provider call. era is
// version20251125 or version20260728.
func (te *taskEngine) create(cl *call, era string, ttl time.Duration) (*taskRun, *tasks.Task, error) {
	s := te.s
	te.sweep.Do(func() { go te.sweeper() })
	params := append(json.RawMessage(nil), cl.req.Params...)
	rec := &tasks.Task{Principal: taskPrincipal(cl), Status: tasks.Working, TTL: ttl,
		PollInterval: s.opts.TaskPollInterval, Method: cl.req.Method, Params: params, Era: era,
		LeaseUntil: tasks.Now().Add(s.opts.TaskLease)}
	t, err := te.store.Create(cl.ctx, rec)
	switch {
	case errors.Is(err, tasks.ErrTooMany):
		return nil, nil, &jsonrpc.Error{Code: errBusyWait.Code, Message: "Too many tasks: " + err.Error() + "; wait for one to end or cancel one",
			Data: json.RawMessage(`{"busy":true,"retryAfterMs":` + strconv.Itoa(retryAfterSeconds*1000) + `}`)}
	case err != nil:
		return nil, nil, te.storeFailed("creating a task", err)
	}
	run := &taskRun{te: te, id: t.ID, principal: t.Principal, params: params,
		started: make(chan struct{}), first: make(chan firstRound, 1)}
	var out sink = discardSink{}
	if era != version20260728 {
		run.conn = cl.conn
		out = cl.conn.out
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.TaskTimeout+time.Second)
	bg := &call{srv: s, conn: run.conn, out: out, minLog: cl.minLog, ctx: ctx, cancel: cancel, task: run, remote: cl.remote}
	bg.req = Request{Method: cl.req.Method, Params: params, Client: cl.req.Client, SessionID: cl.req.SessionID, TaskID: t.ID, peer: bg}
	// The task outlives the request: its raw members must not alias the
	// request's buffers.
	bg.req.ClientInfo = keptClientInfo(cl.req.ClientInfo) // what a task keeps of its client, bounded (clientcaps.go)
	bg.req.ClientCapabilities = keptCapabilities(cl.req.ClientCapabilities)
	bg.req.ProgressToken = append(json.RawMessage(nil), cl.req.ProgressToken...)
	_ = parseParams(&bg.req) // the copy of params cl's parse accepted
	if len(bg.req.ProgressToken) == 0 {
		bg.req.ProgressToken = nil
		if cl.req.Stateless {
			// Progress of a 2026-07-28 task becomes its statusMessage.
			bg.req.ProgressToken = jsonscan.AppendString(nil, t.ID)
		}
	}
	run.call = bg
	te.mu.Lock()
	te.runs[t.ID] = run
	te.mu.Unlock()
	if run.conn != nil {
		stop := context.AfterFunc(run.conn.ctx, func() {
			_, _ = te.update(context.Background(), run.principal, run.id, func(t *tasks.Task) error {
				if t.Status.Terminal() {
					return tasks.ErrTerminal
				}
				t.Status, t.StatusMessage = tasks.Cancelled, "the session ended"
				return nil
			})
			run.cancel()
		})
		context.AfterFunc(ctx, func() { stop() })
	}
	go run.loop()
	go run.renew()
	return run, t, nil
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

// renew extends the task's lease (tasks.Task.LeaseUntil) every third of
// Options.TaskLease while its call runs, so that other processes sharing
// the store see it alive; a failed renewal is retried on the next tick.
func (run *taskRun) renew() {
	te, lease := run.te, run.te.s.opts.TaskLease
	t := time.NewTicker(lease / 3)
	defer t.Stop()
	for {
		select {
		case <-run.call.ctx.Done():
			return
		case <-t.C:
		}
		_, err := te.store.Update(run.call.ctx, run.principal, run.id, func(t *tasks.Task) error {
			if t.Status.Terminal() {
				return tasks.ErrTerminal
			}
			t.LeaseUntil = tasks.Now().Add(lease)
			return nil
		})
		if errors.Is(err, tasks.ErrTerminal) || errors.Is(err, tasks.ErrNotFound) {
			return
		}
	}
}

// discardSink drops what a 2026-07-28 task sends (it has no stream).
type discardSink struct{}

func (discardSink) send([]byte) error { return nil }

// callProvider runs one round of the task's provider call.
func (run *taskRun) callProvider() (res []byte, err error) {
	s := run.te.s
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic while running a task", "task", run.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, errInternal
		}
	}()
	res, err = s.p.CallTool(run.call.ctx, &run.call.req)
	if err != nil {
		return nil, err
	}
	f, ok := resultFacts{}, jsonscan.Valid(res)
	if ok {
		f, ok = scanResult(res)
	}
	if !ok {
		s.log.Error("provider returned a task result that is not a JSON object", "task", run.id)
		return nil, errInternal
	}
	return s.conform(run.call, compact(res), &f)
}

// loop runs the task's provider call, round after round, and stores how
// it ended.
func (run *taskRun) loop() {
	te := run.te
	bg := run.call
	defer func() {
		bg.cancel()
		te.mu.Lock()
		delete(te.runs, run.id)
		te.mu.Unlock()
	}()
	for round := 0; ; round++ {
		res, err := run.callProvider()
		if err != nil {
			e := te.s.wireError(bg, err)
			if bg.ctx.Err() != nil && te.s.ctx.Err() != nil {
				e = errShuttingDown
			}
			raw, _ := json.Marshal(e)
			run.finish(tasks.Failed, e.Message, nil, raw)
			return
		}
		f, _ := scanResult(res)
		if f.resultType == "input_required" {
			if !bg.req.Stateless {
				te.s.log.Error("provider returned input_required to a legacy task", "task", run.id)
				raw, _ := json.Marshal(errInternal)
				run.finish(tasks.Failed, errInternal.Message, nil, raw)
				return
			}
			if round == 0 && run.claimFirst() {
				run.first <- firstRound{res: res, inputRequired: true}
				_ = te.store.Delete(context.Background(), run.principal, run.id)
				return
			}
			if round+1 >= maxTaskRounds {
				e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the tool still asks for input after " + strconv.Itoa(maxTaskRounds) + " rounds"}
				raw, _ := json.Marshal(e)
				run.finish(tasks.Failed, e.Message, nil, raw)
				return
			}
			if !run.awaitInput(res, round) {
				return
			}
			continue
		}
		status := tasks.Completed
		if !bg.req.Stateless {
			if v, ok := jsonscan.Member(res, "isError"); ok && string(v) == "true" {
				status = tasks.Failed // 2025-11-25: a tool error fails the task
			}
		}
		run.finish(status, "", res, nil)
		return
	}
}

// finish stores the end of the task (unless it ended already: a cancel
// wins) and tells the waiting first-round answer.
func (run *taskRun) finish(status tasks.Status, msg string, result, rpcErr json.RawMessage) {
	end := func(status tasks.Status, msg string, result, rpcErr json.RawMessage, keepParams bool) error {
		_, err := run.te.update(context.Background(), run.principal, run.id, func(t *tasks.Task) error {
			if t.Status.Terminal() {
				return tasks.ErrTerminal
			}
			t.Status, t.StatusMessage = status, msg
			t.Result, t.Error = result, rpcErr
			t.InputRequests, t.InputResponses, t.State = nil, nil, nil
			if !keepParams {
				t.Params = nil
			}
			return nil
		})
		return err
	}
	err := end(status, msg, result, rpcErr, true)
	if errors.Is(err, tasks.ErrOverBudget) {
		// The outcome does not fit the task byte budget: the task fails
		// with an error that says so, in place of its arguments (a few
		// hundred bytes, fewer than those already counted).
		e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task's result (" + strconv.Itoa(len(result)+len(rpcErr)) +
			" bytes) was refused: " + err.Error() + "; see [limits] max_task_bytes_per_principal and max_task_bytes"}
		raw, _ := json.Marshal(e)
		err = end(tasks.Failed, e.Message, nil, raw, false)
	}
	if err != nil && !errors.Is(err, tasks.ErrTerminal) && !errors.Is(err, tasks.ErrNotFound) {
		run.te.s.log.Warn("tasks: storing the end of a task failed", "task", run.id, "error", err)
	}
	select {
	case run.first <- firstRound{}:
	default:
	}
}

// taskState is what a 2026-07-28 task keeps between input rounds.
type taskState struct {
	RequestState *string           `json:"requestState,omitempty"`
	Keys         map[string]string `json:"keys,omitempty"` // wire key -> the provider's key
}

// awaitInput parks the task in input_required with the input requests of
// res, waits until tasks/update answered all of them, and prepares the
// next round's params. It returns false when the task ended meanwhile.
func (run *taskRun) awaitInput(res []byte, round int) bool {
	te, bg := run.te, run.call
	var ir struct {
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  *string                    `json:"requestState"`
	}
	if err := json.Unmarshal(res, &ir); err != nil {
		raw, _ := json.Marshal(errInternal)
		run.finish(tasks.Failed, "invalid input_required result", nil, raw)
		return false
	}
	// Keys must be unique over the task's life: the keys of later rounds
	// carry the round number.
	st := taskState{RequestState: ir.RequestState, Keys: map[string]string{}}
	reqs := make(map[string]json.RawMessage, len(ir.InputRequests))
	for k, v := range ir.InputRequests {
		wk := k
		if round > 0 {
			wk = k + "#" + strconv.Itoa(round+1)
		}
		st.Keys[wk] = k
		reqs[wk] = v
	}
	reqsRaw, _ := json.Marshal(reqs)
	stRaw, _ := json.Marshal(st)
	ch, stop := te.watch(run.id)
	defer stop()
	if err := run.setStatus(bg.ctx, tasks.InputRequired, "waiting for input", reqsRaw, stRaw); err != nil {
		if errors.Is(err, tasks.ErrOverBudget) {
			e := &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task's input requests were refused: " + err.Error()}
			raw, _ := json.Marshal(e)
			run.finish(tasks.Failed, e.Message, nil, raw)
		}
		return false
	}
	for {
		t, err := te.store.Get(bg.ctx, run.principal, run.id)
		if err != nil || t.Status.Terminal() {
			return false
		}
		if t.Status == tasks.InputRequired && isEmptyObject(t.InputRequests) {
			var answers map[string]json.RawMessage
			_ = json.Unmarshal(t.InputResponses, &answers)
			responses := make(map[string]json.RawMessage, len(answers))
			for wk, v := range answers {
				if k, ok := st.Keys[wk]; ok {
					responses[k] = v
				}
			}
			if run.setStatus(bg.ctx, tasks.Working, "", nil, nil) != nil {
				return false
			}
			bg.req.Params = nextRoundParams(run.params, responses, st.RequestState)
			_ = parseParams(&bg.req) // params the first round's parse accepted, and two members of ours
			return true
		}
		select {
		case <-ch:
		case <-bg.ctx.Done():
			return false
		}
	}
}

// setStatus moves the task of run, unless it has ended, to status with
// msg, the input requests reqs and the state st, and no input responses.
func (run *taskRun) setStatus(ctx context.Context, status tasks.Status, msg string, reqs, st json.RawMessage) error {
	_, err := run.te.update(ctx, run.principal, run.id, func(t *tasks.Task) error {
		if t.Status.Terminal() {
			return tasks.ErrTerminal
		}
		t.Status, t.StatusMessage = status, msg
		t.InputRequests, t.InputResponses, t.State = reqs, nil, st
		return nil
	})
	return err
}

func isEmptyObject(raw json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(raw, &m) != nil || len(m) == 0
}

// nextRoundParams is params with inputResponses and requestState set for
// the next round (requestState removed when there is none).
func nextRoundParams(params json.RawMessage, responses map[string]json.RawMessage, state *string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(params, &m) != nil || m == nil {
		m = map[string]json.RawMessage{}
	}
	m["inputResponses"], _ = json.Marshal(responses)
	delete(m, "requestState")
	if state != nil {
		m["requestState"], _ = json.Marshal(*state)
	}
	out, _ := json.Marshal(m)
	return out
}

// toolsCall decides whether the tools/call cl runs as a task; done is
// false when it runs as a normal call.
func (te *taskEngine) toolsCall(cl *call) (res []byte, err error, done bool) {
	r := &cl.req
	if !r.Stateless && r.ProtocolVersion != version20251125 {
		return nil, nil, false
	}
	name := r.Parsed.Name
	support := te.s.toolTaskSupport(cl, name)
	capable := support == taskOptional || support == taskRequired
	if r.Stateless {
		ext := hasTasksExtension(r.ClientCapabilities)
		switch {
		case support == taskRequired && !ext:
			return nil, errNeedTasksExtension, true
		case capable && ext:
			res, err := te.create2026(cl)
			if err == errTaskStore && support == taskOptional {
				return nil, nil, false // no task store: an optional task answers directly
			}
			return res, err, true
		}
		return nil, nil, false
	}
	tp, has := jsonscan.Member(r.Params, "task")
	has = has && jsonscan.Kind(tp) == 'o'
	switch {
	case has && !capable:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tool " + strconv.Quote(name) + " does not support task-augmented calls"}, true
	case !has && support == taskRequired:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "tool " + strconv.Quote(name) + " must be called as a task (params.task)"}, true
	case !has:
		return nil, nil, false
	}
	ttl := te.s.opts.TaskTTL
	if v, ok := jsonscan.Member(tp, "ttl"); ok && jsonscan.Kind(v) == 'n' {
		if ms, err := strconv.ParseFloat(string(v), 64); err == nil && ms > 0 {
			ttl = min(ttl, max(time.Second, time.Duration(ms)*time.Millisecond))
		}
	}
	run, t, err := te.create(cl, version20251125, ttl)
	if err != nil {
		return nil, err, true
	}
	run.announce()
	b := append([]byte(`{"task":`), appendTaskObject(nil, t, false)...)
	return append(b, '}'), nil, true
}

// create2026 runs a task-capable tools/call of a client with the
// extension: the answer is the first round's input_required result (the
// MRTR exchange before the task) or a CreateTaskResult.
func (te *taskEngine) create2026(cl *call) ([]byte, error) {
	run, t, err := te.create(cl, version20260728, te.s.opts.TaskTTL)
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(te.s.opts.TaskStartWait)
	defer timer.Stop()
	select {
	case fr := <-run.first:
		if fr.inputRequired {
			return te.s.checkResult(cl, fr.res)
		}
	case <-run.started:
	case <-timer.C:
	case <-cl.ctx.Done():
		run.cancel()
		_ = te.store.Delete(context.Background(), run.principal, run.id)
		return nil, cl.ctx.Err()
	}
	if !run.announce() {
		fr := <-run.first
		return te.s.checkResult(cl, fr.res)
	}
	if now, err := te.store.Get(cl.ctx, run.principal, run.id); err == nil {
		t = now
	}
	b := append([]byte(`{"resultType":"task",`), appendTaskFields(nil, t, true)...)
	return append(b, '}'), nil
}

// Wire shapes.

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// appendTaskFields appends the members of the Task object (without
// braces): 2026-07-28 names (ttlMs, pollIntervalMs) when modern, else
// those of 2025-11-25 (ttl, pollInterval).
func appendTaskFields(b []byte, t *tasks.Task, modern bool) []byte {
	b = append(b, `"taskId":`...)
	b = jsonscan.AppendString(b, t.ID)
	b = append(b, `,"status":`...)
	b = jsonscan.AppendString(b, string(t.Status))
	if t.StatusMessage != "" {
		b = append(b, `,"statusMessage":`...)
		b = jsonscan.AppendString(b, t.StatusMessage)
	}
	b = append(b, `,"createdAt":`...)
	b = appendTime(b, t.CreatedAt)
	b = append(b, `,"lastUpdatedAt":`...)
	b = appendTime(b, t.UpdatedAt)
	ttl, poll := `,"ttl":`, `,"pollInterval":`
	if modern {
		ttl, poll = `,"ttlMs":`, `,"pollIntervalMs":`
	}
	b = append(b, ttl...)
	b = strconv.AppendInt(b, t.TTL.Milliseconds(), 10)
	if t.PollInterval > 0 {
		b = append(b, poll...)
		b = strconv.AppendInt(b, t.PollInterval.Milliseconds(), 10)
	}
	return b
}

// appendTaskObject appends the Task object {...}.
func appendTaskObject(b []byte, t *tasks.Task, modern bool) []byte {
	b = append(b, '{')
	b = appendTaskFields(b, t, modern)
	return append(b, '}')
}

// appendDetailedTask appends the 2026-07-28 DetailedTask members of t
// after its Task members: inputRequests, result or error by status.
func appendDetailedTask(b []byte, t *tasks.Task) []byte {
	b = appendTaskFields(b, t, true)
	switch {
	case t.Status == tasks.InputRequired && len(t.InputRequests) > 0:
		b = append(b, `,"inputRequests":`...)
		b = append(b, t.InputRequests...)
	case t.Status == tasks.Completed && len(t.Result) > 0:
		b = append(b, `,"result":`...)
		b = append(b, t.Result...)
	case t.Status == tasks.Failed && len(t.Error) > 0:
		b = append(b, `,"error":`...)
		b = append(b, t.Error...)
	}
	return b
}

// taskMethod serves tasks/* for both eras.
func (s *Server) taskMethod(cl *call) ([]byte, error) {
	te := s.tasks
	r := &cl.req
	m := r.Method
	if !s.p.Features().Tools {
		return nil, methodNotFound(m)
	}
	if r.Stateless {
		if m == methodTasksList || m == methodTasksResult {
			return nil, methodNotFound(m)
		}
		if !hasTasksExtension(r.ClientCapabilities) {
			return nil, errNeedTasksExtension
		}
	} else if r.ProtocolVersion != version20251125 {
		return nil, methodNotFound(m)
	}
	if jsonscan.Kind(r.Params) != 'o' {
		return nil, invalidParams(m + ": params must be an object")
	}
	principal := taskPrincipal(cl)
	if m == methodTasksList {
		return te.list(cl, principal)
	}
	id, ok := stringParam(r.Params, "taskId")
	if !ok || id == "" {
		return nil, invalidParams(m + ": taskId must be a non-empty string")
	}
	notFound := func(err error) error {
		if errors.Is(err, tasks.ErrNotFound) {
			return taskNotFound()
		}
		return te.storeFailed(m, err)
	}
	switch m {
	case methodTasksGet:
		t, err := te.store.Get(cl.ctx, principal, id)
		if err != nil {
			return nil, notFound(err)
		}
		if !r.Stateless {
			return appendTaskObject(nil, t, false), nil
		}
		b := append([]byte(`{"resultType":"complete",`), appendDetailedTask(nil, t)...)
		return append(b, '}'), nil
	case methodTasksCancel:
		if !r.Stateless {
			if t, err := te.store.Get(cl.ctx, principal, id); err != nil {
				return nil, notFound(err)
			} else if t.Status.Terminal() {
				return nil, invalidParams("tasks/cancel: the task already ended (" + string(t.Status) + ")")
			}
		}
		t, err := te.store.Cancel(cl.ctx, principal, id)
		if err != nil {
			return nil, notFound(err)
		}
		te.publish(t)
		if !r.Stateless {
			return appendTaskObject(nil, t, false), nil
		}
		return []byte(`{"resultType":"complete"}`), nil
	case methodTasksUpdate:
		if !r.Stateless {
			return nil, methodNotFound(m)
		}
		return te.updateInput(cl, principal, id)
	case methodTasksResult:
		return te.result(cl, principal, id)
	}
	return nil, methodNotFound(m)
}

var errNoChange = errors.New("mcp: nothing to change")

// updateInput serves 2026-07-28 tasks/update: answers to keys the task
// waits for are kept, any other key is ignored.
func (te *taskEngine) updateInput(cl *call, principal, id string) ([]byte, error) {
	raw, ok := jsonscan.Member(cl.req.Params, "inputResponses")
	if !ok || jsonscan.Kind(raw) != 'o' {
		return nil, invalidParams("tasks/update: inputResponses must be an object")
	}
	var given map[string]json.RawMessage
	if err := json.Unmarshal(raw, &given); err != nil {
		return nil, invalidParams("tasks/update: invalid inputResponses: " + err.Error())
	}
	_, err := te.update(cl.ctx, principal, id, func(t *tasks.Task) error {
		if t.Status != tasks.InputRequired {
			return errNoChange
		}
		var reqs, resp map[string]json.RawMessage
		_ = json.Unmarshal(t.InputRequests, &reqs)
		_ = json.Unmarshal(t.InputResponses, &resp)
		if resp == nil {
			resp = map[string]json.RawMessage{}
		}
		n := 0
		for k, v := range given {
			if _, ok := reqs[k]; ok {
				delete(reqs, k)
				resp[k] = v
				n++
			}
		}
		if n == 0 {
			return errNoChange
		}
		if reqs == nil {
			reqs = map[string]json.RawMessage{}
		}
		t.InputRequests, _ = json.Marshal(reqs)
		t.InputResponses, _ = json.Marshal(resp)
		return nil
	})
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return nil, taskNotFound()
	case errors.Is(err, tasks.ErrOverBudget):
		return nil, invalidParams("tasks/update: the answers were refused: " + err.Error())
	case err != nil && !errors.Is(err, errNoChange):
		return nil, te.storeFailed("tasks/update", err)
	}
	return []byte(`{"resultType":"complete"}`), nil
}

// list serves 2025-11-25 tasks/list.
func (te *taskEngine) list(cl *call, principal string) ([]byte, error) {
	cursor, _ := stringParam(cl.req.Params, "cursor")
	page, next, err := te.store.List(cl.ctx, principal, cursor, te.s.opts.PageSize)
	switch {
	case errors.Is(err, tasks.ErrBadCursor):
		return nil, invalidParams("tasks/list: invalid cursor")
	case err != nil:
		return nil, te.storeFailed("tasks/list", err)
	}
	b := append(make([]byte, 0, 256), `{"tasks":[`...)
	for i, t := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTaskObject(b, t, false)
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"nextCursor":`...)
		b = jsonscan.AppendString(b, next)
	}
	return append(b, '}'), nil
}

// result serves 2025-11-25 tasks/result: it waits for the task to end and
// answers what the tools/call would have, with the related-task _meta.
func (te *taskEngine) result(cl *call, principal, id string) ([]byte, error) {
	ch, stop := te.watch(id)
	defer stop()
	for {
		t, err := te.store.Get(cl.ctx, principal, id)
		if errors.Is(err, tasks.ErrNotFound) {
			return nil, taskNotFound()
		} else if err != nil {
			return nil, te.storeFailed("tasks/result", err)
		}
		if t.Status.Terminal() {
			switch {
			case len(t.Result) > 0:
				// The tools/call's result: the Observer is told whether
				// it is a tool error, as conform tells it of a tools/call.
				v, ok := jsonscan.Member(t.Result, "isError")
				cl.ri.ToolError = ok && string(v) == "true"
				return withRelatedTask(t.Result, id), nil
			case len(t.Error) > 0:
				var e jsonrpc.Error
				if json.Unmarshal(t.Error, &e) == nil && e.Code != 0 {
					return nil, &e
				}
				return nil, errInternal
			}
			return nil, invalidParams("tasks/result: the task was cancelled")
		}
		select {
		case <-ch:
		case <-cl.ctx.Done():
			return nil, cl.ctx.Err()
		}
	}
}

// withRelatedTask returns the object obj with _meta["related-task"] set.
func withRelatedTask(obj json.RawMessage, id string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil || m == nil {
		return obj
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(m["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[metaRelatedTask] = append(append([]byte(`{"taskId":`), jsonscan.AppendString(nil, id)...), '}')
	m["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(m)
	if err != nil {
		return obj
	}
	return out
}

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
