package component

import (
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// TestInstrumentedCorpus runs the corpus components with their core
// modules instrumented as the runtime instruments plugins (Host.Prepare):
// the main and adapter modules wit-component links must survive it. The
// instrumenter refuses a module without a memory (it exits to Go through
// memory.grow), which wit-component's shim and fixup modules are: they
// are left as they are here; the runtime gives them an empty memory and
// instruments them too (see runtime/component.go).
func TestInstrumentedCorpus(t *testing.T) {
	ctx, rt := newRuntime(t)
	for _, tc := range []struct {
		file, name string
		args       []any
		want       any
	}{
		{"c-text", "greet", []any{"x"}, "Hello, x!"},
		{"rust-shapes", "reverse", []any{"abc"}, "cba"},
	} {
		c := load(t, "../../testdata/components/"+tc.file+".wasm")
		var calls []string
		h := stubHost(c, &calls)
		instrumented := 0
		h.Prepare = func(b []byte) ([]byte, error) {
			out, _, err := instrument.Instrument(b, instrument.Limits{})
			if err != nil && strings.Contains(err.Error(), "module has no memory") {
				return b, nil
			}
			instrumented++
			return out, err
		}
		cc, err := Compile(ctx, rt, c, h)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		defer cc.Close(ctx)
		in, err := cc.Instantiate(ctx)
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		defer in.Close(ctx)
		if got, err := in.Call(ctx, tc.name, tc.args...); err != nil || got != tc.want {
			t.Fatalf("%s %s: %v, %v", tc.file, tc.name, got, err)
		}
		if instrumented < 2 {
			t.Fatalf("%s: %d modules instrumented, want the main one and the adapter", tc.file, instrumented)
		}
	}
}
