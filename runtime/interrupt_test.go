package runtime

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// Interruption of instrumented modules (see Engine). Bounds on durations
// are generous: the machine may be loaded.

// TestInterrupt: looping, recursing and sleeping guests are stopped at the
// deadline and on cancellation, and the pool then works again, both with
// the scheduler (whose probes check the deadline and the context) and
// without it (a timer and a context.AfterFunc set the flag).
func TestInterrupt(t *testing.T) {
	testutil.WallClock(t) // the stops are timed: a guest spins in native code, which a fake clock cannot hold
	unscheduled, err := NewEngine(context.Background(), Config{CacheDir: testCacheDir(), BackgroundCPUs: -1,
		Modules: ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
	if err != nil {
		t.Fatal(err)
	}
	defer unscheduled.Close(context.Background())
	for _, e := range []struct {
		name string
		pool func(t *testing.T, path string, l Limits) *Pool
	}{
		{"scheduled", func(t *testing.T, path string, l Limits) *Pool { return newPool(t, path, l, Sandbox{}) }},
		{"unscheduled", func(t *testing.T, path string, l Limits) *Pool { return enginePool(t, unscheduled, path, l) }},
	} {
		t.Run(e.name, func(t *testing.T) { testInterrupt(t, e.pool) })
	}
}

// enginePool returns a pool of testdata/path compiled on e, closed with
// its module at the end of the test.
func enginePool(t *testing.T, e *Engine, path string, l Limits) *Pool {
	t.Helper()
	wasm, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Compile(context.Background(), path, wasm)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	p, err := m.NewPool(l, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testInterrupt(t *testing.T, newPool func(t *testing.T, path string, l Limits) *Pool) {
	tests := []struct {
		name, path, input string
		timeout           time.Duration
		late              time.Duration // how late the stop may be; 0 for a second
	}{
		{"wat loop", watGuest, "l", 200 * time.Millisecond, 0},
		{"wat output loop", watGuest, "f", 200 * time.Millisecond, 0}, // a loop around an import call
		// No loop: stopped at function entry (a shallow recursion: a
		// deep one runs out of its stack budget within milliseconds).
		{"wat recursion", watGuest, "R", 200 * time.Millisecond, 0},
		// Little code between sleeps: the probes alone would come seconds
		// late.
		{"wat sleep loop", watGuest, "z", 200 * time.Millisecond, 0},
		// The longest sleeps the host allows (10 ms each): a short loop
		// checks its fuel once per instrument.Budget bytes of its code
		// (a few dozen sleeps here, over half a second) unless the guest
		// sleeps no more once it is to stop.
		{"wat long sleep loop", watGuest, "Z", 200 * time.Millisecond, 300 * time.Millisecond},
		{"go for", goPlugin, `{"method":"spin"}`, 200 * time.Millisecond, 0},
		{"go sleep", goPlugin, `{"method":"sleep"}`, 200 * time.Millisecond, 0},
	}
	for _, tt := range tests {
		timeout, late := tt.timeout, cmp.Or(tt.late, time.Second)
		t.Run(tt.name+"/deadline", func(t *testing.T) {
			// The caller's deadline, so that checkReusable has time to
			// instantiate (slow under the race detector).
			p := newPool(t, tt.path, Limits{Timeout: time.Minute, MaxOutput: 1 << 30})
			start := time.Now() // before the deadline is set: took >= timeout
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			_, _, err := p.Call(ctx, []byte(tt.input), nil, nil)
			took := time.Since(start)
			callErr(t, err, KindDeadline)
			if took < timeout || took > timeout+late {
				t.Errorf("stopped after %v, want about %v", took, timeout)
			}
			t.Logf("stopped after %v", took)
			checkReusable(t, p, tt.path)
		})
		t.Run(tt.name+"/cancel", func(t *testing.T) {
			p := newPool(t, tt.path, Limits{Timeout: time.Minute, MaxOutput: 1 << 30})
			ctx, cancel := context.WithCancel(context.Background())
			after := min(timeout/2, 100*time.Millisecond)
			time.AfterFunc(after, cancel)
			start := time.Now()
			_, _, err := p.Call(ctx, []byte(tt.input), nil, nil)
			callErr(t, err, KindCanceled)
			if took := time.Since(start); took > after+late {
				t.Errorf("stopped after %v", took)
			}
			checkReusable(t, p, tt.path)
		})
	}
}

// checkReusable: the pool answers after discarding a stopped instance.
func checkReusable(t *testing.T, p *Pool, path string) {
	t.Helper()
	in, want := "e again", "e again"
	if path == goPlugin {
		in, want = `{"method":"echo","params":"again"}`, `"again"`
	}
	if _, out, err := p.Call(context.Background(), []byte(in), nil, nil); err != nil || string(out) != want {
		t.Errorf("after the stop: %q, %v", out, err)
	}
	if s := p.Stats(); s.Discarded != 1 {
		t.Errorf("stats %+v, want the stopped instance discarded", s)
	}
}

// TestInterruptStartFunction: a start section that never returns is
// stopped at the deadline of the call that instantiates.
func TestInterruptStartFunction(t *testing.T) {
	testutil.WallClock(t) // the stop is timed: a guest spins in native code, which a fake clock cannot hold
	m := fixture(t, "startloop.wasm")
	if !m.interruptible() || len(m.starts) != 1 {
		t.Fatalf("interruptible %v, starts %q", m.interruptible(), m.starts)
	}
	if slices.Contains(m.Exports(), "__wasmcp_start") {
		t.Errorf("exports %q show the runtime's start export", m.Exports())
	}
	p := newPool(t, "startloop.wasm", Limits{Timeout: 200 * time.Millisecond}, Sandbox{})
	stoppedAtDeadline(t, p, "x", 1200*time.Millisecond)
}

// TestGCNotStalledBySpinningGuest: a guest spinning in a loop leaves the
// Go runtime able to stop the world (wazero's native code cannot be
// preempted; the instrumented code exits to Go every period).
func TestGCNotStalledBySpinningGuest(t *testing.T) {
	testutil.WallClock(t) // GC pauses are timed while a guest spins in native code, which a fake clock cannot hold
	p := newPool(t, watGuest, Limits{Timeout: 3 * time.Second}, Sandbox{})
	done := make(chan error, 1)
	go func() {
		_, _, err := p.Call(context.Background(), []byte("l"), nil, nil)
		done <- err
	}()
	waitFor(t, func() bool { return p.Stats().Busy == 1 })
	time.Sleep(50 * time.Millisecond) // let the guest enter its loop
	for i := range 3 {
		start := time.Now()
		goruntime.GC()
		if d := time.Since(start); d > time.Second {
			t.Errorf("GC %d took %v while a guest spins", i, d)
		}
	}
	select {
	case err := <-done:
		t.Fatalf("spinning call returned early: %v", err)
	default:
	}
	callErr(t, <-done, KindDeadline)
}

// TestInterruptDoesNotPoisonNextCall: deadlines that fire around the end
// of a call never make a later call on a pooled instance fail.
func TestInterruptDoesNotPoisonNextCall(t *testing.T) {
	for _, path := range []string{watGuest, goPlugin} {
		t.Run(path, func(t *testing.T) {
			p := newPool(t, path, Limits{Instances: 1}, Sandbox{})
			in := []byte("e x")
			if path == goPlugin {
				in = []byte(`{"method":"echo","params":1}`)
			}
			if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
				t.Fatal(err)
			}
			n, failed := 1000, 0
			if testing.Short() {
				n = 100
			}
			for range n {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rand.IntN(300))*time.Microsecond)
				if _, _, err := p.Call(ctx, in, nil, nil); err != nil {
					failed++
				}
				cancel()
				if _, _, err := p.Call(context.Background(), in, nil, nil); err != nil {
					t.Fatalf("call after a racing deadline: %v", err)
				}
			}
			t.Logf("%d of %d short-deadline calls failed; stats %+v", failed, n, p.Stats())
		})
	}
}

// TestFallbackRuntime: a module that cannot be instrumented (it exports a
// reserved name) runs on the fallback runtime, the reason is logged, and
// its calls are still stopped at the deadline.
func TestFallbackRuntime(t *testing.T) {
	testutil.WallClock(t) // the stop is timed: a guest spins in native code, which a fake clock cannot hold
	var logs testutil.Buffer
	e, err := NewEngine(context.Background(), Config{NoCache: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	m, err := e.Compile(context.Background(), "reserved", file(t, "reserved.wasm")())
	if err != nil {
		t.Fatal(err)
	}
	if m.interruptible() || m.rt != e.safe {
		t.Error("module with a reserved export was instrumented")
	}
	if s := logs.String(); !strings.Contains(s, "not instrumented") || !strings.Contains(s, "reserved") || !strings.Contains(s, "plugin=reserved") {
		t.Errorf("log %q", s)
	}
	p, err := m.NewPool(Limits{Timeout: 200 * time.Millisecond}, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	if _, out, err := p.Call(context.Background(), []byte("echo"), nil, nil); err != nil || string(out) != "echo" {
		t.Fatalf("echo: %q, %v", out, err)
	}
	stoppedAtDeadline(t, p, "l", 1200*time.Millisecond)
	// An instrumentable module on the same engine is unaffected.
	g, err := e.Compile(context.Background(), "guest", file(t, watGuest)())
	if err != nil || !g.interruptible() {
		t.Fatalf("guest: interruptible %v, %v", g != nil && g.interruptible(), err)
	}
}

// TestEngineCloseInterruptsCalls: closing the engine stops a running call
// (KindClosed) instead of waiting for its deadline.
func TestEngineCloseInterruptsCalls(t *testing.T) {
	e, _, p := closableGuest(t, Limits{Timeout: time.Minute})
	done := make(chan error, 1)
	go func() {
		_, _, err := p.Call(context.Background(), []byte("l"), nil, nil)
		done <- err
	}()
	waitFor(t, func() bool { return p.Stats().Busy == 1 })
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		callErr(t, err, KindClosed)
	case <-time.After(10 * time.Second):
		t.Fatal("running call not stopped by Engine.Close")
	}
	t.Logf("stopped %v after Close", time.Since(start))
}

// TestCPUFixtures: the benchmark operations compute the right answers.
func TestCPUFixtures(t *testing.T) {
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	_, out, err := p.Call(context.Background(), []byte("n"+le(100000, 0, 0, 0)[:4]), nil, nil)
	if err != nil || len(out) != 4 || binary.LittleEndian.Uint32(out) != uint32(uint64(100000)*100001/2%(1<<32)) {
		t.Errorf("n 100000 = %x, %v", out, err)
	}
	g := newPool(t, goPlugin, Limits{}, Sandbox{})
	_, out, err = g.Call(context.Background(), []byte(`{"method":"sha256","params":3}`), nil, nil)
	if err != nil || !bytes.Equal(out, []byte(fmt.Sprintf(`"%x"`, sha256.Sum256([]byte{0, 31, 62})))) {
		t.Errorf("sha256 3 = %s, %v", out, err)
	}
}

// TestEngineCloseDuringCompile: closing the engine while a module
// compiles cancels the compilation and waits for it, instead of closing
// wazero's store under it (which panicked the process from the compile
// goroutine).
func TestEngineCloseDuringCompile(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("testdata", goPlugin))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		e, err := NewEngine(context.Background(), Config{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		res := make(chan error, 1)
		go func() {
			_, err := e.Compile(context.Background(), "go", wasm)
			res <- err
		}()
		time.Sleep(time.Duration(20*(i+1)) * time.Millisecond)
		if err := e.Close(context.Background()); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := <-res; err != nil {
			t.Logf("Compile after Close: %v", err)
		}
	}
}
