package runtime

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Benchmarks of the hot paths. Compile: "cold" is a new engine over an
// empty cache directory (full compilation and cache write), "warm" a new
// engine over a populated one (what a restarted server sees).

func benchCompile(b *testing.B, path string, warm bool) {
	wasm, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	compileIn := func(dir string) {
		e, err := NewEngine(ctx, Config{CacheDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Compile(ctx, path, wasm); err != nil {
			b.Fatal(err)
		}
		_ = e.Close(ctx)
	}
	dir := b.TempDir()
	if warm {
		compileIn(dir)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		d := dir
		if !warm {
			d = filepath.Join(dir, "cold", string(rune('a'+i%26)), filepath.Base(b.TempDir()))
		}
		compileIn(d)
	}
}

func BenchmarkCompile(b *testing.B) {
	for _, fx := range []struct{ name, path string }{{"go", goPlugin}, {"wat", watGuest}} {
		b.Run(fx.name+"/cold", func(b *testing.B) { benchCompile(b, fx.path, false) })
		b.Run(fx.name+"/warm", func(b *testing.B) { benchCompile(b, fx.path, true) })
	}
}

func BenchmarkInstantiate(b *testing.B) {
	for _, fx := range []struct{ name, path string }{{"go", goPlugin}, {"wat", watGuest}} {
		b.Run(fx.name, func(b *testing.B) {
			p := newPool(b, fx.path, Limits{}, Sandbox{})
			for b.Loop() {
				inst, err := p.newInstance(context.Background(), nil)
				if err != nil {
					b.Fatal(err)
				}
				_ = inst.mod.Close(context.Background())
			}
		})
	}
}

// BenchmarkCall is one request round trip on a warm instance: the Go
// plugin decodes the envelope and echoes its params; the WAT plugin copies
// its input to its output (a C-like plugin without JSON work).
func BenchmarkCall(b *testing.B) {
	for _, fx := range []struct{ name, path, input string }{
		{"go", goPlugin, `{"method":"echo","params":{"text":"hello"}}`},
		{"wat", watGuest, `e{"method":"echo","params":{"text":"hello"}}`},
	} {
		b.Run(fx.name, func(b *testing.B) {
			p := newPool(b, fx.path, Limits{}, Sandbox{})
			in := []byte(fx.input)
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fx.name+"/parallel", func(b *testing.B) {
			p := newPool(b, fx.path, Limits{Instances: 4, MaxQueue: 64}, Sandbox{})
			in := []byte(fx.input)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCPU is CPU-bound guest work, where the cost of interruption
// checks in loops shows: a WAT counting loop of 10M iterations and a Go
// plugin filling and hashing 1 MiB with crypto/sha256.
func BenchmarkCPU(b *testing.B) {
	for _, fx := range []struct{ name, path, input string }{
		{"wat/loop10M", watGuest, "n" + le(10_000_000, 0, 0, 0)[:4]},
		{"go/sha256-1MiB", goPlugin, `{"method":"sha256","params":1048576}`},
	} {
		b.Run(fx.name, func(b *testing.B) {
			p := newPool(b, fx.path, Limits{Timeout: time.Minute}, Sandbox{})
			in := []byte(fx.input)
			for b.Loop() {
				if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// moduleOn compiles the fixture at path for one interruption mode:
// "instrumented" (what Compile does), "closeondone" (the fallback runtime,
// as every module ran before instrumentation) or "none" (a runtime without
// any interruption: the upper bound, never used for plugins).
func moduleOn(b *testing.B, path, mode string) *Module {
	if mode == "instrumented" {
		return fixture(b, path)
	}
	ctx := context.Background()
	wasm, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		b.Fatal(err)
	}
	m := &Module{e: testEngine, name: path, size: len(wasm), maxMem: -1, pools: map[*Pool]struct{}{}}
	if mode == "closeondone" {
		m.rt, err = testEngine.safeRuntime(ctx)
	} else {
		m.rt, err = testEngine.newRuntime(ctx, false)
		b.Cleanup(func() { _ = m.rt.Close(ctx) })
	}
	if err != nil {
		b.Fatal(err)
	}
	if m.cm, err = m.rt.CompileModule(ctx, wasm); err != nil {
		b.Fatal(err)
	}
	if err := m.validate(); err != nil {
		b.Fatal(err)
	}
	return m
}

// BenchmarkModes compares the interruption modes (see moduleOn) on a call
// round trip and on CPU-bound work, in one binary.
func BenchmarkModes(b *testing.B) {
	for _, fx := range []struct{ name, path, input string }{
		{"call/go", goPlugin, `{"method":"echo","params":{"text":"hello"}}`},
		{"call/wat", watGuest, `e{"method":"echo","params":{"text":"hello"}}`},
		{"cpu/wat-loop10M", watGuest, "n" + le(10_000_000, 0, 0, 0)[:4]},
		{"cpu/go-sha256-1MiB", goPlugin, `{"method":"sha256","params":1048576}`},
	} {
		for _, mode := range []string{"instrumented", "closeondone", "none"} {
			b.Run(fx.name+"/"+mode, func(b *testing.B) {
				p, err := moduleOn(b, fx.path, mode).NewPool(Limits{Timeout: time.Minute}, Sandbox{})
				if err != nil {
					b.Fatal(err)
				}
				defer p.Close(context.Background())
				in := []byte(fx.input)
				if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for b.Loop() {
					if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
