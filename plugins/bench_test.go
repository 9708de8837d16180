package plugins

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// benchRegistry loads the given example plugins.
func benchRegistry(b *testing.B, paths ...string) *Registry {
	b.Helper()
	ctx := context.Background()
	reg := testRegistry(b)
	var specs []Spec
	for _, p := range paths {
		specs = append(specs, Spec{Path: p})
	}
	if err := reg.Load(ctx, specs); err != nil {
		b.Fatal(err)
	}
	return reg
}

// BenchmarkCallTool measures the host's share of a tools/call: parsing,
// argument validation, the envelope, the pool and reading the result, with
// plugins whose own work is negligible, and the whole round trip of a
// small call to a Go SDK plugin (go-text's slugify).
func BenchmarkCallTool(b *testing.B) {
	reg := benchRegistry(b, "../examples/wat-ping/wat-ping.wasm", "../examples/c-hash/c-hash.wasm", "../examples/go-text/go-text.wasm")
	caps := json.RawMessage(`{"sampling":{},"elicitation":{}}`)
	info := json.RawMessage(`{"name":"bench","version":"1.0.0"}`)
	for _, bc := range []struct{ name, params, tool, args string }{
		{"wat-ping", `{"name":"ping","_meta":{"progressToken":7}}`, "ping", `{}`},
		{"c-sha256", `{"name":"sha256","arguments":{"text":"hello, world"}}`, "sha256", `{"text":"hello, world"}`},
		{"go-slugify", `{"name":"slugify","arguments":{"text":"Hello, World"}}`, "slugify", `{"text":"Hello, World"}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := &Request{Params: json.RawMessage(bc.params), Parsed: &mcpreq.Params{Name: bc.tool, Arguments: json.RawMessage(bc.args)},
				Client: &mcpreq.Client{ProtocolVersion: "2025-11-25", ClientInfo: info, ClientCapabilities: caps}}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := reg.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
