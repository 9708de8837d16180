package wasmcp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

type wordsIn struct {
	Text string `json:"text"`
}

type wordsOut struct {
	Words int `json:"words"`
}

func ExampleAddTool() {
	p := wasmcp.New(wasmcp.Info{Name: "words", Version: "1.0.0"})
	wasmcp.AddTool(p, wasmcp.Tool{
		Name:         "count_words",
		Description:  "Counts the words of a text.",
		InputSchema:  wasmcp.Object(wasmcp.Required("text", wasmcp.String("The text"))),
		OutputSchema: wasmcp.Object(wasmcp.Required("words", wasmcp.Integer(""))),
	}, func(c *wasmcp.Context, in wordsIn) (wordsOut, error) {
		return wordsOut{Words: len(strings.Fields(in.Text))}, nil
	})

	// In a plugin: wasmcp.Serve(p) in init. In a test, send requests:
	status, out := p.HandleWith(nil, []byte(`{"method":"tools/call","params":{"name":"count_words","arguments":{"text":"to be or not to be"}}}`))
	fmt.Println(status, string(out))
	// Output:
	// 0 {"content":[{"type":"text","text":"{\"words\":6}"}],"structuredContent":{"words":6}}
}

func ExampleObject() {
	s := wasmcp.Object(
		wasmcp.Required("city", wasmcp.String("City name")),
		wasmcp.Optional("days", wasmcp.Integer("Days ahead").With("minimum", 1).With("maximum", 16)),
		wasmcp.Optional("units", wasmcp.Enum("", "metric", "imperial")),
	).With("additionalProperties", false)
	b, _ := json.Marshal(s)
	fmt.Println(string(b))
	// Output:
	// {"additionalProperties":false,"properties":{"city":{"description":"City name","type":"string"},"days":{"description":"Days ahead","maximum":16,"minimum":1,"type":"integer"},"units":{"enum":["metric","imperial"],"type":"string"}},"required":["city"],"type":"object"}
}

func ExampleInputRequired() {
	p := wasmcp.New(wasmcp.Info{Name: "confirm"})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "delete_all"}, func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
		answer, err := c.ElicitResponse("confirm")
		if errors.Is(err, wasmcp.ErrNoInputResponse) {
			// First call: ask the user, keep some state for the retry.
			return nil, &wasmcp.InputRequired{
				Requests: map[string]wasmcp.InputRequest{
					"confirm": wasmcp.NewElicitRequest("Delete everything?", wasmcp.Object(wasmcp.Required("ok", wasmcp.Boolean("")))),
				},
				State: "asked",
			}
		}
		if err != nil {
			return nil, err // a malformed answer: JSON-RPC invalid params
		}
		if !answer.Accepted() || answer.Content["ok"] != true {
			return wasmcp.TextResult("kept everything"), nil
		}
		return wasmcp.TextResult("deleted everything (state " + c.RequestState + ")"), nil
	})

	s := wasmcptest.NewSession(p, wasmcptest.NewHost())
	_, err := s.CallTool("delete_all", nil)
	fmt.Println(err)
	r, _ := s.CallToolRetry("delete_all", nil, &wasmcptest.Retry{
		Responses: map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}},
		State:     "asked",
	})
	fmt.Println(r.Content[0].Text)
	// Output:
	// input required
	// deleted everything (state asked)
}

func ExamplePlugin_AddResourceTemplate() {
	p := wasmcp.New(wasmcp.Info{Name: "files"})
	p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "files://{dir}/{+path}", Name: "file", MIMEType: "text/plain"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			if r.Vars["dir"] != "docs" {
				return nil, wasmcp.ErrResourceNotFound
			}
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/plain", "path="+r.Vars["path"])}, nil
		})
	s := wasmcptest.NewSession(p, wasmcptest.NewHost())
	contents, _ := s.ReadResource("files://docs/guide/intro%20one.md")
	fmt.Println(contents[0].Text)
	_, err := s.ReadResource("files://other/x")
	fmt.Println(err)
	// Output:
	// path=guide/intro one.md
	// resource not found: files://other/x (code -32002)
}

func ExampleCompleteFrom() {
	c := wasmcp.CompleteFrom([]string{"paris", "Prague", "Oslo", "porto"}, "P")
	fmt.Println(c.Values, c.Total, c.HasMore)
	// Output:
	// [Prague paris porto] 3 false
}

func ExampleStructuredResult() {
	r, _ := wasmcp.StructuredResult(map[string]any{"temperature": 21.5, "unit": "C"})
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
	// Output:
	// {"content":[{"type":"text","text":"{\"temperature\":21.5,\"unit\":\"C\"}"}],"structuredContent":{"temperature":21.5,"unit":"C"}}
}

func ExampleContext_KVGet() {
	p := wasmcp.New(wasmcp.Info{Name: "counter", Capabilities: wasmcp.Capabilities{KV: true}})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "hit"}, func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
		v, _, err := c.KVGet("hits")
		if err != nil {
			return nil, err // e.g. "wasmcp: kv/get: not granted by the server's operator"
		}
		n := len(v) + 1
		if err := c.KVSet("hits", strings.Repeat("x", n), 0); err != nil {
			return nil, err
		}
		return wasmcp.TextResult(fmt.Sprint(n)), nil
	})
	h := wasmcptest.NewHost()
	s := wasmcptest.NewSession(p, h)
	r, _ := s.CallTool("hit", nil)
	fmt.Println(r.IsError, r.Content[0].Text)
	h.KVEnabled = true
	s.CallTool("hit", nil)
	r, _ = s.CallTool("hit", nil)
	fmt.Println(r.IsError, r.Content[0].Text)
	// Output:
	// true wasmcp: kv/get: not granted by the server's operator
	// false 2
}
