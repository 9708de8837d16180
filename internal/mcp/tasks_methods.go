package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// The requests that reach tasks through taskHook (tasks.go): the
// tools/call that becomes a task, and the tasks/* methods of both eras.

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

// serve implements taskHook: tasks/* for both eras.
func (te *taskEngine) serve(cl *call) ([]byte, error) {
	s := te.s
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
