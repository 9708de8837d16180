package wasip2

import (
	"bytes"
	"context"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/runtime/component"
)

// instantiate compiles and instantiates the component at path with the
// WASI host, closing both when the test ends.
func instantiate(t testing.TB, path string) (*component.Compiled, *component.Instance) {
	t.Helper()
	ctx := context.Background()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cm.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler().WithCompilationCache(compileCache(t)))
	t.Cleanup(func() { rt.Close(ctx) })
	cc, err := component.Compile(ctx, rt, c, Host())
	if err != nil {
		t.Fatal(err)
	}
	in, err := cc.Instantiate(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(ctx) })
	return cc, in
}

// TestCText runs the C corpus component (built for WASI 0.2.12, through
// the preview 1 adapter) on the real host: its env export reads
// wasi:cli/environment.
func TestCText(t *testing.T) {
	_, in := instantiate(t, "../../testdata/components/c-text.wasm")
	st := New(Options{Env: map[string]string{"HOME": "/home/wasm", "LANG": "C"}})
	defer st.Close()
	ctx := WithState(context.Background(), st)
	for _, c := range []struct {
		key  string
		want any
	}{{"HOME", cm.Some{Value: "/home/wasm"}}, {"LANG", cm.Some{Value: "C"}}, {"PATH", nil}} {
		got, err := in.Call(ctx, "env", c.key)
		if err != nil || got != c.want {
			t.Fatalf("env(%s) = %#v, %v; want %#v", c.key, got, err, c.want)
		}
	}
}

var (
	cacheOnce sync.Once
	cache     wazero.CompilationCache
)

// compileCache is the compilation cache of the test binary, on disk in
// WASMCP_TEST_CACHE (set by scripts/test.sh) so that the 12 MB JavaScript
// component compiles once.
func compileCache(t testing.TB) wazero.CompilationCache {
	cacheOnce.Do(func() {
		dir := os.Getenv("WASMCP_TEST_CACHE")
		if dir == "" {
			dir = filepath.Join(os.TempDir(), "wasmcp-wasip2-test-cache")
		}
		c, err := wazero.NewCompilationCacheWithDir(dir)
		if err != nil {
			t.Logf("compilation cache: %v", err)
			c = wazero.NewCompilationCache()
		}
		cache = c
	})
	return cache
}

// TestJS runs js-wasi.wasm, built by componentize-js (testdata/build.sh),
// end to end on the host: console.log and console.error reach the
// writers, Date is Options.Now, performance.now the monotonic clock,
// Math.random and crypto.getRandomValues wasi:random, and a flood of
// output stops at the line bounds.
func TestJS(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a 12 MB component")
	}
	start := time.Now()
	_, in := instantiate(t, "testdata/js-wasi.wasm")
	t.Logf("compiled and instantiated in %v", time.Since(start).Round(time.Millisecond))
	var out, errs lines
	var drawn bytes.Buffer // what the component drew from Random
	now := time.Date(2026, 7, 28, 12, 0, 0, 250e6, time.UTC)
	st := New(Options{Stdout: &out, Stderr: &errs, Now: func() time.Time { return now },
		Random: io.TeeReader(rand.NewChaCha8([32]byte{1}), &drawn)})
	defer st.Close()
	call := func(name string, args ...any) any {
		t.Helper()
		v, err := in.Call(WithState(context.Background(), st), name, args...)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return v
	}
	if got := call("greet", "wasm"); got != "Hello, wasm!" {
		t.Fatalf("greet = %#v", got)
	}
	if !slices.Equal(out.got, []string{"Hello, wasm!"}) || !slices.Equal(errs.got, []string{"greeted 4 characters"}) {
		t.Fatalf("stdout %q, stderr %q", out.got, errs.got)
	}
	if got := call("now-ms"); got != float64(now.UnixMilli()) {
		t.Fatalf("Date.now() = %v, want %v", got, now.UnixMilli())
	}
	mono := call("monotonic").([]any)
	if a, b := mono[0].(float64), mono[1].(float64); a < 0 || b < a {
		t.Fatalf("performance.now() gave %v then %v", a, b)
	}
	rs := call("randoms", uint64(8)).([]any)
	seen := map[float64]bool{}
	for _, r := range rs {
		f := r.(float64)
		if f < 0 || f >= 1 || math.IsNaN(f) {
			t.Fatalf("Math.random() = %v", f)
		}
		seen[f] = true
	}
	if len(seen) < 7 {
		t.Fatalf("Math.random() repeats: %v", rs)
	}
	rb := call("random-bytes", uint64(16)).([]any)
	got := make([]byte, len(rb))
	for i, v := range rb {
		got[i] = byte(v.(uint64))
	}
	if len(got) != 16 || !bytes.Contains(drawn.Bytes(), got) {
		t.Fatalf("getRandomValues = %x, not bytes of the Random source", got)
	}
	out.got = nil
	if n := call("flood", uint64(3000), uint64(4)); n != uint64(3000) {
		t.Fatalf("flood = %v", n)
	}
	if len(out.got) != defaultLogLines || out.got[0] != "0 xxxx" || st.Dropped() == 0 {
		t.Fatalf("a flood of 3000 lines wrote %d, dropped %d bytes", len(out.got), st.Dropped())
	}
	out.got = nil
	call("flood", uint64(1), uint64(5000))
	if len(out.got) != 1 || len(out.got[0]) != defaultLogLineText || !strings.HasPrefix(out.got[0], "0 xx") {
		t.Fatalf("a 5002-byte line was written as %d lines", len(out.got))
	}
	// The next call has its own bounds.
	out.got = nil
	call("greet", "again")
	if !slices.Equal(out.got, []string{"Hello, again!"}) {
		t.Fatalf("stdout after a flood: %q", out.got)
	}
}
