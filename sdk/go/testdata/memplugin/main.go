// Command memplugin is the Go SDK plugin of TestReactorMemory: its "size"
// tool answers the length of its "data" argument (or "data" itself with
// "echo"), after allocating "garbage" bytes that it drops. The test builds it from source, so it
// always runs the SDK of the tree.
package main

import (
	"strconv"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

type sizeIn struct {
	Data    string `json:"data"`
	Garbage int    `json:"garbage"`
	Echo    bool   `json:"echo"`
}

// sink keeps the garbage from being optimised away.
var sink []byte

func init() {
	p := wasmcp.New(wasmcp.Info{Name: "memplugin", Version: "1.0.0"})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "size"}, func(_ *wasmcp.Context, in sizeIn) (*wasmcp.Result, error) {
		if in.Garbage > 0 {
			sink = make([]byte, in.Garbage)
			sink[len(sink)-1] = 1
			sink = nil
		}
		if in.Echo {
			return wasmcp.TextResult(in.Data), nil
		}
		return wasmcp.TextResult(strconv.Itoa(len(in.Data))), nil
	})
	wasmcp.Serve(p)
}

func main() {}
