package instrument

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

type call struct {
	fn   string
	args []uint64
	want []uint64 // nil: only compare original and instrumented
}

// fixtures are the hand-written modules in testdata/ (built by
// testdata/build.sh) with calls to run on the original and the
// instrumented module, and the number of functions and loops.
var fixtures = []struct {
	file         string
	calls        []call
	funcs, loops int
}{
	{"loops.wasm", []call{
		{"sum", []uint64{10}, []uint64{55}},
		{"sum", []uint64{100000}, nil},
		{"pairs", []uint64{10}, []uint64{45}},
		{"states", []uint64{0}, nil},
		{"states", []uint64{0b1001110010}, nil},
		{"states", []uint64{0xffffffff}, nil},
		{"swapsum", []uint64{1, 2}, nil},
		{"pick", []uint64{0}, []uint64{api.EncodeI32(-3)}},
		{"pick", []uint64{2}, []uint64{0x303}},
		{"pick", []uint64{4}, []uint64{3}},
		{"fib", []uint64{20}, []uint64{6765}},
		{"indirect", []uint64{0, 10}, []uint64{55}},
		{"indirect", []uint64{1, 10}, []uint64{55}},
		{"indirect", []uint64{2, 10}, []uint64{20}},
		{"indirect", []uint64{3, 10}, nil}, // traps: out of the table
		{"globals", nil, nil},
		{"globals", nil, nil},
		{"mem", []uint64{5}, nil},
	}, 9, 7},
	{"simd.wasm", []call{{"simd", []uint64{1}, nil}, {"simd", []uint64{7}, nil}}, 1, 1},
	{"bulk.wasm", []call{
		{"bulk", nil, nil},
		{"bulk", nil, nil}, // traps: the data segment was dropped
		{"convert", []uint64{api.EncodeF64(-3.75)}, nil},
		{"convert", []uint64{api.EncodeF64(1e300)}, nil},
	}, 5, 1},
	{"reftypes.wasm", []call{{"refs", []uint64{0}, nil}, {"refs", []uint64{1}, nil}}, 2, 1},
	{"start.wasm", []call{{"ran", nil, []uint64{5}}}, 2, 1},
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// newRuntime returns a compiler runtime with the env module instantiated.
func newRuntime(t testing.TB) wazero.Runtime {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCoreFeatures(api.CoreFeaturesV2))
	t.Cleanup(func() { _ = rt.Close(ctx) })
	if _, err := rt.InstantiateWithConfig(ctx, read(t, "env.wasm"), wazero.NewModuleConfig().WithName("env")); err != nil {
		t.Fatal(err)
	}
	return rt
}

func instantiate(t testing.TB, rt wazero.Runtime, wasm []byte) api.Module {
	t.Helper()
	ctx := context.Background()
	cm, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithName(""))
	if err != nil {
		t.Fatalf("instantiate: %v", err)
	}
	return mod
}

type outcome struct {
	results []uint64
	err     string
}

func run(mod api.Module, c call) outcome {
	res, err := mod.ExportedFunction(c.fn).Call(context.Background(), c.args...)
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n") // drop the stack trace
		return outcome{err: msg}
	}
	return outcome{results: res}
}

// TestFixturesBehaveIdentically: every fixture instruments, validates, and
// gives the same results and traps as the original; with the flag set,
// every function traps.
func TestFixturesBehaveIdentically(t *testing.T) {
	for _, fx := range fixtures {
		t.Run(fx.file, func(t *testing.T) {
			orig := read(t, fx.file)
			out, info, err := Instrument(orig, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if info.Functions != fx.funcs || info.Loops != fx.loops {
				t.Errorf("info %+v, want %d functions and %d loops", info, fx.funcs, fx.loops)
			}
			om := instantiate(t, newRuntime(t), orig)
			im := instantiate(t, newRuntime(t), out)
			if info.Start {
				if _, err := im.ExportedFunction(StartName).Call(context.Background()); err != nil {
					t.Fatalf("%s: %v", StartName, err)
				}
			}
			for _, c := range fx.calls {
				want, got := run(om, c), run(im, c)
				if !slices.Equal(want.results, got.results) || want.err != got.err {
					t.Errorf("%s%v: instrumented %v %q, original %v %q", c.fn, c.args, got.results, got.err, want.results, want.err)
				}
				if c.want != nil && !slices.Equal(want.results, c.want) {
					t.Errorf("%s%v = %v %q, want %v", c.fn, c.args, want.results, want.err, c.want)
				}
			}
			flag, fuel := globals(t, im)
			flag.Set(1)
			fuel.Set(0)
			for _, c := range fx.calls {
				if got := run(im, c); got.err != "wasm error: unreachable" {
					t.Errorf("%s%v with the flag set: %v %q, want an unreachable trap", c.fn, c.args, got.results, got.err)
				}
				fuel.Set(0)
			}
		})
	}
}

// globals returns the flag and the fuel of an instrumented instance.
func globals(t testing.TB, mod api.Module) (flag, fuel api.MutableGlobal) {
	t.Helper()
	flag, ok := mod.ExportedGlobal(GlobalName).(api.MutableGlobal)
	if !ok || flag.Type() != api.ValueTypeI32 || flag.Get() != 0 {
		t.Fatalf("flag %v", mod.ExportedGlobal(GlobalName))
	}
	fuel, ok = mod.ExportedGlobal(FuelName).(api.MutableGlobal)
	if !ok || fuel.Type() != api.ValueTypeI32 {
		t.Fatalf("fuel %v", mod.ExportedGlobal(FuelName))
	}
	return flag, fuel
}

// instrumented returns an instance of testdata/name instrumented with the
// default limits, and its flag and fuel.
func instrumented(t testing.TB, name string) (mod api.Module, flag, fuel api.MutableGlobal) {
	t.Helper()
	out, _, err := Instrument(read(t, name), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	mod = instantiate(t, newRuntime(t), out)
	flag, fuel = globals(t, mod)
	return mod, flag, fuel
}

// TestFlagStopsWithinAPeriod: with only the flag set (as when the host's
// fuel store is lost), a loop stops once its fuel runs out, and the fuel
// is charged by code size.
func TestFlagStopsWithinAPeriod(t *testing.T) {
	mod, flag, fuel := instrumented(t, "loops.wasm")
	if got := run(mod, call{fn: "sum", args: []uint64{1000}}); got.err != "" {
		t.Fatal(got.err)
	}
	if left := int32(fuel.Get()); left >= Refill || left < Refill-1000*40 {
		t.Errorf("fuel %d after 1000 iterations from %d", left, Refill)
	}
	flag.Set(1)
	if got := run(mod, call{fn: "sum", args: []uint64{1 << 30}}); got.err != "wasm error: unreachable" {
		t.Errorf("sum with the flag set: %v %q", got.results, got.err)
	}
	if got := run(mod, call{fn: "fib", args: []uint64{40}}); got.err != "wasm error: unreachable" {
		t.Errorf("fib (recursion) with the flag set: %v %q", got.results, got.err)
	}
}

// TestStartSectionBecomesExport: the start function no longer runs at
// instantiation; the host calls the export instead.
func TestStartSectionBecomesExport(t *testing.T) {
	out, info, err := Instrument(read(t, "start.wasm"), Limits{})
	if err != nil || !info.Start {
		t.Fatalf("info %+v, %v", info, err)
	}
	mod := instantiate(t, newRuntime(t), out)
	if got := run(mod, call{fn: "ran"}); got.err != "" || got.results[0] != 0 {
		t.Errorf("ran = %v %q before the start export was called, want 0", got.results, got.err)
	}
	flag, fuel := globals(t, mod)
	flag.Set(1)
	fuel.Set(0)
	if got := run(mod, call{fn: StartName}); got.err != "wasm error: unreachable" {
		t.Errorf("start with the flag set: %q", got.err)
	}
}

// repoRoot returns the repository root, or skips without git.
func repoRoot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("git: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestRepoModules: every .wasm in the repository (test fixtures, examples,
// SDK fixtures) instruments, and the result compiles.
func TestRepoModules(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "*.wasm").Output()
	if err != nil {
		t.Fatal(err)
	}
	files := strings.Fields(string(out))
	if len(files) == 0 {
		t.Fatal("no .wasm files in the repository")
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCoreFeatures(api.CoreFeaturesV2))
	defer rt.Close(ctx)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			wasm, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			_, origErr := rt.CompileModule(ctx, wasm)
			inst, info, err := Instrument(wasm, Limits{})
			if err != nil {
				if origErr == nil && !strings.Contains(err.Error(), "no memory") && !errors.Is(err, ErrReserved) {
					t.Fatalf("instrument: %v", err)
				}
				t.Logf("not instrumented: %v", err) // an invalid fixture, one without memory, the fallback fixture
				return
			}
			if _, err := rt.CompileModule(ctx, inst); (err == nil) != (origErr == nil) {
				t.Fatalf("instrumented: %v; original: %v", err, origErr)
			}
			t.Logf("%d → %d bytes, %+v", len(wasm), len(inst), info)
		})
	}
}

// binModule builds a binary module from sections (id, payload).
func binModule(secs ...[]byte) []byte {
	b := []byte("\x00asm\x01\x00\x00\x00")
	for _, s := range secs {
		b = append(b, s[0])
		b = appendU32(b, uint32(len(s)-1))
		b = append(b, s[1:]...)
	}
	return b
}

func sec(id byte, payload ...byte) []byte { return append([]byte{id}, payload...) }

func custom(name string, data ...byte) []byte {
	p := appendU32(nil, uint32(len(name)))
	p = append(p, name...)
	return sec(0, append(p, data...)...)
}

// A function type () -> (), one function with the given body (locals
// included, without size).
func withBody(body ...byte) []byte {
	code := appendU32([]byte{1}, uint32(len(body)))
	return binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, append(code, body...)...))
}

func TestErrors(t *testing.T) {
	exportNamed := func(name string) []byte {
		p := []byte{1}
		p = appendU32(p, uint32(len(name)))
		p = append(p, name...)
		p = append(p, 0, 0)
		return binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(7, p...), sec(10, 1, 2, 0, 0x0b))
	}
	tests := []struct {
		name string
		wasm []byte
		want error
		msg  string
	}{
		{"empty", nil, ErrMalformed, "not a wasm binary"},
		{"version 2", []byte("\x00asm\x02\x00\x00\x00"), ErrUnsupported, "version"},
		{"section past the end", []byte("\x00asm\x01\x00\x00\x00\x01\x05\x00"), ErrMalformed, "past the end"},
		{"section out of order", binModule(sec(3, 0), sec(1, 0)), ErrMalformed, "out of order"},
		{"section repeated", binModule(sec(1, 0), sec(1, 0)), ErrMalformed, "out of order"},
		{"unknown section", binModule(sec(13, 0)), ErrUnsupported, "section id 13"},
		{"reserved global export", exportNamed(GlobalName), ErrReserved, GlobalName},
		{"reserved start export", exportNamed(StartName), ErrReserved, StartName},
		{"reserved fuel export", exportNamed(FuelName), ErrReserved, FuelName},
		{"reserved stack export", exportNamed(StackName), ErrReserved, StackName},
		{"atomics", withBody(0, 0xfe, 0x03, 0x0b), ErrUnsupported, "opcode 0xfe"},
		{"tail call", withBody(0, 0x12, 0, 0x0b), ErrUnsupported, "opcode 0x12"},
		{"exceptions", withBody(0, 0x06, 0x40, 0x0b), ErrUnsupported, "opcode 0x06"},
		{"misc 18", withBody(0, 0xfc, 18, 0x0b), ErrUnsupported, "0xfc 18"},
		{"relaxed simd", withBody(0, 0xfd, 0x80, 0x02, 0x0b), ErrUnsupported, "0xfd 256"},
		{"unassigned simd", withBody(0, 0xfd, 0x9a, 0x01, 0x0b), ErrUnsupported, "0xfd 154"},
		{"multi-memory memarg", withBody(0, 0x41, 0, 0x28, 0x40, 0, 0, 0x1a, 0x0b), ErrUnsupported, "multiple memories"},
		{"truncated immediate", withBody(0, 0x41, 0x80), ErrMalformed, "unexpected end"},
		{"overlong u32", withBody(0, 0x0c, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, 0x0b), ErrMalformed, "too long"},
		{"u32 over 32 bits", withBody(0, 0x0c, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x0b), ErrMalformed, "out of range"},
		{"body past the end", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, 1, 9, 0, 0x0b)), ErrMalformed, "past the end"},
		{"trailing code", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, 1, 2, 0, 0x0b, 0)), ErrMalformed, "trailing"},
		{"no memory", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(10, 1, 2, 0, 0x0b)), ErrUnsupported, "no memory"},
		{"import tag", binModule(sec(2, 1, 1, 'a', 1, 'b', 4, 0, 0)), ErrUnsupported, "import kind"},
		{"memory64 import", binModule(sec(2, 1, 1, 'a', 1, 'b', 2, 4, 1)), ErrUnsupported, "limits flags"},

		// Indices past the original module's index spaces, which the
		// added globals and locals would make valid (see index.go).
		{"global.get of the flag", withBody(0, 0x23, 0, 0x1a, 0x0b), ErrMalformed, "global index 0 out of range"},
		{"global.set of the fuel", withBody(0, 0x03, 0x40, 0x41, 0x7f, 0x24, 1, 0x0c, 0, 0x0b, 0x0b), ErrMalformed, "global index 1 out of range"},
		{"local past the locals", withBody(1, 1, 0x7f, 0x20, 1, 0x1a, 0x0b), ErrMalformed, "local index 1 out of range"},
		{"label past the blocks", withBody(0, 0x0c, 1, 0x0b), ErrMalformed, "label index 1 out of range"},
		{"call past the functions", withBody(0, 0x10, 1, 0x0b), ErrMalformed, "function index 1 out of range"},
		{"call_indirect without a table", withBody(0, 0x41, 0, 0x11, 0, 0, 0x0b), ErrMalformed, "table index 0 out of range"},
		{"block type past the types", withBody(0, 0x02, 0x01, 0x0b, 0x0b), ErrMalformed, "type index 1 out of range"},
		{"memory.init without data count", withBody(0, 0x41, 0, 0x41, 0, 0x41, 0, 0xfc, 8, 0, 0, 0x0b), ErrMalformed, "data count"},
		{"table.fill past the tables", withBody(0, 0x41, 0, 0xd0, 0x70, 0x41, 0, 0xfc, 17, 0, 0x0b), ErrMalformed, "table index 0 out of range"},
		{"export of the fuel by index", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(7, 1, 1, 'g', 3, 1), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "global index 1 out of range"},
		{"global initialised from the flag", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(6, 1, 0x7f, 0, 0x23, 1, 0x0b), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "global index 1 out of range"},
		{"data offset from the fuel", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, 1, 2, 0, 0x0b), sec(11, 1, 0, 0x23, 1, 0x0b, 0)), ErrMalformed, "global index 1 out of range"},
		{"element segment past the functions", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(4, 1, 0x70, 0, 1), sec(5, 1, 0, 1), sec(9, 1, 0, 0x41, 0, 0x0b, 1, 5), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "function index 5 out of range"},
		{"start past the functions", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(8, 3), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "function index 3 out of range"},
		{"function of an unknown type", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 2), sec(5, 1, 0, 1), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "type index 2 out of range"},
		{"more bodies than functions", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), sec(10, 2, 2, 0, 0x0b, 2, 0, 0x0b)), ErrMalformed, "more bodies"},
		{"fewer bodies than functions", binModule(sec(1, 1, 0x60, 0, 0), sec(3, 2, 0, 0), sec(5, 1, 0, 1), sec(10, 1, 2, 0, 0x0b)), ErrMalformed, "1 bodies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Instrument(tt.wasm, Limits{})
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tt.want, tt.msg)
			}
			if out != nil {
				t.Errorf("output %x with an error", out)
			}
		})
	}
}

// TestSections: .debug_* sections are dropped, name and others kept; a
// module without global and export sections gets both, in order.
func TestSections(t *testing.T) {
	in := binModule(custom("first"), sec(1, 1, 0x60, 0, 0), sec(3, 1, 0), sec(5, 1, 0, 1), custom(".debug_info", 1, 2, 3),
		sec(10, 1, 6, 0, 0x03, 0x40, 0x01, 0x0b, 0x0b), custom(".debug_line"), custom("name", 1, 1, 0), custom("producers", 0))
	out, info, err := Instrument(in, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Dropped != 2 || info.Functions != 1 || info.Loops != 1 {
		t.Errorf("info %+v", info)
	}
	c := newCheck(0, 1, 2, 3, 1) // the slow path is function 1, of type 1; the charging function 2, of type 2
	// Charges: the entry pays for the code outside the loop (0x03 0x40 and
	// the last 0x0b: 3 bytes), the loop for its body (0x01 0x0b: 2 bytes).
	// The loop counts down a new local, index 0.
	body := append([]byte{1, 1, 0x7f}, c.append(nil, 3)...)
	body = append(body, 0x03, 0x40)
	body = c.local(0).append(body, 2)
	body = append(body, 0x01, 0x0b, 0x0b)
	// The four globals: the flag (0), the fuel (Refill), the yield switch
	// (0) and the stack budget (Stack), each a mutable i32.
	globals := append(appendS32([]byte{4, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41}, Refill), 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01, 0x41)
	globals = append(appendS32(globals, Stack), 0x0b)
	want := binModule(custom("first"), sec(1, 3, 0x60, 0, 0, 0x60, 0, 0, 0x60, 1, 0x7f, 0), sec(3, 3, 0, 1, 2), sec(5, 1, 0, 1),
		sec(6, globals...),
		sec(7, append(append(append(append(append(append(append(append([]byte{4, byte(len(GlobalName))}, GlobalName...), 3, 0, byte(len(FuelName))), FuelName...), 3, 1, byte(len(YieldName))), YieldName...), 3, 2, byte(len(StackName))), StackName...), 3, 3)...),
		sec(10, append(append(append(append(append([]byte{3, byte(len(body))}, body...), byte(len(c.slow))), c.slow...), byte(len(c.charge))), c.charge...)...),
		custom("name", 1, 1, 0), custom("producers", 0))
	if string(out) != string(want) {
		t.Errorf("got  %x\nwant %x", out, want)
	}
	rt := newRuntime(t)
	if _, err := rt.CompileModule(context.Background(), out); err != nil {
		t.Error(err)
	}
}

// TestDeterministic: the output depends on the input only (the compilation
// cache is keyed by it).
func TestDeterministic(t *testing.T) {
	for _, fx := range fixtures {
		a, _, _ := Instrument(read(t, fx.file), Limits{})
		b, _, _ := Instrument(read(t, fx.file), Limits{})
		if string(a) != string(b) {
			t.Errorf("%s: two different outputs", fx.file)
		}
	}
}

func ExampleInstrument() {
	wasm, _ := os.ReadFile("testdata/loops.wasm")
	out, info, err := Instrument(wasm, Limits{})
	fmt.Println(len(out) > len(wasm), info.Functions, info.Loops, err)
	// Output: true 9 7 <nil>
}

// TestCharges: each byte of code is charged to its innermost enclosing
// loop's check, or to the entry's outside loops.
func TestCharges(t *testing.T) {
	b := []byte{
		0x00,       // no locals
		0x02, 0x40, // block          entry
		0x03, 0x40, // loop A         entry
		0x01,       // nop            A
		0x03, 0x40, // loop B         A
		0x01, 0x01, // nop nop        B
		0x0b,             // end B          B
		0x01, 0x01, 0x01, // nops     A
		0x0b, // end A                A
		0x0b, // end block            entry
		0x01, // nop                  entry
		0x0b, // end                  entry
	}
	var info Info
	bd := body{end: len(b)}
	points, _, err := scanBody(nil, nil, b, &bd, &module{}, &info)
	if err != nil {
		t.Fatal(err)
	}
	want := []point{{at: 1, charge: 7}, {at: 5, charge: 7}, {at: 8, charge: 3}}
	if !slices.Equal(points, want) || bd.n != 3 || info.Loops != 2 {
		t.Errorf("points %v (n %d, loops %d), want %v", points, bd.n, info.Loops, want)
	}
	// Malformed nesting is an error, never a panic.
	for _, bad := range [][]byte{{0, 0x0b, 0x0b}, {0, 0x0b, 0x03, 0x40, 0x0b, 0x0b}} {
		bd := body{end: len(bad)}
		if _, _, err := scanBody(nil, nil, bad, &bd, &module{}, &info); !errors.Is(err, ErrMalformed) {
			t.Errorf("%x: %v", bad, err)
		}
	}
}

// TestBulkCharge: each bulk instruction costs the fuel its length shifted
// by MemoryShift or TableShift, on top of its function's code; and a
// length that takes the fuel below zero runs the slow path (the fuel is
// refilled).
func TestBulkCharge(t *testing.T) {
	inst, info, err := Instrument(read(t, "bulkcharge.wasm"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Functions != 8 {
		t.Errorf("info %+v", info)
	}
	mod := instantiate(t, newRuntime(t), inst)
	_, fuel := globals(t, mod)
	tests := []struct {
		fn    string
		n     uint32
		shift uint
	}{
		{"memory.fill", 4096, MemoryShift},
		{"memory.copy", 4096, MemoryShift},
		{"memory.init", 4096, MemoryShift},
		{"table.fill", 64, TableShift},
		{"table.copy", 64, TableShift},
		{"table.init", 64, TableShift},
		{"table.grow", 64, TableShift},
	}
	cost := func(fn string, n uint32) uint32 {
		t.Helper()
		fuel.Set(Refill)
		if got := run(mod, call{fn: fn, args: []uint64{uint64(n)}}); got.err != "" {
			t.Fatalf("%s(%d): %s", fn, n, got.err)
		}
		return Refill - uint32(fuel.Get())
	}
	for _, tt := range tests {
		t.Run(tt.fn, func(t *testing.T) {
			base, full := cost(tt.fn, 0), cost(tt.fn, tt.n)
			if want := tt.n >> tt.shift; full-base != want || want == 0 {
				t.Errorf("fuel: %d for length 0, %d for length %d; want a difference of %d", base, full, tt.n, want)
			}
		})
	}
	// A length worth more than the fuel left: the slow path refills it.
	fuel.Set(Refill)
	if got := run(mod, call{fn: "memory.fill", args: []uint64{65536}}); got.err != "" {
		t.Fatal(got.err)
	}
	fuel.Set(10)
	if got := run(mod, call{fn: "memory.fill", args: []uint64{65536}}); got.err != "" {
		t.Fatal(got.err)
	}
	if f := fuel.Get(); f != Refill {
		t.Errorf("fuel %d after the slow path, want %d", f, Refill)
	}
}

// TestBulkAfterCut: a bulk instruction's charge never wraps the fuel,
// even when a cut just before it has taken the fuel below zero without
// testing it (a cut pays for the rest of its loop's body): the largest
// length runs the slow path, whatever fuel the loop started with. A
// wrapped charge would leave about 2^31 of fuel, 8,192 periods of code
// without an exit to Go (no probe, no deadline, no preemption for GC).
func TestBulkAfterCut(t *testing.T) {
	mod, _, fuel := instrumented(t, "cutbulk.wasm")
	for _, at := range []uint32{0, 10, 500, 1000, 1105, 1200, Refill} {
		fuel.Set(uint64(at))
		if got := run(mod, call{fn: "grow", args: []uint64{math.MaxUint32}}); got.err != "" {
			t.Fatalf("fuel %d: %s", at, got.err)
		}
		if f := int32(fuel.Get()); f != Refill {
			t.Errorf("fuel %d before the loop, %d after table.grow of 2^32-1: want the slow path's %d", at, f, Refill)
		}
	}
}

// TestMemoryMaxRemoved: the declared maximum of the memory is removed
// (so that the scheduler's probe reaches the allocator) and reported.
func TestMemoryMaxRemoved(t *testing.T) {
	tests := []struct {
		name string
		mem  []byte // memory section payload
		want []byte
		max  int64
	}{
		{"min only", []byte{1, 0, 2}, []byte{1, 0, 2}, -1},
		{"min and max", []byte{1, 1, 2, 5}, []byte{1, 0, 2}, 5},
		{"max 0", []byte{1, 1, 0, 0}, []byte{1, 0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := Instrument(binModule(sec(5, tt.mem...)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if info.MemoryMax != tt.max {
				t.Errorf("MemoryMax %d, want %d", info.MemoryMax, tt.max)
			}
			if want := binModule(sec(5, tt.want...))[8:]; !strings.Contains(string(out), string(want)) {
				t.Errorf("output %x lacks memory section %x", out, want)
			}
		})
	}
}

// tablesModule is a module with the given tables (each a reference type
// and limits, as in the table section) and an export grow(n) that runs
// table.grow on table 0 and returns its result.
func tablesModule(tables ...[]byte) []byte {
	ts := appendU32(nil, uint32(len(tables)))
	for _, t := range tables {
		ts = append(ts, t...)
	}
	body := []byte{0, 0xd0, 0x70, 0x20, 0, 0xfc, 15, 0, 0x0b}
	return binModule(sec(1, 1, 0x60, 1, 0x7f, 1, 0x7f), sec(3, 1, 0), sec(4, ts...), sec(5, 1, 0, 1),
		sec(7, 1, 4, 'g', 'r', 'o', 'w', 0, 0), sec(10, append([]byte{1, byte(len(body))}, body...)...))
}

// TestTableLimits: the tables' maxima are rewritten so that together they
// stay within Limits.TableElements (table.grow past returns -1), and a
// module whose minimums exceed it, or with too many tables, is refused.
func TestTableLimits(t *testing.T) {
	const cap = 1000
	lim := Limits{TableElements: cap}
	table := func(min uint32, max ...uint32) []byte {
		b := []byte{0x70, byte(len(max))}
		b = appendU32(b, min)
		for _, m := range max {
			b = appendU32(b, m)
		}
		return b
	}
	tests := []struct {
		name   string
		tables [][]byte
		grow   uint32 // the largest grow of table 0 that succeeds
	}{
		{"no maximum", [][]byte{table(10)}, cap - 10},
		{"maximum over the limit", [][]byte{table(10, 1<<30)}, cap - 10},
		{"maximum under the limit", [][]byte{table(10, 50)}, 40},
		{"two tables share the room", [][]byte{table(10), table(20)}, (cap - 30) / 2},
		{"minimum at the limit", [][]byte{table(cap)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Instrument(tablesModule(tt.tables...), lim)
			if err != nil {
				t.Fatal(err)
			}
			mod := instantiate(t, newRuntime(t), out)
			if got := run(mod, call{fn: "grow", args: []uint64{uint64(tt.grow + 1)}}); got.err != "" || int32(got.results[0]) != -1 {
				t.Errorf("grow(%d) = %v, want -1", tt.grow+1, got)
			}
			if got := run(mod, call{fn: "grow", args: []uint64{uint64(tt.grow)}}); got.err != "" || int32(got.results[0]) == -1 {
				t.Errorf("grow(%d) = %v, want the old size", tt.grow, got)
			}
			// Bound applies the same maxima without instrumenting.
			b, err := Bound(tablesModule(tt.tables...), lim)
			if err != nil {
				t.Fatal(err)
			}
			bm := instantiate(t, newRuntime(t), b)
			if bm.ExportedGlobal(GlobalName) != nil {
				t.Error("Bound instrumented")
			}
			if got := run(bm, call{fn: "grow", args: []uint64{uint64(tt.grow + 1)}}); got.err != "" || int32(got.results[0]) != -1 {
				t.Errorf("Bound: grow(%d) = %v, want -1", tt.grow+1, got)
			}
		})
	}
	many := make([][]byte, MaxTables+1)
	for k := range many {
		many[k] = table(0)
	}
	for _, tt := range []struct {
		name   string
		tables [][]byte
		lim    Limits
		msg    string
	}{
		{"minimum over the limit", [][]byte{table(cap + 1)}, lim, "the tables' minimum entries: 1001, over the limit of 1000 ([limits] max_table_elements)"},
		{"minimums over the limit", [][]byte{table(600), table(600, 600)}, lim, "1200, over the limit of 1000"},
		{"too many tables", many, Limits{}, "tables: 65, over the fixed limit of 64"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, _, err := Instrument(tablesModule(tt.tables...), tt.lim)
			var le *LimitError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tt.msg) || out != nil {
				t.Errorf("err = %v, want a *LimitError containing %q", err, tt.msg)
			}
		})
	}
}

// nops is n nop instructions.
func nops(n int) []byte { return bytes.Repeat([]byte{0x01}, n) }

// cat concatenates code fragments.
func cat(parts ...[]byte) []byte { return slices.Concat(parts...) }

// TestCuts: a loop of CutMin bytes or more is cut after the ends of the
// blocks no if encloses within it, each cut paying for the code up to
// the next; a shorter loop's cuts are merged back into its check; blocks
// inside an if are never cut; and code after a nested loop is paid for by
// the cut before it.
func TestCuts(t *testing.T) {
	loop, block, if_, end := []byte{0x03, 0x40}, []byte{0x02, 0x40}, []byte{0x41, 0x00, 0x04, 0x40}, []byte{0x0b}
	tests := []struct {
		name string
		code []byte // after the locals (none), before the body's end
		want []point
	}{
		{"dispatch loop", cat(loop, block, block, nops(1), end, nops(600), end, nops(600), end),
			[]point{{at: 1, charge: 3}, {at: 3, charge: 6, cuts: true}, {at: 9, charge: 601, cut: true}, {at: 610, charge: 601, cut: true}}},
		{"short loop", cat(loop, block, block, nops(1), end, nops(100), end, nops(100), end),
			[]point{{at: 1, charge: 3}, {at: 3, charge: 208}, {at: 9, cut: true, dead: true}, {at: 110, cut: true, dead: true}}},
		{"block in an if", cat(loop, if_, block, nops(1), end, nops(10), end, nops(1100), end),
			[]point{{at: 1, charge: 3}, {at: 3, charge: 1120}}},
		{"nested loop after a cut", cat(loop, block, nops(1), end, loop, nops(2), end, nops(1100), end),
			[]point{{at: 1, charge: 3}, {at: 3, charge: 4, cuts: true}, {at: 7, charge: 1103, cut: true}, {at: 9, charge: 3}}},
		{"no loop", cat(block, nops(1), end, nops(1100)), []point{{at: 1, charge: 1105}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := cat([]byte{0x00}, tt.code, end)
			var info Info
			bd := body{end: len(b)}
			points, _, err := scanBody(nil, nil, b, &bd, &module{}, &info)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(points, tt.want) {
				t.Errorf("points %v, want %v", points, tt.want)
			}
		})
	}
}

// TestDispatchLoopCharge: a loop shaped like Go's functions (a dispatch
// to the blocks of a large body) is charged, per iteration, for the part
// it runs, not for all of it (before cuts, 50 iterations cost 50 times the
// body); and with the flag set it still stops.
func TestDispatchLoopCharge(t *testing.T) {
	// (func (export "f") (param $n i32)
	//   loop $l
	//     block $long
	//       block $short
	//         local.get $n
	//         br_if $short      ;; n != 0
	//         br $long
	//       end
	//       local.get $n  i32.const 1  i32.sub  local.set $n
	//       br $l
	//     end
	//     nop × 2000          ;; run once, when n reaches 0
	//   end)
	code := cat([]byte{0x00, 0x03, 0x40, 0x02, 0x40, 0x02, 0x40, 0x20, 0x00, 0x0d, 0x00, 0x0c, 0x01, 0x0b,
		0x20, 0x00, 0x41, 0x01, 0x6b, 0x21, 0x00, 0x0c, 0x01, 0x0b}, nops(2000), []byte{0x0b, 0x0b})
	fn := appendU32([]byte{1}, uint32(len(code)))
	wasm := binModule(sec(1, 1, 0x60, 1, 0x7f, 0), sec(3, 1, 0), sec(5, 1, 0, 1),
		sec(7, 1, 1, 'f', 0, 0), sec(10, append(fn, code...)...))
	out, _, err := Instrument(wasm, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	mod := instantiate(t, newRuntime(t), out)
	flag, fuel := globals(t, mod)
	const n = 50
	fuel.Set(Refill)
	if got := run(mod, call{fn: "f", args: []uint64{n}}); got.err != "" {
		t.Fatal(got.err)
	}
	if used := Refill - int32(fuel.Get()); used > 2000+n*64 {
		t.Errorf("%d iterations and the long block cost %d of fuel, want at most %d", n, used, 2000+n*64)
	}
	flag.Set(1)
	fuel.Set(0)
	if got := run(mod, call{fn: "f", args: []uint64{1 << 30}}); got.err != "wasm error: unreachable" {
		t.Errorf("with the flag set: %v %q", got.results, got.err)
	}
}
