// Command v2 is a hyper-mcp v2 plugin on github.com/extism/go-pdk: tools
// (text and structuredContent), prompts, resources, a resource template,
// completion, notifications and the blocking client requests, each a case
// of plugins/extism_test.go. Build: testdata/extism/build.sh.
package main

import (
	"encoding/json"
	"fmt"
	"strings"

	pdk "github.com/extism/go-pdk"
)

func main() {}

//go:wasmimport extism:host/user notify_progress
func notifyProgress(uint64)

//go:wasmimport extism:host/user notify_logging_message
func notifyLoggingMessage(uint64)

//go:wasmimport extism:host/user notify_tool_list_changed
func notifyToolListChanged()

//go:wasmimport extism:host/user notify_resource_updated
func notifyResourceUpdated(uint64)

//go:wasmimport extism:host/user create_elicitation
func createElicitation(uint64) uint64

//go:wasmimport extism:host/user list_roots
func listRoots() uint64

// send passes v as JSON in a kernel block.
func send(v any) uint64 {
	mem, err := pdk.AllocateJSON(v)
	if err != nil {
		panic(err)
	}
	return mem.Offset()
}

func output(v any) int32 {
	if err := pdk.OutputJSON(v); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

type requestContext struct {
	ID   json.RawMessage `json:"id"`
	Meta map[string]any  `json:"_meta"`
}

func input[T any]() (T, requestContext) {
	var in struct {
		Request T              `json:"request"`
		Context requestContext `json:"context"`
	}
	if err := pdk.InputJSON(&in); err != nil {
		panic(err)
	}
	return in.Request, in.Context
}

func text(s string) map[string]any {
	return map[string]any{"type": "text", "text": s}
}

var num = map[string]any{"type": "number"}

//go:wasmexport list_tools
func listTools() int32 {
	return output(map[string]any{"tools": []map[string]any{
		{"name": "add", "description": "Adds two numbers.",
			"inputSchema":  map[string]any{"type": "object", "properties": map[string]any{"a": num, "b": num}, "required": []string{"a", "b"}},
			"outputSchema": map[string]any{"type": "object", "properties": map[string]any{"sum": num}, "required": []string{"sum"}}},
		{"name": "progress", "description": "Reports progress and logs.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "changed", "description": "Says its tool list changed.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "ask", "description": "Asks the user for a color.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "roots", "description": "Lists the client's roots.", "inputSchema": map[string]any{"type": "object"}},
		{"name": "fail", "description": "Fails with an error.", "inputSchema": map[string]any{"type": "object"}},
	}})
}

type callRequest struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

//go:wasmexport call_tool
func callTool() int32 {
	req, ctx := input[callRequest]()
	switch req.Name {
	case "add":
		a, _ := req.Arguments["a"].(float64)
		b, _ := req.Arguments["b"].(float64)
		return output(map[string]any{
			"content":           []any{text(fmt.Sprint(a + b))},
			"structuredContent": map[string]any{"sum": a + b},
		})
	case "progress":
		token := ctx.Meta["progressToken"]
		notifyProgress(send(map[string]any{"progressToken": token, "progress": 1, "total": 2, "message": "half way"}))
		notifyLoggingMessage(send(map[string]any{"level": "warning", "logger": "v2", "data": "careful"}))
		notifyProgress(send(map[string]any{"progressToken": token, "progress": 2, "total": 2}))
		notifyResourceUpdated(send(map[string]any{"uri": "extism://readme"}))
		return output(map[string]any{"content": []any{text("done")}})
	case "changed":
		notifyToolListChanged()
		return output(map[string]any{"content": []any{text("changed")}})
	case "ask":
		h := createElicitation(send(map[string]any{
			"message":         "Pick a color",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"color": map[string]any{"type": "string"}}},
		}))
		if h == 0 {
			pdk.SetErrorString("elicitation refused")
			return 1
		}
		var res struct {
			Action  string         `json:"action"`
			Content map[string]any `json:"content"`
		}
		if err := pdk.JSONFrom(h, &res); err != nil {
			pdk.SetError(err)
			return 1
		}
		return output(map[string]any{"content": []any{text(fmt.Sprintf("%s %v", res.Action, res.Content["color"]))}})
	case "roots":
		h := listRoots()
		if h == 0 {
			pdk.SetErrorString("roots refused")
			return 1
		}
		mem := pdk.FindMemory(h)
		return output(map[string]any{"content": []any{text(string(mem.ReadBytes()))}})
	case "fail":
		pdk.SetErrorString("fail tool failed on purpose")
		return 1
	}
	pdk.SetErrorString("unknown tool " + req.Name)
	return 1
}

//go:wasmexport list_prompts
func listPrompts() int32 {
	return output(map[string]any{"prompts": []map[string]any{
		{"name": "greeting", "description": "Greets someone.", "arguments": []map[string]any{{"name": "name", "required": true}}},
	}})
}

//go:wasmexport get_prompt
func getPrompt() int32 {
	req, _ := input[struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	}]()
	if req.Name != "greeting" {
		pdk.SetErrorString("unknown prompt " + req.Name)
		return 1
	}
	return output(map[string]any{
		"description": "A greeting",
		"messages":    []any{map[string]any{"role": "user", "content": text("Say hello to " + req.Arguments["name"])}},
	})
}

//go:wasmexport list_resources
func listResources() int32 {
	return output(map[string]any{"resources": []map[string]any{
		{"uri": "extism://readme", "name": "readme", "mimeType": "text/plain"},
	}})
}

//go:wasmexport list_resource_templates
func listResourceTemplates() int32 {
	return output(map[string]any{"resourceTemplates": []map[string]any{
		{"uriTemplate": "extism://items/{id}", "name": "item"},
	}})
}

//go:wasmexport read_resource
func readResource() int32 {
	req, _ := input[struct {
		URI string `json:"uri"`
	}]()
	var body string
	switch {
	case req.URI == "extism://readme":
		body = "read me"
	case strings.HasPrefix(req.URI, "extism://items/"):
		body = "item " + strings.TrimPrefix(req.URI, "extism://items/")
	default:
		pdk.SetErrorString("no resource " + req.URI)
		return 1
	}
	return output(map[string]any{"contents": []any{map[string]any{"uri": req.URI, "mimeType": "text/plain", "text": body}}})
}

//go:wasmexport complete
func complete() int32 {
	req, _ := input[struct {
		Ref struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"ref"`
		Argument struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"argument"`
	}]()
	values := []string{}
	if req.Ref.Type == "prompt" && req.Ref.Name == "greeting" {
		for _, v := range []string{"alice", "albert", "bob"} {
			if strings.HasPrefix(v, req.Argument.Value) {
				values = append(values, v)
			}
		}
	}
	return output(map[string]any{"completion": map[string]any{"values": values, "hasMore": false}})
}
