package plugins

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestComponentRefused: a component in a plugin list is refused at load
// with an error that names it and says what it exports, instead of the
// core engine's "binary version 0d000100"; the other plugins load.
func TestComponentRefused(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"c-text.wasm", "rust-shapes.wasm"} {
		b, err := os.ReadFile(filepath.Join("../testdata/components", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(dir, "broken.wasm")
	if err := os.WriteFile(bad, []byte("\x00asm\x0d\x00\x01\x00\x07\x05\xff\xff\xff\xff\x0f"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFixture(t, "go_v2.wasm", filepath.Join(dir, "go_v2.wasm"))
	reg := testRegistry(t)
	err := reg.Load(context.Background(), []Spec{
		{Path: filepath.Join(dir, "c-text.wasm")},
		{Path: filepath.Join(dir, "rust-shapes.wasm")},
		{Path: bad},
		{Path: filepath.Join(dir, "go_v2.wasm")},
	})
	if !errors.Is(err, ErrComponentNotRunnable) {
		t.Fatalf("err %v", err)
	}
	for _, want := range []string{
		"plugin " + filepath.Join(dir, "c-text.wasm") + ": components are not yet runnable: a component exporting greet, add, env, wasmcp:c-text/text@0.1.0 (5 tools, 5 imports)",
		"rust-shapes.wasm: components are not yet runnable: a component exporting reverse, wasmcp:rust-shapes/shapes@0.1.0 (4 tools, 10 imports)",
		"broken.wasm: components are not yet runnable: component: ",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "binary version") {
		t.Errorf("the core engine's error: %v", err)
	}
	if ps := reg.Plugins(); len(ps) != 1 {
		t.Errorf("%d plugins loaded, want go_v2 alone", len(ps))
	}
}
