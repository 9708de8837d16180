package instrument

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// fuzzLimits are small, so that inputs reach them.
var fuzzLimits = Limits{TableElements: 100}

// FuzzInstrument: Instrument never panics; on error it returns no output;
// and when the input is a module wazero accepts, so is the output, which
// exports the interrupt flag. The seed corpus (testdata/fuzz) holds the
// fixtures and small modules from the repository.
func FuzzInstrument(f *testing.F) {
	for _, fx := range fixtures {
		f.Add(read(f, fx.file))
	}
	f.Add(withBody(0, 0x03, 0x40, 0x0b, 0x0b))
	// DWARF that debug/dwarf reads (a line table rebuilt by appendDWARF),
	// for the fuzzer to corrupt.
	f.Add(append(withBody(0, 0x03, 0x40, 0x0b, 0x0b), appendDWARF(nil, []lineRow{{addr: 2, file: "a.c", line: 3, col: 1}, {addr: 4, file: "b.c", line: 1}}, 7)...))
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(api.CoreFeaturesV2))
	f.Cleanup(func() { _ = rt.Close(ctx) })
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, _, err := Instrument(wasm, fuzzLimits)
		if err != nil {
			if out != nil {
				t.Fatalf("output with error %v", err)
			}
			return
		}
		cm, err := rt.CompileModule(ctx, wasm)
		if err != nil {
			return
		}
		_ = cm.Close(ctx)
		cm, err = rt.CompileModule(ctx, out)
		if err != nil {
			t.Fatalf("input compiles, output does not: %v", err)
		}
		_ = cm.Close(ctx)
		if m, err := scan(out, Limits{}); err != nil || m.reserved == "" {
			t.Fatalf("output does not export %s: %v", GlobalName, err)
		}
	})
}
