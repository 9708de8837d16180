package instrument

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// nestedLoops is a module whose one function nests n empty loops, groups
// times over.
func nestedLoops(n, groups int) []byte {
	body := []byte{0}
	for ; groups > 0; groups-- {
		for k := 0; k < n; k++ {
			body = append(body, 0x03, 0x40)
		}
		for k := 0; k < n; k++ {
			body = append(body, 0x0b)
		}
	}
	body = append(body, 0x0b)
	code := appendU32([]byte{1}, uint32(len(body)))
	return binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, append(code, body...)...))
}

// TestModuleLimits: a module past one of the Limits is refused with a
// *LimitError naming the value, the limit and its key; at the limit it
// passes.
func TestModuleLimits(t *testing.T) {
	empty := []byte{2, 0, 0x0b} // a body: size, no locals, end
	threeFuncs := binModule(sec(1, 1, 0x60, 0, 0), sec(3, 3, 0, 0, 0), sec(5, 1, 0, 1), sec(10, append(append(append([]byte{3}, empty...), empty...), empty...)...))
	threeGlobals := binModule(sec(5, 1, 0, 1), sec(6, 3, 0x7f, 0, 0x41, 0, 0x0b, 0x7f, 0, 0x41, 0, 0x0b, 0x7f, 0, 0x41, 0, 0x0b))
	segments := binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(9, 1, 1, 0, 1, 0), sec(12, 2),
		sec(10, append([]byte{1}, empty...)...), sec(11, 2, 1, 0, 1, 0))
	// br_table 3 targets, twice: 6 in the function.
	brTables := withBody(0, 0x02, 0x40, 0x41, 0, 0x0e, 3, 0, 0, 0, 0, 0x41, 0, 0x0e, 3, 0, 0, 0, 0, 0x0b, 0x0b)
	tests := []struct {
		name  string
		wasm  []byte
		lim   func(v uint32) Limits
		value uint64
		key   string
	}{
		{"module size", withBody(0, 0x0b), func(v uint32) Limits { return Limits{ModuleSize: uint64(v)} }, uint64(len(withBody(0, 0x0b))), "max_module_size"},
		{"functions", threeFuncs, func(v uint32) Limits { return Limits{Functions: v} }, 3, "max_functions"},
		{"types", binModule(sec(1, 3, 0x60, 0, 0, 0x60, 0, 0, 0x60, 0, 0), sec(5, 1, 0, 1)), func(v uint32) Limits { return Limits{Functions: v} }, 3, "max_functions"},
		{"exports", binModule(sec(5, 1, 0, 1), sec(7, 3, 1, 'a', 2, 0, 1, 'b', 2, 0, 1, 'c', 2, 0)), func(v uint32) Limits { return Limits{Functions: v} }, 3, "max_functions"},
		{"function size", withBody(1, 2, 0x7f, 0x01, 0x0b), func(v uint32) Limits { return Limits{FunctionSize: v} }, 5, "max_function_size"},
		{"locals", withBody(2, 2, 0x7f, 3, 0x7e, 0x0b), func(v uint32) Limits { return Limits{Locals: v} }, 5, "max_locals"},
		{"nesting", nestedLoops(3, 2), func(v uint32) Limits { return Limits{Nesting: v} }, 3, "max_nesting"},
		{"br_table targets", brTables, func(v uint32) Limits { return Limits{BrTable: v} }, 6, "max_br_table"},
		{"globals", threeGlobals, func(v uint32) Limits { return Limits{Globals: v} }, 3, "max_globals"},
		{"segments", segments, func(v uint32) Limits { return Limits{Segments: v} }, 3, "max_segments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := uint32(tt.value - 1)
			out, _, err := Instrument(tt.wasm, tt.lim(max))
			var le *LimitError
			if !errors.As(err, &le) || le.Key != tt.key || le.Value != tt.value || le.Max != uint64(max) || out != nil {
				t.Fatalf("err = %v (%+v), want a *LimitError of %s with value %d", err, le, tt.key, tt.value)
			}
			if want := fmt.Sprintf(": %d, over the limit of %d ([limits] %s)", tt.value, max, tt.key); !strings.Contains(err.Error(), want) {
				t.Errorf("message %q lacks %q", err, want)
			}
			if _, err := Bound(tt.wasm, tt.lim(max)); !errors.As(err, &le) {
				t.Errorf("Bound: %v", err)
			}
			if _, _, err := Instrument(tt.wasm, tt.lim(uint32(tt.value))); err != nil {
				t.Errorf("at the limit: %v", err)
			}
		})
	}
}

// FuzzLimits: under small limits, Instrument never panics; a module it
// accepts is accepted without limits too; every refusal for a limit names
// a value over the limit.
func FuzzLimits(f *testing.F) {
	for _, fx := range fixtures {
		f.Add(read(f, fx.file))
	}
	f.Add(nestedLoops(3, 2))
	f.Add(withBody(0, 0x02, 0x40, 0x41, 0, 0x0e, 3, 0, 0, 0, 0, 0x0b, 0x0b))
	lim := Limits{TableElements: 100, ModuleSize: 4096, Functions: 8, FunctionSize: 256, Locals: 8, Nesting: 4, BrTable: 4, Globals: 4, Segments: 4}
	f.Fuzz(func(t *testing.T, wasm []byte) {
		out, _, err := Instrument(wasm, lim)
		var le *LimitError
		switch {
		case errors.As(err, &le):
			if le.Value <= le.Max || le.Key == "" && le.What != "tables" {
				t.Fatalf("limit error %+v", le)
			}
		case err != nil:
			if out != nil {
				t.Fatalf("output with error %v", err)
			}
		default:
			if _, _, err := Instrument(wasm, Limits{}); err != nil {
				t.Fatalf("accepted with limits, refused without: %v", err)
			}
		}
	})
}

// BenchmarkCompileNested is wazero's compile time of a function of loops
// nested 1000 deep, four times over, original and instrumented: the
// compiler's time grows with the square of the depth, and each check
// multiplies its blocks.
func BenchmarkCompileNested(b *testing.B) {
	ctx := context.Background()
	orig := nestedLoops(1000, 4)
	inst, _, err := Instrument(orig, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range []struct {
		name string
		wasm []byte
	}{{"original", orig}, {"instrumented", inst}} {
		b.Run(v.name, func(b *testing.B) {
			for b.Loop() {
				rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(api.CoreFeaturesV2))
				if _, err := rt.CompileModule(ctx, v.wasm); err != nil {
					b.Fatal(err)
				}
				_ = rt.Close(ctx)
			}
		})
	}
}

// TestDeepLoops: loops nested deeper than DeepLoops are checked by a call
// of the charging function, which still stops a spinning innermost loop
// once the flag is set, and charges the fuel.
func TestDeepLoops(t *testing.T) {
	const depth = DeepLoops + 4
	body := []byte{0}
	for k := 0; k < depth; k++ {
		body = append(body, 0x03, 0x40)
	}
	body = append(body, 0x0c, 0x00) // br 0: the innermost loop, forever
	for k := 0; k < depth; k++ {
		body = append(body, 0x0b)
	}
	body = append(body, 0x0b)
	code := appendU32([]byte{1}, uint32(len(body)))
	wasm := binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1),
		sec(7, 1, 4, 's', 'p', 'i', 'n', 0, 0), sec(10, append(code, body...)...))
	out, info, err := Instrument(wasm, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Loops != depth {
		t.Errorf("info %+v", info)
	}
	c := newCheck(0, 1, 2, 3, 1)
	if n := strings.Count(string(out), string(c.deep)); n != depth-DeepLoops {
		t.Errorf("%d deep checks, want %d", n, depth-DeepLoops)
	}
	mod := instantiate(t, newRuntime(t), out)
	flag, fuel := globals(t, mod)
	flag.Set(1)
	fuel.Set(Refill)
	done := make(chan outcome, 1)
	go func() { done <- run(mod, call{fn: "spin"}) }()
	select {
	case got := <-done:
		if !strings.Contains(got.err, "unreachable") {
			t.Errorf("spin: %+v, want the flag's trap", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a deep loop was not stopped by the flag")
	}
}

// TestNameSectionBound: a name section over MaxNameSection is dropped;
// smaller ones are kept; and a second memory is unsupported.
func TestNameSectionBound(t *testing.T) {
	for _, size := range []int{16, MaxNameSection + 1} {
		in := binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, 1, 2, 0, 0x0b), custom("name", make([]byte, size)...))
		out, info, err := Instrument(in, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if kept := strings.Contains(string(out), "\x04name"); kept != (size <= MaxNameSection) || info.Dropped != map[bool]int{true: 0, false: 1}[kept] {
			t.Errorf("name section of %d bytes: kept %v, info %+v", size, kept, info)
		}
	}
	two := binModule(sec(2, 1, 1, 'a', 1, 'b', 2, 0, 1), sec(5, 1, 0, 1))
	if _, _, err := Instrument(two, Limits{}); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "2 memories") {
		t.Errorf("two memories: %v", err)
	}
}

// TestLinkedTables: an imported table cannot be bounded by
// max_table_elements, so Instrument refuses it when TableElements is
// set; InstrumentLinked, for a component's core module whose tables
// another one defines, leaves it as it is.
func TestLinkedTables(t *testing.T) {
	wasm := binModule(
		sec(2, 1, 1, 'm', 1, 't', 0x01, 0x70, 0x00, 0x01), // import "m" "t": a funcref table, minimum 1
		sec(5, 1, 0x00, 0x01),                             // one memory of one page
	)
	lim := Limits{TableElements: 10}
	if _, _, err := Instrument(wasm, lim); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Instrument = %v, want ErrUnsupported", err)
	}
	if _, _, err := Instrument(wasm, Limits{}); err != nil {
		t.Errorf("Instrument without a table limit = %v", err)
	}
	if _, _, err := InstrumentLinked(wasm, lim); err != nil {
		t.Errorf("InstrumentLinked = %v", err)
	}
}

// TestWithDefaults: zero fields take DefaultLimits, set ones are kept.
func TestWithDefaults(t *testing.T) {
	if got := WithDefaults(Limits{}); got != DefaultLimits() {
		t.Errorf("WithDefaults(Limits{}) = %+v, want %+v", got, DefaultLimits())
	}
	got := WithDefaults(Limits{Locals: 7, ModuleSize: 9, CompileTimeout: time.Second})
	want := DefaultLimits()
	want.Locals, want.ModuleSize, want.CompileTimeout = 7, 9, time.Second
	if got != want {
		t.Errorf("WithDefaults kept %+v, want %+v", got, want)
	}
}
