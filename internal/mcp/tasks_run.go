package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// A task's background run: the provider call of a task, round after
// round, its lease, its input rounds (2026-07-28) and how it ends, all
// stored through the taskEngine (tasks.go).

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
