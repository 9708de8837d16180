package scaffold

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/runtime"
)

// The benchmarks compare the languages on the same plugin: the scaffold's
// greet tool built with each SDK (plus the hand-written WAT ping), so the
// numbers measure the SDK and toolchain, not the tool. docs/languages.md
// reports their medians:
//
//	go test -run '^$' -bench . -count 6 ./internal/scaffold/

var (
	benchOnce  sync.Once
	benchWasm  map[string][]byte
	benchError error
)

// benchModules builds the greet plugin in every language whose toolchain is
// installed (once per process) and returns the .wasm bytes by language.
func benchModules(b *testing.B) map[string][]byte {
	b.Helper()
	benchOnce.Do(func() {
		benchWasm = map[string][]byte{}
		root, err := FindSDKRoot(".")
		if err != nil {
			benchError = err
			return
		}
		tmp, err := os.MkdirTemp("", "wasmcp-bench-")
		if err != nil {
			benchError = err
			return
		}
		defer os.RemoveAll(tmp)
		for _, lang := range Languages() {
			missing := false
			for _, tool := range toolchain[lang] {
				if _, err := exec.LookPath(tool); err != nil {
					missing = true
				}
			}
			if missing || missingLibrary(lang) != "" {
				continue
			}
			dir := filepath.Join(tmp, lang)
			if err := Write(dir, lang, "greet", Options{SDKRoot: root}); err != nil {
				benchError = err
				return
			}
			if lang == "assemblyscript" {
				cache := filepath.Join(root, ".cache", "npm", "node_modules")
				if _, err := os.Stat(cache); err == nil {
					_ = os.Symlink(cache, filepath.Join(dir, "node_modules"))
				}
			}
			cmd := exec.Command("./build.sh")
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				benchError = &buildError{lang, string(out), err}
				return
			}
			wasm, err := os.ReadFile(filepath.Join(dir, "greet.wasm"))
			if err != nil {
				benchError = err
				return
			}
			benchWasm[lang] = wasm
		}
		if wasm, err := os.ReadFile(filepath.Join(root, "examples", "wat-ping", "wat-ping.wasm")); err == nil {
			benchWasm["wat"] = wasm
		}
	})
	if benchError != nil {
		b.Fatal(benchError)
	}
	return benchWasm
}

type buildError struct {
	lang, out string
	err       error
}

func (e *buildError) Error() string { return e.lang + ": " + e.err.Error() + "\n" + e.out }

var benchLangs = []string{"c", "rust", "assemblyscript", "go", "wat"}

// request is the envelope each benchmark call sends: greet for the SDK
// plugins, ping for WAT.
func request(lang string) []byte {
	if lang == "wat" {
		return []byte(`{"method":"tools/call","params":{"name":"ping","arguments":{}},"context":{}}`)
	}
	return []byte(`{"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}},"context":{"protocolVersion":"2025-11-25"}}`)
}

// BenchmarkColdCompile: a fresh engine without the on-disk cache compiles
// the module (what a server pays for a new plugin).
func BenchmarkColdCompile(b *testing.B) {
	mods := benchModules(b)
	for _, lang := range benchLangs {
		wasm, ok := mods[lang]
		if !ok {
			continue
		}
		b.Run(lang, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				e, err := runtime.NewEngine(context.Background(), runtime.Config{NoCache: true})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if _, err := e.Compile(context.Background(), lang, wasm); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				_ = e.Close(context.Background())
				b.StartTimer()
			}
			b.ReportMetric(float64(len(wasm)), "wasm-bytes")
		})
	}
}

// BenchmarkCall: one tools/call on a warm pooled instance.
func BenchmarkCall(b *testing.B) {
	compiledForEachLang(b, func(b *testing.B, lang string, m *runtime.Module) {
		p, err := m.NewPool(runtime.Limits{Instances: 1}, runtime.Sandbox{})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Close(context.Background())
		req := request(lang)
		if status, out, err := p.Call(context.Background(), req, nopHost{}, nil); err != nil || status != 0 {
			b.Fatalf("%d %s %v", status, out, err)
		}
		for b.Loop() {
			if _, _, err := p.Call(context.Background(), req, nopHost{}, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkInstance: the first call on a new pool (instantiate, run the
// start function, call) as ns/op, and the memory each live instance holds
// (Go heap, which includes its linear memory) as B/instance, measured with
// 20 live instances.
func BenchmarkInstance(b *testing.B) {
	compiledForEachLang(b, func(b *testing.B, lang string, m *runtime.Module) {
		req := request(lang)
		perInstance := liveInstanceBytes(b, m, req, 20)
		for b.Loop() {
			p, err := m.NewPool(runtime.Limits{Instances: 1}, runtime.Sandbox{})
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := p.Call(context.Background(), req, nopHost{}, nil); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = p.Close(context.Background())
			b.StartTimer()
		}
		b.ReportMetric(perInstance, "B/instance")
	})
}

// compiledForEachLang runs bench as a sub-benchmark for each language whose
// module built, with the module compiled on an engine without a cache.
func compiledForEachLang(b *testing.B, bench func(b *testing.B, lang string, m *runtime.Module)) {
	mods := benchModules(b)
	e, err := runtime.NewEngine(context.Background(), runtime.Config{NoCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close(context.Background())
	for _, lang := range benchLangs {
		wasm, ok := mods[lang]
		if !ok {
			continue
		}
		b.Run(lang, func(b *testing.B) {
			m, err := e.Compile(context.Background(), lang, wasm)
			if err != nil {
				b.Fatal(err)
			}
			bench(b, lang, m)
		})
	}
}

// liveInstanceBytes returns the Go heap growth per live instance after one
// call each on n single-instance pools.
func liveInstanceBytes(b *testing.B, m *runtime.Module, req []byte, n int) float64 {
	b.Helper()
	pools := make([]*runtime.Pool, n)
	var before, after goruntime.MemStats
	goruntime.GC()
	goruntime.ReadMemStats(&before)
	for i := range pools {
		p, err := m.NewPool(runtime.Limits{Instances: 1}, runtime.Sandbox{})
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := p.Call(context.Background(), req, nopHost{}, nil); err != nil {
			b.Fatal(err)
		}
		pools[i] = p
	}
	goruntime.GC()
	goruntime.ReadMemStats(&after)
	for _, p := range pools {
		_ = p.Close(context.Background())
	}
	return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / float64(n)
}
