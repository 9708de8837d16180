package wasmcp_test

import (
	"errors"
	"strings"
	"testing"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

// mrtrPlugin has the conformance suite's input_required fixtures.
func mrtrPlugin() *wasmcp.Plugin {
	p := wasmcp.New(wasmcp.Info{Name: "mrtr"})
	nameSchema := wasmcp.Object(wasmcp.Required("name", wasmcp.String("")))
	wasmcp.AddTool(p, wasmcp.Tool{Name: "test_input_required_result_elicitation"},
		func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
			r, err := c.ElicitResponse("user_name")
			if errors.Is(err, wasmcp.ErrNoInputResponse) {
				return nil, &wasmcp.InputRequired{Requests: map[string]wasmcp.InputRequest{
					"user_name": wasmcp.NewElicitRequest("What is your name?", nameSchema),
				}}
			}
			if err != nil {
				return nil, err
			}
			var form struct{ Name string }
			if err := r.Decode(&form); err != nil {
				return nil, err
			}
			return wasmcp.TextResult("Hello, " + form.Name + "!"), nil
		})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "test_input_required_result_multi_round"},
		func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
			switch c.RequestState {
			case "":
				return nil, &wasmcp.InputRequired{State: "step1", Requests: map[string]wasmcp.InputRequest{
					"step1": wasmcp.NewElicitRequest("Step 1: What is your name?", nameSchema)}}
			case "step1":
				if _, err := c.ElicitResponse("step1"); err != nil {
					return nil, err
				}
				return nil, &wasmcp.InputRequired{State: "step2", Requests: map[string]wasmcp.InputRequest{
					"step2": wasmcp.NewElicitRequest("Step 2: What is your favorite color?", wasmcp.Object(wasmcp.Required("color", wasmcp.String(""))))}}
			}
			r, err := c.ElicitResponse("step2")
			if err != nil {
				return nil, err
			}
			return wasmcp.TextResult("color " + r.Content["color"].(string)), nil
		})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "test_input_required_result_multiple_inputs"},
		func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
			name, err1 := c.ElicitResponse("user_name")
			greeting, err2 := c.SamplingResponse("greeting")
			roots, err3 := c.RootsResponse("client_roots")
			if err := errors.Join(err1, err2, err3); err != nil {
				if errors.Is(err, wasmcp.ErrNoInputResponse) {
					return nil, &wasmcp.InputRequired{State: "multi", Requests: map[string]wasmcp.InputRequest{
						"user_name":    wasmcp.NewElicitRequest("What is your name?", nameSchema),
						"greeting":     wasmcp.NewTextSamplingRequest("Generate a greeting", 50),
						"client_roots": wasmcp.NewRootsRequest(),
					}}
				}
				return nil, err
			}
			return wasmcp.TextResult(greeting.Text() + " " + name.Content["name"].(string) + " " + roots[0].URI), nil
		})
	return p
}

func TestInputRequired(t *testing.T) {
	s := wasmcptest.NewSession(mrtrPlugin(), wasmcptest.NewHost())
	const tool = "test_input_required_result_elicitation"

	resp := s.Do("tools/call", map[string]any{"name": tool}, nil)
	want := `{"resultType":"input_required","inputRequests":{"user_name":{"method":"elicitation/create","params":` +
		`{"message":"What is your name?","requestedSchema":{"properties":{"name":{"type":"string"}},"required":["name"],"type":"object"}}}}}`
	if resp.Status != 0 || string(resp.Output) != want {
		t.Fatalf("round 1:\n got %d %s\nwant %s", resp.Status, resp.Output, want)
	}

	accept := map[string]any{"action": "accept", "content": map[string]any{"name": "Alice"}}
	r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{Responses: map[string]any{"user_name": accept, "unknown_extra_key": 1}})
	if err != nil || r.Content[0].Text != "Hello, Alice!" {
		t.Fatalf("round 2 = %+v, %v", r, err)
	}

	// A wrong key or null responses: ask again.
	for _, retry := range []*wasmcptest.Retry{{Responses: map[string]any{"wrong_key": accept}}, {Responses: nil}} {
		var ir *wasmcptest.InputRequired
		if _, err := s.CallToolRetry(tool, nil, retry); !errors.As(err, &ir) || ir.InputRequests["user_name"].Method != "elicitation/create" {
			t.Errorf("retry %+v = %v, want input_required again", retry, err)
		}
	}

	// A malformed response: invalid params.
	for _, bad := range []any{12345, map[string]any{"action": "maybe"}} {
		var re *wasmcp.RPCError
		_, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{Responses: map[string]any{"user_name": bad}})
		if !errors.As(err, &re) || re.Code != wasmcp.CodeInvalidParams || !strings.HasPrefix(re.Message, "inputResponses.user_name: not a valid elicitation result") {
			t.Errorf("malformed %v = %v, want -32602", bad, err)
		}
	}
}

func TestInputRequiredMultiRound(t *testing.T) {
	s := wasmcptest.NewSession(mrtrPlugin(), wasmcptest.NewHost())
	const tool = "test_input_required_result_multi_round"
	var ir *wasmcptest.InputRequired
	_, err := s.CallTool(tool, nil)
	if !errors.As(err, &ir) || ir.RequestState != "step1" {
		t.Fatalf("r1 = %v", err)
	}
	_, err = s.CallToolRetry(tool, nil, &wasmcptest.Retry{State: "step1", Responses: map[string]any{"step1": map[string]any{"action": "accept", "content": map[string]any{"name": "A"}}}})
	if !errors.As(err, &ir) || ir.RequestState != "step2" || ir.InputRequests["step2"].Method != "elicitation/create" {
		t.Fatalf("r2 = %v", err)
	}
	r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{State: "step2", Responses: map[string]any{"step2": map[string]any{"action": "accept", "content": map[string]any{"color": "blue"}}}})
	if err != nil || r.Content[0].Text != "color blue" {
		t.Fatalf("r3 = %+v, %v", r, err)
	}
}

func TestInputRequiredMultipleInputs(t *testing.T) {
	s := wasmcptest.NewSession(mrtrPlugin(), wasmcptest.NewHost())
	const tool = "test_input_required_result_multiple_inputs"
	var ir *wasmcptest.InputRequired
	if _, err := s.CallTool(tool, nil); !errors.As(err, &ir) || len(ir.InputRequests) != 3 || ir.InputRequests["client_roots"].Method != "roots/list" ||
		ir.InputRequests["greeting"].Method != "sampling/createMessage" {
		t.Fatalf("r1 = %v", err)
	}
	r, err := s.CallToolRetry(tool, nil, &wasmcptest.Retry{State: "multi", Responses: map[string]any{
		"user_name":    map[string]any{"action": "accept", "content": map[string]any{"name": "Bob"}},
		"greeting":     map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Hi"}, "model": "test-model", "stopReason": "endTurn"},
		"client_roots": map[string]any{"roots": []any{map[string]any{"uri": "file:///test/root", "name": "Test Root"}}},
	}})
	if err != nil || r.Content[0].Text != "Hi Bob file:///test/root" {
		t.Fatalf("r2 = %+v, %v", r, err)
	}
}

func TestInputRequiredFromPromptsAndResources(t *testing.T) {
	p := wasmcp.New(wasmcp.Info{Name: "mrtr2"})
	ask := &wasmcp.InputRequired{Requests: map[string]wasmcp.InputRequest{
		"user_context": wasmcp.NewElicitRequest("What context should the prompt use?", wasmcp.Object(wasmcp.Required("context", wasmcp.String("")))),
	}}
	p.AddPrompt(wasmcp.Prompt{Name: "test_input_required_result_prompt"}, func(c *wasmcp.Context, _ map[string]string) (*wasmcp.PromptResult, error) {
		r, err := c.ElicitResponse("user_context")
		if errors.Is(err, wasmcp.ErrNoInputResponse) {
			return nil, ask
		}
		if err != nil {
			return nil, err
		}
		return &wasmcp.PromptResult{Messages: []wasmcp.PromptMessage{wasmcp.UserMessage(wasmcp.Text("context: " + r.Content["context"].(string)))}}, nil
	})
	p.AddResource(wasmcp.Resource{URI: "test://needs-input"}, func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
		if c.RequestState != "again" {
			return nil, &wasmcp.InputRequired{State: "again"} // requestState only: "retry later"
		}
		return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "", "done")}, nil
	})
	s := wasmcptest.NewSession(p, wasmcptest.NewHost())
	var ir *wasmcptest.InputRequired
	if _, err := s.GetPrompt("test_input_required_result_prompt", nil); !errors.As(err, &ir) || ir.InputRequests["user_context"].Method != "elicitation/create" {
		t.Fatalf("prompt r1 = %v", err)
	}
	var r wasmcp.PromptResult
	err := s.Do("prompts/get", map[string]any{"name": "test_input_required_result_prompt"}, &wasmcptest.Retry{
		Responses: map[string]any{"user_context": map[string]any{"action": "accept", "content": map[string]any{"context": "tests"}}},
	}).Decode(&r)
	if err != nil || r.Messages[0].Content.Text != "context: tests" {
		t.Fatalf("prompt r2 = %+v, %v", r, err)
	}
	resp := s.Do("resources/read", map[string]any{"uri": "test://needs-input"}, nil)
	if string(resp.Output) != `{"resultType":"input_required","requestState":"again"}` {
		t.Fatalf("resource r1 = %s", resp.Output)
	}
	var rr struct{ Contents []wasmcp.ResourceContents }
	if err := s.Do("resources/read", map[string]any{"uri": "test://needs-input"}, &wasmcptest.Retry{State: "again"}).Decode(&rr); err != nil || rr.Contents[0].Text != "done" {
		t.Fatalf("resource r2 = %+v, %v", rr, err)
	}
}
