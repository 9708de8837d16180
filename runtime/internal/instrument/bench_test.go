package instrument

import (
	"os"
	"path/filepath"
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
				if _, _, err := Instrument(wasm); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
