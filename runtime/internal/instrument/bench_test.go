package instrument

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// BenchmarkPeriod measures how long the slowest code the fuel counts
// (dependent loads that miss the caches and the TLB, 3 bytes each; see
// chase.wat) runs between two exits to Go: the longest a stop-the-world
// phase of the garbage collector waits for a guest, and the granularity of
// the scheduler's probes (deadline, yields, slice). It reports the time
// per period of Refill bytes and per byte of code.
func BenchmarkPeriod(b *testing.B) {
	inst, _, err := Instrument(read(b, "chase.wasm"), Limits{})
	if err != nil {
		b.Fatal(err)
	}
	mod := instantiate(b, newRuntime(b), inst)
	_, fuel := globals(b, mod)
	const line = 64 // bytes between pointers: every load a new cache line
	mem := make([]byte, mod.Memory().Size())
	perm := rand.Perm(len(mem) / line)
	for i, from := range perm {
		binary.LittleEndian.PutUint32(mem[from*line:], uint32(perm[(i+1)%len(perm)]*line))
	}
	mod.Memory().Write(0, mem)
	charge := func(n uint64) int64 { // the fuel n iterations take
		fuel.Set(Refill)
		if got := run(mod, call{fn: "chase", args: []uint64{0, n}}); got.err != "" {
			b.Fatal(got.err)
		}
		return Refill - int64(int32(fuel.Get()))
	}
	perIter := charge(2) - charge(1)
	const n = 100
	p := uint64(0) // each call goes on along the cycle: no line is read twice soon
	start := time.Now()
	for b.Loop() {
		got := run(mod, call{fn: "chase", args: []uint64{p, n}})
		if got.err != "" {
			b.Fatal(got.err)
		}
		p = got.results[0]
	}
	perByte := float64(time.Since(start).Nanoseconds()) / float64(b.N*n) / float64(perIter)
	b.ReportMetric(perByte, "ns/byte")
	b.ReportMetric(perByte*Refill/1e6, "ms/period")
}
