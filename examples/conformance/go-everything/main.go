// Command go-everything is the Go half of wasmcp's fixtures for the
// official MCP conformance suite (the "everything server"): text, embedded
// resource and error tools, progress, logging, sampling and elicitation
// (SEP-1034 defaults, SEP-1330 enums), JSON Schema 2020-12, reconnection,
// the 2026-07-28 diagnostics and list-change triggers, every
// input_required scenario, an x-mcp-header tool, the text, watched and
// templated resources, the prompts and completion. examples/conformance/c-media
// (C) has the image and audio fixtures.
//
// Everything that needs the client (sampling, elicitation, roots) is written
// once in the input_required style of ABI §6: a 2026-07-28 client gets the
// input_required result, and on a legacy session the host performs the
// requests itself and calls the plugin again with the answers.
//
// Build (examples/build.sh examples/conformance/go-everything):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o go-everything.wasm .
package main

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

var plugin = wasmcp.New(wasmcp.Info{
	Name:        "everything",
	Version:     "1.0.0",
	Description: "Fixtures of the MCP conformance suite (Go half).",
	// kv holds what every pooled instance must agree on: the transient
	// tool and prompt toggled by the triggers, and the watched resource's
	// revision.
	Capabilities: wasmcp.Capabilities{KV: true},
})

func init() {
	addTools(plugin)
	addInputRequiredTools(plugin)
	addTaskTools(plugin)
	addResources(plugin)
	addPrompts(plugin)
	plugin.SetListFilter(listed)
	wasmcp.Serve(plugin)
}

func main() {} // required; a reactor never runs it
