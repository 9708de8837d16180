package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/runtime"
)

// testRegistry is an empty registry on its own engine, with the shared
// compilation cache, closed at the end of the test.
func testRegistry(tb testing.TB) *Registry {
	tb.Helper()
	ctx := context.Background()
	eng, err := runtime.NewEngine(ctx, runtime.Config{CacheDir: testutil.CacheDir(), Modules: runtime.ModuleLimits{CompileTimeout: testutil.CompileTimeout},
		ExtismUser: ExtismUserFunctions()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { eng.Close(ctx) })
	reg, err := NewRegistry(Options{Engine: eng})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { reg.Close(ctx) })
	return reg
}

func copyFixture(t *testing.T, name, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("../testdata/extism", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func toolNames(reg *Registry) string {
	var names []string
	for _, raw := range reg.Tools() {
		var t struct{ Name string }
		_ = json.Unmarshal(raw, &t)
		names = append(names, t.Name)
	}
	return strings.Join(names, ",")
}

// TestExtismReloadAndCollisions: an Extism plugin reloads when its file
// changes (here from a go-pdk plugin to a C one, both v1), and one whose
// names collide with a serving plugin's is refused, naming both, as for
// wasmcp/1 plugins.
func TestExtismReloadAndCollisions(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.wasm")
	copyFixture(t, "go_v1.wasm", a)
	specs := []Spec{{Path: a}}
	if err := reg.Reload(ctx, specs); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg); !strings.Contains(got, "greet") {
		t.Fatalf("tools = %s", got)
	}
	if p := reg.Plugins()[0]; p.ABI() != ABIExtismV1 || p.Name() != "a" {
		t.Fatalf("plugin %q speaks %s", p.Name(), p.ABI())
	}

	copyFixture(t, "cplugin.wasm", a)
	if err := reg.Reload(ctx, specs); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg); got != "upper" {
		t.Fatalf("tools after reload = %s", got)
	}
	out, err := reg.CallTool(ctx, &Request{Params: json.RawMessage(`{"name":"upper","arguments":{"text":"abc"}}`),
		Parsed: &mcpreq.Params{Name: "upper", Arguments: json.RawMessage(`{"text":"abc"}`)}, Client: &mcpreq.Client{}})
	if err != nil || !strings.Contains(string(out), `"ABC"`) {
		t.Fatalf("upper after reload = %s %v", out, err)
	}

	b := filepath.Join(dir, "b.wasm")
	copyFixture(t, "cplugin.wasm", b)
	err = reg.Reload(ctx, append(specs, Spec{Path: b}))
	if err == nil || !strings.Contains(err.Error(), "upper") {
		t.Fatalf("colliding plugin: err = %v", err)
	}
	if len(reg.Plugins()) != 1 || toolNames(reg) != "upper" {
		t.Fatalf("after the collision: %d plugins, tools %s", len(reg.Plugins()), toolNames(reg))
	}
	// Under a prefix it loads beside the first.
	if err := reg.Reload(ctx, append(specs, Spec{Path: b, Prefix: "b_"})); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg); got != "upper,b_upper" {
		t.Fatalf("tools with a prefix = %s", got)
	}
}

// TestLoaded: Loaded is true for the list Plugins returns, and false for
// another list or order, and for the list of before a reload.
func TestLoaded(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.wasm"), filepath.Join(dir, "b.wasm")
	copyFixture(t, "cplugin.wasm", a)
	copyFixture(t, "cplugin.wasm", b)
	if err := reg.Reload(ctx, []Spec{{Path: a}, {Path: b, Prefix: "b_"}}); err != nil {
		t.Fatal(err)
	}
	ps := reg.Plugins()
	if len(ps) != 2 {
		t.Fatalf("%d plugins loaded, want 2", len(ps))
	}
	for _, tt := range []struct {
		name string
		ps   []*Plugin
		want bool
	}{
		{"the list", ps, true},
		{"a copy", append([]*Plugin(nil), ps...), true},
		{"fewer", ps[:1], false},
		{"another order", []*Plugin{ps[1], ps[0]}, false},
		{"none", nil, false},
	} {
		if got := reg.Loaded(tt.ps); got != tt.want {
			t.Errorf("%s: Loaded = %v, want %v", tt.name, got, tt.want)
		}
	}
	if err := reg.Reload(ctx, []Spec{{Path: a}}); err != nil {
		t.Fatal(err)
	}
	if reg.Loaded(ps) || !reg.Loaded(reg.Plugins()) {
		t.Errorf("after a reload: Loaded(old) = %v, Loaded(new) = %v", reg.Loaded(ps), reg.Loaded(reg.Plugins()))
	}
}
