package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	cm "github.com/wasmcp/wasmcp/internal/component"
	rcomp "github.com/wasmcp/wasmcp/runtime/component"
)

// componentPool compiles the component at path (relative to the module
// root) with host on e and returns a pool of it with limits l; both are
// closed when the test ends.
func componentPool(t *testing.T, e *Engine, path string, host *rcomp.Host, l Limits) (*Module, *Pool) {
	t.Helper()
	b, err := os.ReadFile("../" + path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.CompileComponent(context.Background(), path, len(b), c, host)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	p, err := m.NewPool(l, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	return m, p
}

const faultsComponent = "runtime/component/testdata/faults.wasm"

// TestComponentPool: calls of a component reuse its pooled instance; a
// trap, a runaway call stopped at its deadline and a memory hog each cost
// their call only (classified as for a core plugin, the instance
// replaced), and the next call works.
// With the CPU scheduler (the probes stop the runaway) and without it
// (the deadline's timer does).
func TestComponentPool(t *testing.T) {
	unscheduled, err := NewEngine(context.Background(), Config{NoCache: true, BackgroundCPUs: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unscheduled.Close(context.Background()) })
	for name, e := range map[string]*Engine{"scheduled": testEngine, "unscheduled": unscheduled} {
		t.Run(name, func(t *testing.T) { testComponentPool(t, e) })
	}
}

func testComponentPool(t *testing.T, e *Engine) {
	m, p := componentPool(t, e, faultsComponent, nil, Limits{Memory: 1 << 20, Timeout: 300 * time.Millisecond, Instances: 1})
	if m.Mode() != Component {
		t.Fatalf("mode %v", m.Mode())
	}
	if got := strings.Join(m.Exports(), " "); got != "echo spin hog trap grow-a grow-b" {
		t.Fatalf("exports %q", got)
	}
	ctx := context.Background()
	echo := func() {
		t.Helper()
		v, err := p.CallComponent(ctx, "echo", []any{"añ😀"}, nil, nil)
		if err != nil || v != "añ😀" {
			t.Fatalf("echo = %#v, %v", v, err)
		}
	}
	echo()
	echo()
	if st := p.Stats(); st.Created != 1 || st.Idle != 1 {
		t.Fatalf("after two calls: %+v", st)
	}
	for _, tc := range []struct {
		export string
		kind   Kind
		msg    string
	}{
		{"trap", KindTrap, "plugin crashed: unreachable"},
		{"spin", KindDeadline, "plugin timed out after 300ms"},
		{"hog", KindMemory, "plugin ran out of memory (limit 1 MiB)"},
	} {
		began := time.Now()
		v, err := p.CallComponent(ctx, tc.export, nil, nil, nil)
		var re *Error
		if !errors.As(err, &re) || re.Kind != tc.kind || !strings.HasPrefix(re.Message, tc.msg) {
			t.Fatalf("%s = %v, %v (%T), want %v %q", tc.export, v, err, err, tc.kind, tc.msg)
		}
		if d := time.Since(began); d > 5*time.Second {
			t.Fatalf("%s took %v", tc.export, d)
		}
		echo()
	}
	if st := p.Stats(); st.Created != 4 || st.Discarded != 3 {
		t.Fatalf("after the failures: %+v", st)
	}
	if _, err := p.CallComponent(ctx, "nope", nil, nil, nil); err == nil {
		t.Fatal("an unknown export was called")
	}
	if _, _, err := p.Call(ctx, []byte("{}"), nil, nil); err == nil {
		t.Fatal("Call ran a component")
	}
	if _, err := p.CallComponent(ctx, "grow-a", []any{"x"}, nil, nil); !errors.Is(err, ErrComponentArgs) {
		t.Fatalf("a string for a u32: %v", err)
	}
	if st := p.Stats(); st.Created != 4 {
		t.Fatalf("arguments that do not fit cost the instance: %+v", st)
	}
}

// TestComponentMemorySum: the memory limit bounds the sum of a component
// instance's memories, not each: with 4 pages allowed and one page in
// each of two memories, memory $a may grow by two pages, then neither may
// grow by one.
func TestComponentMemorySum(t *testing.T) {
	_, p := componentPool(t, testEngine, faultsComponent, nil, Limits{Memory: 4 << 16, Instances: 1, RecycleMemory: 8 << 16})
	ctx := context.Background()
	for _, tc := range []struct {
		export string
		pages  uint64
		want   int64
	}{
		{"grow-a", 2, 1},
		{"grow-b", 1, -1},
		{"grow-a", 1, -1},
		{"grow-b", 0, 1},
	} {
		v, err := p.CallComponent(ctx, tc.export, []any{tc.pages}, nil, nil)
		if err != nil || v != tc.want {
			t.Fatalf("%s(%d) = %#v, %v; want %d", tc.export, tc.pages, v, err, tc.want)
		}
	}
	if st := p.Stats(); st.Memory != 4<<16 || st.Created != 1 {
		t.Fatalf("stats %+v", st)
	}
}

// TestComponentRecycle: an instance whose memories together grew past
// RecycleMemory is closed after its call.
func TestComponentRecycle(t *testing.T) {
	_, p := componentPool(t, testEngine, faultsComponent, nil, Limits{Memory: 16 << 16, Instances: 1, RecycleMemory: 3 << 16})
	ctx := context.Background()
	if _, err := p.CallComponent(ctx, "grow-b", []any{uint64(2)}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats(); st.Recycled != 1 || st.Idle != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestComponentEmptyMemory: a core module without a memory is given one
// of zero pages so that it can be instrumented, and keeps its code.
func TestComponentEmptyMemory(t *testing.T) {
	mod := []byte("\x00asm\x01\x00\x00\x00" +
		"\x01\x04\x01\x60\x00\x00" + // type section: () -> ()
		"\x03\x02\x01\x00" + // function section
		"\x07\x05\x01\x01f\x00\x00" + // export "f"
		"\x0a\x04\x01\x02\x00\x0b") // code
	out, err := withEmptyMemory(mod)
	if err != nil {
		t.Fatal(err)
	}
	want := string(mod[:18]) + "\x05\x03\x01\x00\x00" + string(mod[18:])
	if string(out) != want {
		t.Fatalf("got % x", out)
	}
	if _, _, err := instrumentCore(mod, DefaultModuleLimits()); err != nil {
		t.Fatal(err)
	}
	if _, err := withEmptyMemory(mod[:12]); err == nil {
		t.Fatal("a truncated module was accepted")
	}
}

// countState is an InstanceState that counts its binds and closes.
type countState struct{ binds, closes *atomic.Int64 }

func (s countState) Bind(ctx context.Context) context.Context { s.binds.Add(1); return ctx }
func (s countState) Close() error                             { s.closes.Add(1); return nil }

// TestComponentStateAndIdle: each component instance gets its own host
// state, bound at its instantiation and for every call, closed when the
// instance is discarded after a trap or expires idle, and the pool's
// memory falls to zero once no instance is left.
func TestComponentStateAndIdle(t *testing.T) {
	var made, binds, closes atomic.Int64
	b, err := os.ReadFile("../" + faultsComponent)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m, err := testEngine.CompileComponent(context.Background(), "faults", len(b), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	p, err := m.NewPool(Limits{Instances: 1, IdleTimeout: 100 * time.Millisecond}, Sandbox{ComponentState: func() (InstanceState, error) {
		made.Add(1)
		return countState{&binds, &closes}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 2 {
		if _, err := p.CallComponent(ctx, "echo", []any{"x"}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if made.Load() != 1 || binds.Load() != 3 || closes.Load() != 0 {
		t.Fatalf("made %d, binds %d, closes %d; want 1, 3 (instantiation, two calls), 0", made.Load(), binds.Load(), closes.Load())
	}
	if _, err := p.CallComponent(ctx, "trap", nil, nil, nil); err == nil {
		t.Fatal("trap returned")
	}
	if closes.Load() != 1 {
		t.Fatalf("the trapped instance's state: %d closes", closes.Load())
	}
	if _, err := p.CallComponent(ctx, "echo", []any{"x"}, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { s := p.Stats(); return s.Idle == 0 && s.Expired == 1 && closes.Load() == 2 })
	if s := p.Stats(); s.Memory != 0 || made.Load() != 2 {
		t.Fatalf("stats %+v, %d states made", s, made.Load())
	}
}

// TestComponentCompileCached: a component's core modules go through the
// authenticated compilation cache: not cached on a cold cache, cached on
// the same engine again and on a new engine (a new process) with the
// same directory.
func TestComponentCompileCached(t *testing.T) {
	dir := t.TempDir()
	newEngine := func() *Engine {
		e, err := NewEngine(context.Background(), Config{CacheDir: dir})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		return e
	}
	b, err := os.ReadFile("../testdata/components/c-echo.wasm")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	first, second := newEngine(), newEngine()
	for _, s := range []struct {
		name string
		e    *Engine
		want bool
	}{{"cold cache", first, false}, {"same engine again", first, true}, {"new engine, same directory", second, true}} {
		m, err := s.e.CompileComponent(context.Background(), "c-echo", len(b), c, nil)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		p, err := m.NewPool(Limits{}, Sandbox{})
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Stats().CompileCached; got != s.want {
			t.Errorf("%s: CompileCached = %v, want %v", s.name, got, s.want)
		}
		if v, err := p.CallComponent(context.Background(), "echo", []any{"cached"}, nil, nil); err != nil || v != "cached" {
			t.Fatalf("%s: echo = %v, %v", s.name, v, err)
		}
		_ = m.Close(context.Background())
	}
}

// TestComponentConcurrent: calls from many goroutines share the pool's
// instances (at most Instances of them), each call with its own result.
func TestComponentConcurrent(t *testing.T) {
	_, p := componentPool(t, testEngine, faultsComponent, nil, Limits{Instances: 3})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			for i := range 20 {
				want := strings.Repeat(string(rune('a'+g)), i+1)
				v, err := p.CallComponent(context.Background(), "echo", []any{want}, nil, nil)
				if err != nil || v != want {
					errs <- fmt.Errorf("goroutine %d call %d: %v, %v", g, i, v, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if s := p.Stats(); s.Created > 3 || s.Discarded != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestComponentEngineClose: closing the engine stops a component call
// spinning in guest code (KindClosed) instead of waiting for its deadline.
func TestComponentEngineClose(t *testing.T) {
	e, err := NewEngine(context.Background(), Config{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	_, p := componentPool(t, e, faultsComponent, nil, Limits{Timeout: time.Minute})
	done := make(chan error, 1)
	go func() {
		_, err := p.CallComponent(context.Background(), "spin", nil, nil, nil)
		done <- err
	}()
	waitFor(t, func() bool { return p.Stats().Busy == 1 })
	time.Sleep(50 * time.Millisecond) // in the loop
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var re *Error
		if !errors.As(err, &re) || re.Kind != KindClosed {
			t.Fatalf("spin = %v, want a KindClosed error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the engine's close did not stop the call")
	}
}
