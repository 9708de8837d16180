package bench_test

import (
	"context"
	"crypto/rand"
	"io"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/bench/internal/goecho"
	wruntime "github.com/wasmcp/wasmcp/runtime"
)

// guestState is the per-call state of the minimal wasmcp host module below.
type guestState struct {
	in  []byte
	pos int
	out []byte
}

type guestKey struct{}

// guestHost instantiates a minimal "wasmcp" host module (the ABI's six
// imports, no limits, no grants) in rt: enough to call an echo plugin
// without wasmcp's runtime, so that the engine's own cost per call can be
// told apart from everything wasmcp adds.
func guestHost(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	st := func(ctx context.Context) *guestState { return ctx.Value(guestKey{}).(*guestState) }
	fn := func(f api.GoModuleFunc, params, results []api.ValueType) (api.GoModuleFunc, []api.ValueType, []api.ValueType) {
		return f, params, results
	}
	b := rt.NewHostModuleBuilder("wasmcp")
	add := func(name string, f api.GoModuleFunc, params, results []api.ValueType) {
		b.NewFunctionBuilder().WithGoModuleFunction(fn(f, params, results)).Export(name)
	}
	add("input_len", func(ctx context.Context, m api.Module, s []uint64) {
		s[0] = uint64(len(st(ctx).in))
	}, nil, []api.ValueType{i32})
	add("input_read", func(ctx context.Context, m api.Module, s []uint64) {
		g := st(ctx)
		n := copy(must(m.Memory().Read(uint32(s[0]), uint32(s[1]))), g.in[g.pos:])
		g.pos += n
		s[0] = uint64(n)
	}, []api.ValueType{i32, i32}, []api.ValueType{i32})
	add("output_write", func(ctx context.Context, m api.Module, s []uint64) {
		g := st(ctx)
		g.out = append(g.out, must(m.Memory().Read(uint32(s[0]), uint32(s[1])))...)
	}, []api.ValueType{i32, i32}, nil)
	add("log", func(ctx context.Context, m api.Module, s []uint64) {}, []api.ValueType{i32, i32, i32}, nil)
	add("call", func(ctx context.Context, m api.Module, s []uint64) { s[0] = uint64(^uint32(0)) }, // -1: denied
		[]api.ValueType{i32, i32, i32, i32}, []api.ValueType{i32})
	add("result_read", func(ctx context.Context, m api.Module, s []uint64) { s[0] = 0 },
		[]api.ValueType{i32, i32}, []api.ValueType{i32})
	_, err := b.Instantiate(ctx)
	return err
}

func must(b []byte, ok bool) []byte {
	if !ok {
		panic("bad guest memory range")
	}
	return b
}

// echoEnvelope is the request envelope wasmcp hands a plugin for the
// benchmark's tools/call (ABI §3).
var echoEnvelope = []byte(`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"bench-1"}},"context":{"protocolVersion":"2025-11-25","clientCapabilities":{}}}`)

// BenchmarkGuestCall measures one echo call on a live plugin instance,
// without MCP or transport, three ways:
//
//   - wazero: straight through wazero with a minimal host module, the
//     floor (guest code, one export call, no way to stop a runaway guest);
//   - closeondone: the same with WithCloseOnContextDone(true), which wasmcp
//     used to stop guests at their deadline until it switched to
//     compile-time instrumentation (every loop header exits to Go);
//   - runtime: wasmcp's runtime.(*Pool).Call, what the server does per
//     call (instrumented interrupt checks, limits, pool, per-call deadline).
//
// sleeps/op counts guest sleeps (poll_oneoff), capped at 10 ms each as in
// wasmcp's sandbox. go/native runs the Go plugin's handler compiled
// natively (the SDK's HandleWith), the cost of its work without Wasm.
func BenchmarkGuestCall(b *testing.B) {
	b.Run("go/native", benchGoNative)
	parent := b
	for _, plugin := range []struct{ name, path string }{
		{"c", "plugins/cecho/cecho.wasm"},
		{"go", "plugins/goecho/goecho.wasm"},
	} {
		for _, how := range []string{"wazero", "closeondone", "runtime"} {
			var g *guestRig
			b.Run(plugin.name+"/"+how, func(b *testing.B) {
				if g == nil {
					if how == "runtime" {
						g = newRuntimeRig(b, plugin.path)
					} else {
						g = newGuestRig(b, plugin.path, how == "closeondone")
					}
					parent.Cleanup(g.close)
				}
				g.run(b)
			})
		}
	}
}

// nopHost is a runtime.Host that logs nothing and denies every host call.
type nopHost struct{}

func (nopHost) Log(context.Context, int32, []byte) {}
func (nopHost) Call(context.Context, string, []byte) ([]byte, int32) {
	return nil, -1
}

// newRuntimeRig calls the plugin through a wasmcp runtime pool with default
// limits, as the server does.
func newRuntimeRig(tb testing.TB, path string) *guestRig {
	ctx := context.Background()
	wasm, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	e, err := wruntime.NewEngine(ctx, wruntime.Config{CacheDir: cacheDir})
	if err != nil {
		tb.Fatal(err)
	}
	g := &guestRig{close: func() { e.Close(ctx) }}
	m, err := e.Compile(ctx, "echo", wasm)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := m.NewPool(wruntime.Limits{}, wruntime.Sandbox{Output: io.Discard})
	if err != nil {
		tb.Fatal(err)
	}
	g.call = func(tb testing.TB) {
		status, out, err := p.Call(ctx, echoEnvelope, nopHost{}, nil)
		if err != nil || status != 0 {
			tb.Fatalf("call: status %d, %v: %s", status, err, out)
		}
	}
	g.call(tb)
	return g
}

// guestRig is one live instance of a plugin, kept across the b.N steps of
// one benchmark.
type guestRig struct {
	call   func(testing.TB)
	sleeps atomic.Int64
	close  func()
}

func newGuestRig(tb testing.TB, path string, interruptible bool) *guestRig {
	ctx := context.Background()
	wasm, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	cache, err := wazero.NewCompilationCacheWithDir(cacheDir)
	if err != nil {
		tb.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().
		WithCompilationCache(cache).WithCloseOnContextDone(interruptible))
	g := &guestRig{close: func() { rt.Close(ctx) }}
	wasi_snapshot_preview1.MustInstantiate(ctx, rt)
	if err := guestHost(ctx, rt); err != nil {
		tb.Fatal(err)
	}
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		tb.Fatal(err)
	}
	mc := wazero.NewModuleConfig().WithName("").WithStartFunctions("_initialize").
		WithRandSource(rand.Reader).WithSysWalltime().WithSysNanotime().
		WithNanosleep(func(ns int64) {
			g.sleeps.Add(1)
			time.Sleep(min(time.Duration(ns), 10*time.Millisecond))
		})
	st := &guestState{}
	gctx := context.WithValue(ctx, guestKey{}, st)
	mod, err := rt.InstantiateModule(gctx, cm, mc)
	if err != nil {
		tb.Fatal(err)
	}
	fn := mod.ExportedFunction("wasmcp_call")
	stack := make([]uint64, 1)
	g.call = func(tb testing.TB) {
		st.in, st.pos, st.out = echoEnvelope, 0, st.out[:0]
		cctx, cancel := context.WithTimeout(gctx, 10*time.Second)
		err := fn.CallWithStack(cctx, stack)
		cancel()
		if err != nil || stack[0] != 0 {
			tb.Fatalf("call: status %d, %v: %s", stack[0], err, st.out)
		}
	}
	g.call(tb)
	return g
}

func (g *guestRig) run(b *testing.B) {
	g.sleeps.Store(0)
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		g.call(b)
	}
	b.StopTimer()
	reportCPU(b, cpu0)
	b.ReportMetric(float64(g.sleeps.Load())/float64(b.N), "sleeps/op")
}

// benchGoNative runs the goecho plugin's handler natively through the Go
// SDK's dispatcher.
func benchGoNative(b *testing.B) {
	p := goecho.New()
	if status, out := p.HandleWith(nil, echoEnvelope); status != 0 {
		b.Fatalf("status %d: %s", status, out)
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for range b.N {
		p.HandleWith(nil, echoEnvelope)
	}
	b.StopTimer()
	reportCPU(b, cpu0)
}
