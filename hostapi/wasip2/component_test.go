package wasip2

import (
	"context"
	"os"
	"testing"

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
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
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
