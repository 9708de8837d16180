package instrument

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkInstrument is the rewriting cost Compile adds (before wazero
// decodes, validates and compiles or loads from the cache): the Go test
// plugin (3.7 MB) and the WAT guest.
func BenchmarkInstrument(b *testing.B) {
	for _, fx := range []struct{ name, path string }{
		{"go", "../../testdata/goplugin/goplugin.wasm"},
		{"wat", "../../testdata/guest.wasm"},
	} {
		b.Run(fx.name, func(b *testing.B) {
			wasm, err := os.ReadFile(filepath.FromSlash(fx.path))
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(wasm)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Instrument(wasm, Limits{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkOverhead is the run-time cost of the checks: the same calls on
// the original module and on the instrumented one (same runtime, no
// CloseOnContextDone): a counting loop (a check per iteration) and
// recursive Fibonacci (a check per call).
func BenchmarkOverhead(b *testing.B) {
	orig := read(b, "loops.wasm")
	inst, _, err := Instrument(orig, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []call{{fn: "sum", args: []uint64{10_000_000}}, {fn: "fib", args: []uint64{27}}} {
		for _, v := range []struct {
			name string
			wasm []byte
		}{{"original", orig}, {"instrumented", inst}} {
			b.Run(c.fn+"/"+v.name, func(b *testing.B) {
				mod := instantiate(b, newRuntime(b), v.wasm)
				for b.Loop() {
					if got := run(mod, c); got.err != "" {
						b.Fatal(got.err)
					}
				}
			})
		}
	}
}

// BenchmarkBulk measures bulk instructions on the instrumented module (MB/s
// is bytes, or table entries, per second), to choose MemoryShift and
// TableShift: Refill<<shift of them should take a few hundred
// microseconds at most.
func BenchmarkBulk(b *testing.B) {
	inst, _, err := Instrument(read(b, "bulkbench.wasm"), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	mod := instantiate(b, newRuntime(b), inst)
	for _, fn := range []string{"fill", "copy", "table_fill", "table_copy"} {
		sizes := []uint64{4 << 10, 1 << 20, 8 << 20} // bytes
		if strings.HasPrefix(fn, "table") {
			sizes = []uint64{4 << 10, 256 << 10} // entries
		}
		for _, size := range sizes {
			const n = 16
			b.Run(fmt.Sprintf("%s/%d", fn, size), func(b *testing.B) {
				b.SetBytes(int64(n * size))
				for b.Loop() {
					if got := run(mod, call{fn: fn, args: []uint64{n, size}}); got.err != "" {
						b.Fatal(got.err)
					}
				}
			})
		}
	}
}
