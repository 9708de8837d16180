// Command goecho is the benchmark's trivial tool as a Go wasmcp plugin:
// "echo" returns its "text" argument as one text content block, the same
// tool bench/cmd/nativeserver serves with the official Go SDK.
//
// Build with bench/plugins/build.sh, or:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o goecho.wasm .
package main

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

var plugin = wasmcp.New(wasmcp.Info{Name: "goecho", Version: "1.0.0"})

type echoIn struct {
	Text string `json:"text"`
}

func init() {
	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		InputSchema: wasmcp.Object(wasmcp.Required("text", wasmcp.String(""))),
	}, func(_ *wasmcp.Context, in echoIn) (*wasmcp.Result, error) {
		return wasmcp.TextResult(in.Text), nil
	})
	wasmcp.Serve(plugin)
}

func main() {}
