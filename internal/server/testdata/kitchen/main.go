// Command kitchen is the test plugin of internal/server: one of everything,
// including the failures the server must map (see errors.go there).
//
// Build: internal/server/testdata/build.sh
package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

var plugin = wasmcp.New(wasmcp.Info{
	Name:         "kitchen",
	Version:      "1.0.0",
	Description:  "Test plugin with one of everything",
	Capabilities: wasmcp.Capabilities{KV: true, Config: []string{"greeting"}},
})

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Text   string `json:"text"`
	Length int    `json:"length"`
}

type none struct{}

var echoOutSchema = wasmcp.Object(wasmcp.Required("text", wasmcp.String("")), wasmcp.Required("length", wasmcp.Integer("")))

func init() {
	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name: "echo", Description: "Echo text with its length",
		InputSchema:  wasmcp.Object(wasmcp.Required("text", wasmcp.String("text to echo"))),
		OutputSchema: echoOutSchema,
	}, func(c *wasmcp.Context, in echoIn) (echoOut, error) {
		return echoOut{Text: in.Text, Length: len(in.Text)}, nil
	})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "bad_output", Description: "Returns structured content that breaks its schema", OutputSchema: echoOutSchema},
		func(c *wasmcp.Context, in none) (map[string]any, error) {
			return map[string]any{"text": 7}, nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "fail", Description: "A tool error"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			return nil, errors.New("this tool failed on purpose")
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "rpc_error", Description: "A JSON-RPC error"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			return nil, wasmcp.NewRPCError(-32602, "refused by the plugin", map[string]string{"why": "test"})
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "loop", Description: "Never returns"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			n := 0
			for {
				n++
			}
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "panic", Description: "Panics"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			var m map[string]int
			m["/home/secret/path"] = 1 // nil map write: a runtime panic, not recovered
			return nil, nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "exit", Description: "Exits the instance"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			os.Exit(3)
			return nil, nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "hog", Description: "Allocates until it runs out of memory"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			var keep [][]byte
			for {
				keep = append(keep, make([]byte, 1<<20))
			}
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "flood", Description: "Returns far more output than allowed"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			return wasmcp.TextResult(strings.Repeat("x", 256<<10)), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "slow", Description: "Sleeps ms milliseconds",
		InputSchema: wasmcp.Object(wasmcp.Required("ms", wasmcp.Integer("")))},
		func(c *wasmcp.Context, in struct {
			MS int `json:"ms"`
		}) (*wasmcp.Result, error) {
			time.Sleep(time.Duration(in.MS) * time.Millisecond)
			return wasmcp.TextResult("slept"), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "progress", Description: "Reports progress three times"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			for i := 1; i <= 3; i++ {
				c.Progress(float64(i), 3, fmt.Sprintf("step %d", i))
			}
			c.Log(wasmcp.LevelInfo, "progress done")
			return wasmcp.TextResult("done"), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "ask", Description: "Asks the user's name (input_required)"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			r, err := c.ElicitResponse("name")
			if errors.Is(err, wasmcp.ErrNoInputResponse) {
				return nil, &wasmcp.InputRequired{
					Requests: map[string]wasmcp.InputRequest{"name": wasmcp.NewElicitRequest("What is your name?",
						wasmcp.Object(wasmcp.Required("name", wasmcp.String(""))))},
					State: "asked-" + strconv.Itoa(1),
				}
			}
			if err != nil {
				return nil, err
			}
			var v struct {
				Name string `json:"name"`
			}
			if err := r.Decode(&v); err != nil {
				return nil, err
			}
			return wasmcp.TextResult("Hello, " + v.Name + "! state=" + c.RequestState), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "counter", Description: "Increments a counter in kv"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			v, _, err := c.KVGet("count")
			if err != nil {
				return nil, err
			}
			n, _ := strconv.Atoi(v)
			n++
			if err := c.KVSet("count", strconv.Itoa(n), 0); err != nil {
				return nil, err
			}
			c.NotifyResourceUpdated("kitchen://static")
			return wasmcp.TextResult(strconv.Itoa(n)), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "greeting", Description: "Reads the granted config key"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			v, err := c.ConfigGet("greeting")
			if err != nil {
				return nil, err
			}
			return wasmcp.TextResult(v), nil
		})
	wasmcp.AddTool(plugin, wasmcp.Tool{Name: "changed", Description: "Announces a tool list change"},
		func(c *wasmcp.Context, in none) (*wasmcp.Result, error) {
			if err := c.NotifyListChanged(wasmcp.ListTools); err != nil {
				return nil, err
			}
			return wasmcp.TextResult("ok"), nil
		})

	plugin.AddResource(wasmcp.Resource{URI: "kitchen://static", Name: "static", MIMEType: "text/plain"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/plain", "static text")}, nil
		})
	plugin.AddResource(wasmcp.Resource{URI: "kitchen://blob", Name: "blob", MIMEType: "application/octet-stream"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			return []wasmcp.ResourceContents{wasmcp.BlobContents(r.URI, "application/octet-stream", []byte{0, 1, 2, 255})}, nil
		})
	plugin.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "kitchen://item/{id}", Name: "item"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			if r.Vars["id"] == "missing" {
				return nil, wasmcp.ErrResourceNotFound
			}
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/plain", "item "+r.Vars["id"])}, nil
		})
	plugin.AddPrompt(wasmcp.Prompt{Name: "greet", Description: "Greets someone",
		Arguments: []wasmcp.PromptArgument{{Name: "name", Required: true}}},
		func(c *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
			return &wasmcp.PromptResult{Messages: []wasmcp.PromptMessage{wasmcp.UserMessage(wasmcp.Text("Say hello to " + args["name"]))}}, nil
		})
	plugin.AddPromptCompletion("greet", func(c *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		return wasmcp.CompleteFrom([]string{"alice", "bob", "albert"}, r.Value), nil
	})
	wasmcp.Serve(plugin)
}

func main() {}
