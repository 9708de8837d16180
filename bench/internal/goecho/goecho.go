// Package goecho is the benchmark's trivial tool as a Go wasmcp plugin:
// "echo" returns its "text" argument as one text content block, the same
// tool bench/cmd/nativeserver serves with the official Go SDK. The
// command bench/plugins/goecho serves it as a Wasm plugin; the guest
// benchmarks also run it natively.
package goecho

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

type echoIn struct {
	Text string `json:"text"`
}

// New returns the plugin with its echo tool.
func New() *wasmcp.Plugin {
	p := wasmcp.New(wasmcp.Info{Name: "goecho", Version: "1.0.0"})
	wasmcp.AddTool(p, wasmcp.Tool{
		Name:        "echo",
		Description: "Returns its text argument unchanged.",
		InputSchema: wasmcp.Object(wasmcp.Required("text", wasmcp.String(""))),
	}, func(_ *wasmcp.Context, in echoIn) (*wasmcp.Result, error) {
		return wasmcp.TextResult(in.Text), nil
	})
	return p
}
