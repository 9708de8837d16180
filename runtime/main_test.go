package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// The fixtures are in testdata/, built by testdata/build.sh. Each is
// compiled once per test binary on one shared engine, whose on-disk cache
// lives in the temp directory so later runs start warm.
var (
	testEngine *Engine
	modMu      sync.Mutex
	mods       = map[string]*Module{}
)

func testCacheDir() string { return filepath.Join(os.TempDir(), "wasmcp-runtime-test-cache") }

func TestMain(m *testing.M) {
	var err error
	testEngine, err = NewEngine(context.Background(), Config{CacheDir: testCacheDir(), Modules: ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
	if err != nil {
		panic(err)
	}
	// The engine's Done channel is made lazily, by the first call that
	// asks: make it here, outside the synctest bubbles of the tests on a
	// fake clock, or the first of them would own it and Close could not
	// close it.
	_ = testEngine.done.Done()
	code := m.Run()
	_ = testEngine.Close(context.Background())
	os.Exit(code)
}

// fixture returns the compiled fixture at testdata/path.
func fixture(t testing.TB, path string) *Module {
	t.Helper()
	modMu.Lock()
	defer modMu.Unlock()
	if m, ok := mods[path]; ok {
		return m
	}
	wasm, err := os.ReadFile(filepath.Join("testdata", path))
	if err != nil {
		t.Fatal(err)
	}
	m, err := testEngine.Compile(context.Background(), path, wasm)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	mods[path] = m
	return m
}

// precompile compiles the fixture at testdata/path before a test enters a
// synctest bubble: compiling does real I/O, and the engine's count of
// compiles in flight would otherwise belong to the bubble.
func precompile(t testing.TB, path string) {
	t.Helper()
	_ = fixture(t, path)
}

const (
	watGuest  = "guest.wasm"
	watCmd    = "command.wasm"
	goPlugin  = "goplugin/goplugin.wasm"
	goCommand = "gocommand/gocommand.wasm"
)

// newPool creates a pool closed at the end of the test.
func newPool(t testing.TB, path string, l Limits, sb Sandbox) *Pool {
	t.Helper()
	p, err := fixture(t, path).NewPool(l, sb)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close(context.Background()) })
	return p
}

// hostilePool returns a pool of testdata/hostile/NAME.wasm (of the
// repository) with the mounts mt; the pool and the module are closed at
// the end of the test.
func hostilePool(t *testing.T, name string, l Limits, mt ...Mount) *Pool {
	t.Helper()
	raw, err := os.ReadFile("../testdata/hostile/" + name + ".wasm")
	if err != nil {
		t.Fatal(err)
	}
	m, err := testEngine.Compile(context.Background(), name, raw)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close(context.Background()) })
	p, err := m.NewPool(l, Sandbox{Mounts: mt})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// closableGuest returns a pool of the WAT guest on an engine of its own
// (no cache), for a test that closes the engine.
func closableGuest(t *testing.T, l Limits) (*Engine, *Module, *Pool) {
	t.Helper()
	e, err := NewEngine(context.Background(), Config{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Compile(context.Background(), "g", file(t, watGuest)())
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.NewPool(l, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	return e, m, p
}

// stoppedAtDeadline calls p with input and asserts that the call fails
// with KindDeadline, within the generous bound within of its start.
func stoppedAtDeadline(t *testing.T, p *Pool, input string, within time.Duration) {
	t.Helper()
	start := time.Now()
	_, _, err := p.Call(context.Background(), []byte(input), nil, nil)
	callErr(t, err, KindDeadline)
	if took := time.Since(start); took > within {
		t.Errorf("%s: stopped after %v", input, took)
	}
}

// readFile has the Go fixture in p read path and write path+".new": what
// it read and the two errors it saw ("" for none).
func readFile(t *testing.T, p *Pool, path string) (data, readErr, writeErr string) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"method": "readfile", "params": path})
	_, out, err := p.Call(context.Background(), in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct{ Data, ReadErr, WriteErr string }
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	return r.Data, r.ReadErr, r.WriteErr
}

// callErr asserts that err is an *Error of kind k and returns it.
func callErr(t testing.TB, err error, k Kind) *Error {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *Error of kind %s", err, err, k)
	}
	if e.Kind != k {
		t.Fatalf("kind = %s (%q; detail %q), want %s", e.Kind, e.Message, e.Detail, k)
	}
	return e
}

// fakeHost records logs and answers calls from a table.
type fakeHost struct {
	mu    sync.Mutex
	logs  []string
	calls []string
	reply map[string]fakeReply
}

type fakeReply struct {
	result []byte
	errno  int32
}

func (h *fakeHost) Log(_ context.Context, level int32, msg []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, abi.LevelName(level)+":"+string(msg))
}

func (h *fakeHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, method+" "+string(params))
	r, ok := h.reply[method]
	if !ok {
		return nil, abi.ErrUnknown
	}
	return r.result, r.errno
}
