package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// The fixtures of the tasks scenarios (SEP-2663, io.modelcontextprotocol/
// tasks). A tool whose TaskSupport is optional or required runs in the
// background when the client asks for a task; Context.StartTask hands the
// client its task at once. Input asked for after StartTask makes the task
// input_required (tasks/get shows it, tasks/update answers it); input
// asked for before it is answered as an input_required result, with no
// task (test_tool_with_task).

// tick is the step of the long-running tools: they stop at the next one
// after a cancel (every host call fails once the call is cancelled, and
// the host interrupts the guest).
const tick = 100 * time.Millisecond

func addTaskTools(p *wasmcp.Plugin) {
	tool := func(name, description, schema string, ts wasmcp.TaskSupport, h wasmcp.ToolHandler) {
		p.AddRawTool(wasmcp.Tool{Name: name, Description: description, InputSchema: schema, TaskSupport: ts}, h)
	}
	tool("greet", "Greets name (never a task).",
		`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`, "", greet)
	tool("slow_compute", "Works for seconds seconds, reporting progress, then answers with label.",
		`{"type":"object","properties":{"seconds":{"type":"number","minimum":0},"label":{"type":"string"}}}`, wasmcp.TaskOptional, slowCompute)
	tool("failing_job", "Fails with a tool error after about a second (must be a task).", noArgs, wasmcp.TaskRequired, failingJob)
	tool("protocol_error_job", "Fails with a JSON-RPC error (the task fails).", noArgs, wasmcp.TaskOptional, protocolErrorJob)
	tool("confirm_delete", "Asks for a confirmation, then deletes filename (pretend).",
		`{"type":"object","properties":{"filename":{"type":"string"}},"required":["filename"]}`, wasmcp.TaskOptional, confirmDelete)
	tool("multi_input", "Asks two questions at once, then answers with both.", noArgs, wasmcp.TaskOptional, multiInput)
	tool("test_tool_with_task", "Asks the user's name before it starts as a task, then greets them from the task.", noArgs, wasmcp.TaskRequired, toolWithTask)
}

func greet(_ *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Name string `json:"name"`
	}
	if err := args(raw, &in); err != nil {
		return wasmcp.ErrorResult(err.Error()), nil
	}
	return wasmcp.TextResult("Hello, " + in.Name + "!"), nil
}

// work runs for d in ticks, reporting progress; it stops early with the
// error of a failed host call (the call was cancelled).
func work(c *wasmcp.Context, d time.Duration) error {
	n := int(d / tick)
	for i := 0; i < n; i++ {
		time.Sleep(tick)
		if err := c.Progress(float64(i+1), float64(n), "working"); err != nil {
			return err
		}
	}
	return nil
}

func slowCompute(c *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Seconds float64 `json:"seconds"`
		Label   string  `json:"label"`
	}
	if err := args(raw, &in); err != nil {
		return wasmcp.ErrorResult(err.Error()), nil
	}
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	if err := work(c, time.Duration(in.Seconds*float64(time.Second))); err != nil {
		return nil, err
	}
	return wasmcp.TextResult(fmt.Sprintf("Computed %q in %g s.", in.Label, in.Seconds)), nil
}

func failingJob(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	if err := work(c, time.Second); err != nil {
		return nil, err
	}
	return wasmcp.ErrorResult("failing_job failed, as it always does"), nil
}

func protocolErrorJob(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	return nil, wasmcp.NewRPCError(wasmcp.CodeInternalError, "protocol_error_job hit an internal failure", nil)
}

// confirmed reads the boolean confirm of the elicitation answer key.
func confirmed(c *wasmcp.Context, key string) (bool, error) {
	answer, err := c.ElicitResponse(key)
	if err != nil || !answer.Accepted() {
		return false, err
	}
	var form struct {
		Confirm bool `json:"confirm"`
	}
	if err := answer.Decode(&form); err != nil {
		return false, err
	}
	return form.Confirm, nil
}

var confirmForm = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}},"required":["confirm"]}`)

func confirmDelete(c *wasmcp.Context, raw json.RawMessage) (*wasmcp.Result, error) {
	var in struct {
		Filename string `json:"filename"`
	}
	if err := args(raw, &in); err != nil {
		return wasmcp.ErrorResult(err.Error()), nil
	}
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	ok, err := answered(c, confirmed, "", "confirm", wasmcp.NewElicitRequest("Delete "+in.Filename+"?", confirmForm))
	if err != nil {
		return nil, err
	}
	if !ok {
		return wasmcp.TextResult("Kept " + in.Filename + "."), nil
	}
	return wasmcp.TextResult("Deleted " + in.Filename + "."), nil
}

func multiInput(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	first, errFirst := name(c, "first")
	second, errSecond := name(c, "second")
	missing := map[string]wasmcp.InputRequest{}
	if errors.Is(errFirst, wasmcp.ErrNoInputResponse) {
		missing["first"] = wasmcp.NewElicitRequest("First: what is your name?", formOf("name"))
	}
	if errors.Is(errSecond, wasmcp.ErrNoInputResponse) {
		missing["second"] = wasmcp.NewElicitRequest("Second: what is your friend's name?", formOf("name"))
	}
	if len(missing) > 0 {
		return nil, ask("", missing)
	}
	if err := errors.Join(errFirst, errSecond); err != nil {
		return nil, err
	}
	return wasmcp.TextResult(fmt.Sprintf("first=%s second=%s", first, second)), nil
}

// toolWithTask gathers the name before it starts as a task (the client
// gets an input_required result, not a task), then starts and answers
// from the task.
func toolWithTask(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	n, err := answered(c, name, "", "user_name", askName)
	if err != nil {
		return nil, err
	}
	if err := c.StartTask(); err != nil {
		return nil, err
	}
	if err := work(c, 3*tick); err != nil {
		return nil, err
	}
	return wasmcp.TextResult("Hello, " + n + "! (from a task)"), nil
}
