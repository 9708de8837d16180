package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

// The input_required tools (SEP-2322, ABI §6). Each answers an
// input_required result until the client has answered what it needs; the
// host seals requestState on the way out and refuses an altered one, so a
// state the plugin reads is one it issued for this very tool.

// formOf is an elicitation form of one required string field.
func formOf(field string) json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"` + field + `":{"type":"string"}},"required":["` + field + `"]}`)
}

var (
	askName    = wasmcp.NewElicitRequest("What is your name?", formOf("name"))
	askCapital = wasmcp.NewTextSamplingRequest("What is the capital of France?", 100)
	askRoots   = wasmcp.NewRootsRequest()
	askConfirm = wasmcp.NewElicitRequest("Please confirm", json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`))
)

func addInputRequiredTools(p *wasmcp.Plugin) {
	tool := func(name, description string, h wasmcp.ToolHandler) {
		p.AddRawTool(wasmcp.Tool{Name: "test_input_required_result_" + name, Description: description, InputSchema: noArgs}, h)
	}
	tool("elicitation", "Asks the user's name (user_name), then greets them.", irElicitation)
	tool("sampling", "Asks the client's model a question (capital_question), then reports the answer.", irSampling)
	tool("list_roots", "Asks for the client's roots (client_roots), then lists them.", irRoots)
	tool("request_state", "Asks for a confirmation and keeps state between the rounds.", irRequestState)
	tool("multiple_inputs", "Asks for a name, a model answer and the roots at once.", irMultiple)
	tool("multi_round", "Asks for a name, then a colour, in two rounds with a new state each.", irMultiRound)
	tool("tampered_state", "Asks for a confirmation with integrity-protected state.", irRequestState)
	tool("capabilities", "Asks only for what the client declared it can answer.", irCapabilities)
}

// name decodes the name a user gave under key.
func name(c *wasmcp.Context, key string) (string, error) {
	answer, err := c.ElicitResponse(key)
	if err != nil {
		return "", err
	}
	if !answer.Accepted() {
		return "(" + answer.Action + ")", nil
	}
	var form struct {
		Name string `json:"name"`
	}
	if err := answer.Decode(&form); err != nil {
		return "", err
	}
	return form.Name, nil
}

// ask is the error that asks the client for requests, keyed.
func ask(state string, requests map[string]wasmcp.InputRequest) error {
	return &wasmcp.InputRequired{Requests: requests, State: state}
}

// answered is the client's answer to the input request key, read with get
// (name, or a method of the Context such as ElicitResponse). Before the
// client has answered, the error is the one asking it req under key, with
// the request state state.
func answered[T any](c *wasmcp.Context, get func(*wasmcp.Context, string) (T, error), state, key string, req wasmcp.InputRequest) (T, error) {
	v, err := get(c, key)
	if errors.Is(err, wasmcp.ErrNoInputResponse) {
		return v, ask(state, map[string]wasmcp.InputRequest{key: req})
	}
	return v, err
}

// irElicitation completes from inputResponses alone (no requestState):
// a missing or unexpected key is asked again, a malformed answer is a
// -32602 error, extra keys are ignored.
func irElicitation(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	n, err := answered(c, name, "", "user_name", askName)
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult("Hello, " + n + "!"), nil
}

func irSampling(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	answer, err := answered(c, (*wasmcp.Context).SamplingResponse, "", "capital_question", askCapital)
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult("The model answered: " + answer.Text()), nil
}

func rootsText(roots []wasmcp.Root) string {
	var parts []string
	for _, r := range roots {
		parts = append(parts, fmt.Sprintf("%s (%s)", r.URI, r.Name))
	}
	return strings.Join(parts, ", ")
}

func irRoots(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	roots, err := answered(c, (*wasmcp.Context).RootsResponse, "", "client_roots", askRoots)
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult(fmt.Sprintf("The client has %d roots: %s", len(roots), rootsText(roots))), nil
}

// irRequestState completes only with the confirmation and the state it
// issued; test_input_required_result_tampered_state is the same tool,
// whose altered state the host refuses before the plugin runs.
func irRequestState(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	const state = "awaiting-confirmation"
	answer, err := c.ElicitResponse("confirm")
	if errors.Is(err, wasmcp.ErrNoInputResponse) || err == nil && c.RequestState != state {
		return nil, ask(state, map[string]wasmcp.InputRequest{"confirm": askConfirm})
	}
	if err != nil {
		return nil, err
	}
	return wasmcp.TextResult("state-ok: action=" + answer.Action), nil
}

func irMultiple(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	const state = "awaiting-three-answers"
	n, errName := name(c, "user_name")
	greeting, errGreeting := c.SamplingResponse("greeting")
	roots, errRoots := c.RootsResponse("client_roots")
	missing := map[string]wasmcp.InputRequest{}
	if errors.Is(errName, wasmcp.ErrNoInputResponse) || c.RequestState != state {
		missing["user_name"] = askName
	}
	if errors.Is(errGreeting, wasmcp.ErrNoInputResponse) || c.RequestState != state {
		missing["greeting"] = wasmcp.NewTextSamplingRequest("Generate a greeting", 50)
	}
	if errors.Is(errRoots, wasmcp.ErrNoInputResponse) || c.RequestState != state {
		missing["client_roots"] = askRoots
	}
	if len(missing) > 0 {
		return nil, ask(state, missing)
	}
	if err := errors.Join(errName, errGreeting, errRoots); err != nil {
		return nil, err
	}
	return wasmcp.TextResult(fmt.Sprintf("name=%s greeting=%q roots=%s", n, greeting.Text(), rootsText(roots))), nil
}

// irMultiRound asks in two rounds; each round's state names the round.
func irMultiRound(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	step1 := wasmcp.NewElicitRequest("Step 1: What is your name?", formOf("name"))
	step2 := wasmcp.NewElicitRequest("Step 2: What is your favorite color?", formOf("color"))
	restart := ask("round-1", map[string]wasmcp.InputRequest{"step1": step1})
	switch c.RequestState {
	case "round-1":
		n, err := answered(c, name, "round-1", "step1", step1)
		if err != nil {
			return nil, err
		}
		return nil, ask("round-2:"+n, map[string]wasmcp.InputRequest{"step2": step2})
	case "":
		return nil, restart
	}
	n, ok := strings.CutPrefix(c.RequestState, "round-2:")
	if !ok {
		return nil, restart
	}
	answer, err := answered(c, (*wasmcp.Context).ElicitResponse, c.RequestState, "step2", step2)
	if err != nil {
		return nil, err
	}
	var form struct {
		Color string `json:"color"`
	}
	if answer.Accepted() {
		if err := answer.Decode(&form); err != nil {
			return nil, err
		}
	}
	return wasmcp.TextResult(fmt.Sprintf("%s likes %s.", n, form.Color)), nil
}

// irCapabilities asks only for what the client declared; a client that
// declared none of them is asked to elicit anyway, which the host refuses
// with -32021 naming elicitation.
func irCapabilities(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
	if len(c.InputResponses) > 0 {
		keys := make([]string, 0, len(c.InputResponses))
		for k := range c.InputResponses {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return wasmcp.TextResult("Answers received: " + strings.Join(keys, ", ")), nil
	}
	reqs := map[string]wasmcp.InputRequest{}
	if c.HasClientCapability("elicitation") {
		reqs["user_name"] = askName
	}
	if c.HasClientCapability("sampling") {
		reqs["capital_question"] = askCapital
	}
	if c.HasClientCapability("roots") {
		reqs["client_roots"] = askRoots
	}
	if len(reqs) == 0 {
		reqs["user_name"] = askName
	}
	return nil, ask("", reqs)
}
