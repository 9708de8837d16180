package component

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/component/canon"
)

func load(t testing.TB, path string) *cm.Component {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newRuntime(t *testing.T) (context.Context, wazero.Runtime) {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	t.Cleanup(func() { rt.Close(ctx) })
	return ctx, rt
}

// start compiles and instantiates the component at path, closing both
// when the test ends.
func start(t *testing.T, ctx context.Context, rt wazero.Runtime, path string, host *Host) (*Compiled, *Instance) {
	t.Helper()
	cc, err := Compile(ctx, rt, load(t, path), host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close(ctx) })
	in, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(ctx) })
	return cc, in
}

func TestEcho(t *testing.T) {
	ctx, rt := newRuntime(t)
	cc, err := Compile(ctx, rt, load(t, "../../internal/component/testdata/echo.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	if got := cc.Exports(); !slices.Equal(got, []string{"echo"}) {
		t.Fatalf("exports %v", got)
	}
	in, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	for _, s := range []string{"hello", "", "wörld 😀", strings.Repeat("x", 10000)} {
		got, err := in.Call(ctx, "echo", s)
		if err != nil || got != s {
			t.Fatalf("echo(%.20q) = %.20q, %v", s, got, err)
		}
	}
	if _, err := in.Call(ctx, "nope"); err == nil {
		t.Fatal("unknown export called")
	}
	if _, err := in.Call(ctx, "echo", 3); err == nil {
		t.Fatal("echo(3) accepted")
	}
	// A second instance of the same compiled component is independent.
	in2, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close(ctx)
	if got, err := in2.Call(ctx, "echo", "two"); err != nil || got != "two" {
		t.Fatalf("second instance: %v %v", got, err)
	}
}

// linkedHost implements linked.wat's imports and records what it saw.
type linkedHost struct {
	made, dropped []uint32
}

func (h *linkedHost) host() *Host {
	return &Host{
		Funcs: map[string]Func{
			"test:rt/host@0.2.3#greet": func(_ context.Context, args []any) (any, error) {
				return "hello, " + args[0].(string), nil
			},
			"test:rt/host#add": func(_ context.Context, args []any) (any, error) { // any version
				return args[0].(uint64) + args[1].(uint64), nil
			},
			"test:rt/host@0.2.3#make": func(_ context.Context, args []any) (any, error) {
				rep := uint32(args[0].(uint64)) + 1000
				h.made = append(h.made, rep)
				return rep, nil
			},
		},
		Drop: func(_ context.Context, rt *cm.ResourceType, rep uint32) error {
			if rt.Name != "thing" {
				return fmt.Errorf("drop of a %s", rt.Name)
			}
			h.dropped = append(h.dropped, rep)
			return nil
		},
	}
}

func TestLinked(t *testing.T) {
	ctx, rt := newRuntime(t)
	h := &linkedHost{}
	cc, err := Compile(ctx, rt, load(t, "testdata/linked.wasm"), h.host())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	want := []string{"hello", "sum", "test:rt/api@0.1.0#things", "test:rt/api@0.1.0#own-rep", "test:rt/api@0.1.0#drops", "test:rt/api@0.1.0#bad-drop"}
	if got := cc.Exports(); !slices.Equal(got, want) {
		t.Fatalf("exports %v, want %v", got, want)
	}
	in, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)

	calls := []struct {
		name string
		args []any
		want any
	}{
		{"hello", []any{"wörld"}, "hello, wörld"},
		{"sum", []any{uint64(40), uint64(2)}, uint64(42)},
		{"sum", []any{uint64(0xfffffff0), uint64(1)}, uint64(0xfffffff1)},
		{"test:rt/api@0.1.0#things", []any{uint64(3)}, uint64(3)},
		{"test:rt/api@0.1.0#own-rep", []any{uint64(7)}, uint64(7)},
		{"test:rt/api@0.1.0#own-rep", []any{uint64(5)}, uint64(5)},
		{"test:rt/api@0.1.0#drops", nil, uint64(12)}, // the destructor summed the reps
	}
	for _, c := range calls {
		got, err := in.Call(ctx, c.name, c.args...)
		if err != nil || got != c.want {
			t.Fatalf("%s%v = %#v, %v; want %#v", c.name, c.args, got, err, c.want)
		}
	}
	if !slices.Equal(h.made, []uint32{1000, 1001, 1002}) || !slices.Equal(h.dropped, h.made) {
		t.Fatalf("host things made %v, dropped %v", h.made, h.dropped)
	}
	if n := in.Table().Len(); n != 0 {
		t.Fatalf("%d handles left in the table", n)
	}

	// A bad handle traps, and the instance is then unusable.
	if _, err := in.Call(ctx, "test:rt/api@0.1.0#bad-drop"); !errors.Is(err, canon.ErrTrap) {
		t.Fatalf("bad drop: %v", err)
	}
	if _, err := in.Call(ctx, "sum", uint64(1), uint64(2)); !errors.Is(err, ErrTrapped) {
		t.Fatalf("call after a trap: %v", err)
	}
}

func TestLinkedHostErrors(t *testing.T) {
	ctx, rt := newRuntime(t)
	c := load(t, "testdata/linked.wasm")
	h := (&linkedHost{}).host()
	delete(h.Funcs, "test:rt/host#add")
	if _, err := Compile(ctx, rt, c, h); err == nil || !strings.Contains(err.Error(), "test:rt/host@0.2.3#add") {
		t.Fatalf("missing import: %v", err)
	}
	h = (&linkedHost{}).host()
	boom := errors.New("boom")
	h.Funcs["test:rt/host@0.2.3#greet"] = func(context.Context, []any) (any, error) { return nil, boom }
	h.Funcs["test:rt/host#add"] = func(context.Context, []any) (any, error) { return "not a u32", nil }
	cc, err := Compile(ctx, rt, c, h)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	for _, name := range []string{"hello", "sum"} {
		in, err := cc.Instantiate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.Call(ctx, name, "x")
		if name == "sum" {
			_, err = in.Call(ctx, name, uint64(1), uint64(2))
		}
		if err == nil {
			t.Fatalf("%s: a failing host function did not fail the call", name)
		}
		if name == "hello" && !errors.Is(err, boom) {
			t.Fatalf("hello: %v does not wrap the host's error", err)
		}
		in.Close(ctx)
	}
}

// TestMismatched checks that canonical functions whose core functions or
// options have the wrong types fail with errors.
func TestMismatched(t *testing.T) {
	ctx, rt := newRuntime(t)
	_, in := start(t, ctx, rt, "testdata/mismatched.wasm", nil)
	for name, want := range map[string]string{"bad-type": "not the flattening", "bad-realloc": "realloc option"} {
		if _, err := in.Call(ctx, name, "x"); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, want)
		}
	}

	host := &Host{Funcs: map[string]Func{"f": func(context.Context, []any) (any, error) { return uint64(1), nil }}}
	cb, err := Compile(ctx, rt, load(t, "testdata/badimport.wasm"), host)
	if err != nil {
		t.Fatal(err)
	}
	defer cb.Close(ctx)
	if in, err := cb.Instantiate(ctx); err == nil {
		in.Close(ctx)
		t.Fatal("a core import of the wrong type linked")
	}
}

// TestReentrance checks the spec's may_leave and may_enter: a guest may
// not call an import while values are lowered into it, and an export may
// not be called again from inside a call of the instance.
func TestReentrance(t *testing.T) {
	ctx, rt := newRuntime(t)
	var in *Instance
	pings := 0
	host := &Host{Funcs: map[string]Func{"ping": func(ctx context.Context, _ []any) (any, error) {
		pings++
		if pings > 1 {
			return nil, nil
		}
		_, err := in.Call(ctx, "call-ping")
		return nil, err
	}}}
	cc, err := Compile(ctx, rt, load(t, "testdata/reenter.wasm"), host)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	if in, err = cc.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Call(ctx, "call-ping"); !errors.Is(err, canon.ErrTrap) || pings != 1 {
		t.Fatalf("re-entering the instance: %v (%d pings)", err, pings)
	}
	in.Close(ctx)

	pings = 1 // ping just returns now
	if in, err = cc.Instantiate(ctx); err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if _, err := in.Call(ctx, "len", "abc"); !errors.Is(err, canon.ErrTrap) || pings != 1 {
		t.Fatalf("an import called from realloc while lowering: %v (%d pings)", err, pings-1)
	}
	if _, err := in.Call(ctx, "call-ping"); !errors.Is(err, ErrTrapped) {
		t.Fatalf("after the trap: %v", err)
	}
}

func TestHostLookup(t *testing.T) {
	exact := func(context.Context, []any) (any, error) { return "exact", nil }
	any2 := func(context.Context, []any) (any, error) { return "any", nil }
	h := &Host{Funcs: map[string]Func{
		"wasi:cli/stdout@0.2.3#get-stdout": exact,
		"wasi:cli/stdout#get-stdout":       any2,
		"f":                                exact,
	}}
	for name, want := range map[string]string{
		"wasi:cli/stdout@0.2.3#get-stdout":  "exact",
		"wasi:cli/stdout@0.2.12#get-stdout": "any",
		"wasi:cli/stdout@0.2.0#get-stdout":  "any",
		"f":                                 "exact",
		"wasi:cli/stderr@0.2.3#get-stderr":  "",
		"g":                                 "",
	} {
		got := ""
		if f := h.lookup(name); f != nil {
			v, _ := f(context.Background(), nil)
			got = v.(string)
		}
		if got != want {
			t.Errorf("lookup(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestConcurrentInstances runs instances of one Compiled on several
// goroutines at once (run with -race): a Compiled and its canon.Funcs are
// shared, everything else is per instance.
func TestConcurrentInstances(t *testing.T) {
	ctx, rt := newRuntime(t)
	cc, err := Compile(ctx, rt, load(t, "testdata/linked.wasm"), (&linkedHost{}).host())
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			in, err := cc.Instantiate(ctx)
			if err != nil {
				errs <- err
				return
			}
			defer in.Close(ctx)
			for i := range 50 {
				name := fmt.Sprintf("g%d-%d", g, i)
				got, err := in.Call(ctx, "hello", name)
				if err != nil || got != "hello, "+name {
					errs <- fmt.Errorf("hello(%s) = %v, %v", name, got, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestPrepare(t *testing.T) {
	ctx, rt := newRuntime(t)
	c := load(t, "testdata/linked.wasm")
	h := (&linkedHost{}).host()
	var seen int
	h.Prepare = func(b []byte) ([]byte, error) {
		seen++
		return b, nil
	}
	cc, err := Compile(ctx, rt, c, h)
	if err != nil || seen != 2 {
		t.Fatalf("Prepare saw %d modules, %v", seen, err)
	}
	cc.Close(ctx)
	boom := errors.New("boom")
	h.Prepare = func([]byte) ([]byte, error) { return nil, boom }
	if _, err := Compile(ctx, rt, c, h); !errors.Is(err, boom) {
		t.Fatalf("Prepare error: %v", err)
	}
}

// TestLimits checks that the engine's limits apply to a component's core
// instances: a call past its deadline is stopped (with wazero's
// CloseOnContextDone) and leaves the instance unusable; memory.grow
// stops at the runtime's page limit, and the next instance works.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true).WithMemoryLimitPages(16))
	defer rt.Close(ctx)
	cc, err := Compile(ctx, rt, load(t, "testdata/spin.wasm"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close(ctx)
	in, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := in.Call(ctx, "hog"); err != nil || got != uint64(16) {
		t.Fatalf("hog: %v, %v; want the 16-page limit", got, err)
	}
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := in.Call(dctx, "spin"); err == nil {
		t.Fatal("spin returned")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("spin stopped after %v", d)
	}
	if _, err := in.Call(ctx, "hog"); !errors.Is(err, ErrTrapped) {
		t.Fatalf("after the deadline: %v", err)
	}
	in.Close(ctx)
	in2, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer in2.Close(ctx)
	if got, err := in2.Call(ctx, "hog"); err != nil || got != uint64(16) {
		t.Fatalf("a new instance: %v, %v", got, err)
	}
}
