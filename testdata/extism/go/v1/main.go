// Command v1 is a hyper-mcp v1 plugin (the mcp.run servlet interface) on
// github.com/extism/go-pdk: it exports describe and call. Its tools are the
// cases of plugins/extism_test.go. Build: testdata/extism/build.sh.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	pdk "github.com/extism/go-pdk"
)

func main() {}

type tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"inputSchema"`
}

func obj(props map[string]any, required ...string) map[string]any {
	if props == nil {
		props = map[string]any{}
	}
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

var str = map[string]any{"type": "string"}

//go:wasmexport describe
func describe() int32 {
	tools := []tool{
		{"greet", "Greets someone by name.", obj(map[string]any{"name": str}, "name")},
		{"spin", "Loops forever.", obj(nil)},
		{"hog", "Allocates memory until it runs out.", obj(nil)},
		{"crash", "Panics.", obj(nil)},
		{"fetch", "Fetches a URL with http_request.", obj(map[string]any{"url": str}, "url")},
		{"config", "Reads a config key.", obj(map[string]any{"key": str}, "key")},
		{"count", "Counts its calls in a var.", obj(nil)},
		{"read", "Reads a file (WASI).", obj(map[string]any{"path": str}, "path")},
	}
	if err := pdk.OutputJSON(map[string]any{"tools": tools}); err != nil {
		pdk.SetError(err)
		return 1
	}
	return 0
}

type callInput struct {
	Params struct {
		Name      string            `json:"name"`
		Arguments map[string]string `json:"arguments"`
	} `json:"params"`
}

func text(s string) int32 {
	_ = pdk.OutputJSON(map[string]any{"content": []map[string]string{{"type": "text", "text": s}}})
	return 0
}

var sink [][]byte

//go:wasmexport call
func call() int32 {
	var in callInput
	if err := pdk.InputJSON(&in); err != nil {
		pdk.SetError(err)
		return 1
	}
	args := in.Params.Arguments
	switch in.Params.Name {
	case "greet":
		return text("Hello, " + args["name"] + "!")
	case "spin":
		n := 0
		for {
			n++
			if n < 0 {
				break
			}
		}
		return text(fmt.Sprint(n))
	case "hog":
		for {
			sink = append(sink, make([]byte, 1<<20))
		}
	case "crash":
		panic("crash tool called")
	case "fetch":
		res := pdk.NewHTTPRequest(pdk.MethodGet, args["url"]).Send()
		return text(fmt.Sprintf("status %d: %s", res.Status(), res.Body()))
	case "config":
		v, ok := pdk.GetConfig(args["key"])
		if !ok {
			return text("unset")
		}
		return text(v)
	case "read":
		b, err := os.ReadFile(args["path"])
		if err != nil {
			return text("error: " + err.Error())
		}
		return text(string(b))
	case "count":
		n := pdk.GetVarInt("count") + 1
		pdk.SetVarInt("count", n)
		return text(fmt.Sprint(n))
	}
	b, _ := json.Marshal(in.Params.Name)
	pdk.SetErrorString("unknown tool " + string(b))
	return 1
}
