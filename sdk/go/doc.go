// Package wasmcp is the Go SDK for writing wasmcp plugins: WebAssembly
// modules that give an MCP server tools, resources, resource templates,
// prompts and completions. It implements the plugin side of the wasmcp/1
// ABI (sdk/ABI.md in the repository): the wasmcp_call export, the request
// envelope, the wasmcp/describe manifest, result statuses and the host
// calls.
//
// A plugin is a main package that registers its features in init and is
// built as a WASI reactor:
//
//	package main
//
//	import wasmcp "github.com/wasmcp/wasmcp/sdk/go"
//
//	var plugin = wasmcp.New(wasmcp.Info{Name: "greeter", Version: "1.0.0"})
//
//	type greetIn struct {
//		Name string `json:"name"`
//	}
//
//	type greetOut struct {
//		Greeting string `json:"greeting"`
//	}
//
//	func init() {
//		wasmcp.AddTool(plugin, wasmcp.Tool{
//			Name:        "greet",
//			Description: "Greets someone by name.",
//			InputSchema: wasmcp.Object(wasmcp.Required("name", wasmcp.String("who to greet"))),
//		}, func(c *wasmcp.Context, in greetIn) (greetOut, error) {
//			return greetOut{Greeting: "Hello, " + in.Name + "!"}, nil
//		})
//		wasmcp.Serve(plugin)
//	}
//
//	func main() {} // required, never called in a reactor
//
// Build it with:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o greeter.wasm .
//
// # Registration
//
// Register everything in init (or package-level variable initialisers):
// the host runs _initialize, which runs init functions but never main.
// Registration mistakes (an invalid name, a schema that is not a JSON
// object, a duplicate) panic, so a broken plugin fails to load with a clear
// message instead of misbehaving at call time.
//
// # Handlers and errors
//
// Handlers receive a [*Context] describing the request and giving access
// to the host. What a handler returns decides the answer:
//
//   - a result: the MCP result object (status 0);
//   - an *[InputRequired] error: an input_required result asking the client
//     for elicitation, sampling or roots (status 0); the client's answers
//     come back in [Context.InputResponses] on a later call;
//   - an *[RPCError]: that JSON-RPC error (status 1);
//   - any other error: for tools, a result with isError true and the
//     error's text, which the model can read and act on; for other methods,
//     a JSON-RPC internal error (-32603), except [ErrResourceNotFound]
//     (-32002 with the URI) and errors from [Context.InputResponse]
//     decoding (-32602).
//
// A panic in a handler is recovered and answered like an error, with the
// stack written to stderr (the server log).
//
// # Testing
//
// The package builds natively too (the wasm imports and export exist only
// under GOOS=wasip1), so handler logic can be unit-tested with go test:
// [Plugin.HandleWith] runs one request envelope against a [Host] the test
// provides; the wasmcptest package has a ready-made fake host.
package wasmcp
