package main

import (
	"fmt"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

func addPrompts(p *wasmcp.Plugin) {
	p.AddPrompt(wasmcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments."},
		func(*wasmcp.Context, map[string]string) (*wasmcp.PromptResult, error) {
			return prompt(wasmcp.Text("This is a simple prompt for testing.")), nil
		})
	p.AddPrompt(wasmcp.Prompt{Name: "test_prompt_with_arguments", Description: "A prompt with two required arguments.",
		Arguments: []wasmcp.PromptArgument{
			{Name: "arg1", Description: "First test argument", Required: true},
			{Name: "arg2", Description: "Second test argument", Required: true},
		}},
		func(_ *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
			return prompt(wasmcp.Text(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"]))), nil
		})
	p.AddPrompt(wasmcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "A prompt that embeds a resource.",
		Arguments: []wasmcp.PromptArgument{{Name: "resourceUri", Description: "URI of the resource to embed", Required: true}}},
		func(_ *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
			return prompt(
				wasmcp.EmbeddedResource(wasmcp.TextContents(args["resourceUri"], "text/plain", "Embedded resource content for testing.")),
				wasmcp.Text("Please process the embedded resource above."),
			), nil
		})
	p.AddPrompt(wasmcp.Prompt{Name: "test_input_required_result_prompt", Description: "A prompt that asks the user for context first (input_required)."},
		func(c *wasmcp.Context, _ map[string]string) (*wasmcp.PromptResult, error) {
			answer, err := answered(c, (*wasmcp.Context).ElicitResponse, "", "user_context",
				wasmcp.NewElicitRequest("What context should the prompt use?", formOf("context")))
			if err != nil {
				return nil, err
			}
			var form struct {
				Context string `json:"context"`
			}
			if answer.Accepted() {
				if err := answer.Decode(&form); err != nil {
					return nil, err
				}
			}
			return prompt(wasmcp.Text(fmt.Sprintf("Use this context: %q (%s).", form.Context, answer.Action))), nil
		})
	p.AddPrompt(wasmcp.Prompt{Name: transientPrompt, Description: "Exists only between two calls of test_trigger_prompt_change."},
		func(*wasmcp.Context, map[string]string) (*wasmcp.PromptResult, error) {
			return prompt(wasmcp.Text("This is the transient prompt.")), nil
		})
	p.AddPromptCompletion("test_prompt_with_arguments", func(_ *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		return wasmcp.CompleteFrom([]string{"testValue1", "testValue2", "otherValue"}, r.Value), nil
	})
	p.AddPromptCompletion("test_prompt_with_embedded_resource", func(_ *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		return wasmcp.CompleteFrom([]string{"test://static-text", "test://static-binary", watchedURI, "test://example-resource"}, r.Value), nil
	})
}

// prompt returns a prompt of user messages, one per content block.
func prompt(blocks ...wasmcp.Content) *wasmcp.PromptResult {
	r := &wasmcp.PromptResult{}
	for _, b := range blocks {
		r.Messages = append(r.Messages, wasmcp.UserMessage(b))
	}
	return r
}
