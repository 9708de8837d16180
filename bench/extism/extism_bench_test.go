// Package extism_test compares one Extism plugin run on wasmcp's Extism
// path (the native Go kernel in package runtime) and on extism/go-sdk:
// per-call cost and allocations. It is its own module so that neither the
// server nor the main bench module depends on extism/go-sdk. Note that
// Go's minimal version selection runs go-sdk on the wazero that wasmcp
// requires (v1.12.0) rather than its own pin (v1.9.0).
//
//	cd bench/extism && go test -bench . -benchmem -count 5
package extism_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	extism "github.com/extism/go-sdk"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/plugins"
	wruntime "github.com/wasmcp/wasmcp/runtime"
)

// The plugins, from testdata/extism (built by its build.sh), with the
// export to call and the hyper-mcp v1 input of one tools/call.
var cases = []struct {
	name, file, tool, args string
	wasi                   bool
}{
	{"c", "cplugin.wasm", "upper", `{"text":"hello, extism"}`, false},
	{"go-pdk", "go_v1.wasm", "greet", `{"name":"extism"}`, true},
}

func fixture(b *testing.B, file string) string {
	p, err := filepath.Abs(filepath.Join("../../testdata/extism", file))
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func input(tool, args string) []byte {
	return []byte(`{"params":{"name":"` + tool + `","arguments":` + args + `}}`)
}

// nopHost answers no host call; the benchmark plugins make none.
type nopHost struct{}

func (nopHost) Log(context.Context, int32, []byte) {}
func (nopHost) Call(context.Context, string, []byte) ([]byte, int32) {
	return nil, -7
}

// BenchmarkExtismCall: one call of the plugin's call export with the same
// input, on each host.
func BenchmarkExtismCall(b *testing.B) {
	ctx := context.Background()
	for _, tc := range cases {
		wasm, err := os.ReadFile(fixture(b, tc.file))
		if err != nil {
			b.Fatal(err)
		}
		in := input(tc.tool, tc.args)
		b.Run(tc.name+"/wasmcp", func(b *testing.B) {
			e, err := wruntime.NewEngine(ctx, wruntime.Config{NoCache: true})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close(ctx)
			m, err := e.Compile(ctx, tc.name, wasm)
			if err != nil {
				b.Fatal(err)
			}
			p, err := m.NewPool(wruntime.Limits{Instances: 1}, wruntime.Sandbox{})
			if err != nil {
				b.Fatal(err)
			}
			check(b, func() ([]byte, error) {
				_, out, err := p.CallExport(ctx, "call", in, nopHost{}, nil)
				return out, err
			})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := p.CallExport(ctx, "call", in, nopHost{}, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(tc.name+"/go-sdk", func(b *testing.B) {
			manifest := extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}}
			pl, err := extism.NewPlugin(ctx, manifest, extism.PluginConfig{EnableWasi: tc.wasi}, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer pl.Close(ctx)
			check(b, func() ([]byte, error) {
				_, out, err := pl.Call("call", in)
				return out, err
			})
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := pl.Call("call", in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExtismToolsCall: a whole tools/call through wasmcp's registry
// (argument validation, the v1 adapter, the result checks) for scale.
func BenchmarkExtismToolsCall(b *testing.B) {
	ctx := context.Background()
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			e, err := wruntime.NewEngine(ctx, wruntime.Config{NoCache: true, ExtismUser: plugins.ExtismUserFunctions()})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close(ctx)
			reg, err := plugins.NewRegistry(plugins.Options{Engine: e})
			if err != nil {
				b.Fatal(err)
			}
			defer reg.Close(ctx)
			if err := reg.Load(ctx, []plugins.Spec{{Path: fixture(b, tc.file), Limits: wruntime.Limits{Instances: 1}, Grants: hostapi.Grants{}}}); err != nil {
				b.Fatal(err)
			}
			req := &plugins.Request{Params: json.RawMessage(`{"name":"` + tc.tool + `","arguments":` + tc.args + `}`),
				Parsed: &mcpreq.Params{Name: tc.tool, Arguments: json.RawMessage(tc.args)}, Client: &mcpreq.Client{ProtocolVersion: "2025-11-25"}}
			check(b, func() ([]byte, error) { return reg.CallTool(ctx, req) })
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := reg.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func check(b *testing.B, call func() ([]byte, error)) {
	b.Helper()
	out, err := call()
	if err != nil || !strings.Contains(strings.ToLower(string(out)), "extism") {
		b.Fatalf("call = %s %v", out, err)
	}
}
