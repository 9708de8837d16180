package runtime

import (
	"context"
	"testing"
)

// TestCompileCached: PoolStats.CompileCached says whether a compile found
// the module's native code in the compilation cache: not on a cold
// cache, yes on the same engine again and on a new engine (a new
// process) with the same directory, per module and per runtime
// (instrumented or fallback); without the on-disk cache only within the
// engine.
func TestCompileCached(t *testing.T) {
	dir := t.TempDir()
	newEngine := func(noCache bool) *Engine {
		e, err := NewEngine(context.Background(), Config{CacheDir: dir, NoCache: noCache})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		return e
	}
	first, second, mem := newEngine(false), newEngine(false), newEngine(true)
	steps := []struct {
		name   string
		e      *Engine
		module string
		want   bool
	}{
		{"cold cache", first, watGuest, false},
		{"same engine again", first, watGuest, true},
		{"another module", first, watCmd, false},
		{"new engine, same directory", second, watGuest, true},
		{"fallback runtime, cold", second, "reserved.wasm", false},
		{"fallback runtime, new engine", first, "reserved.wasm", true},
		{"no on-disk cache", mem, watGuest, false},
		{"no on-disk cache, same engine again", mem, watGuest, true},
	}
	for _, s := range steps {
		m, err := s.e.Compile(context.Background(), s.module, file(t, s.module)())
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		p, err := m.NewPool(Limits{}, Sandbox{})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := p.Stats().CompileCached; got != s.want {
			t.Errorf("%s: CompileCached = %v, want %v", s.name, got, s.want)
		}
		_ = p.Close(context.Background())
	}
}
