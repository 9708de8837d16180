package component

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/tetratelabs/wazero"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

// FuzzComponent compiles, instantiates and calls mutated components with
// every import stubbed: a hostile component must give errors, never a
// panic or a hang (calls run under a deadline).
func FuzzComponent(f *testing.F) {
	for _, p := range []string{"testdata/linked.wasm", "testdata/reenter.wasm", "testdata/mismatched.wasm",
		"testdata/flat.wasm", "../../internal/component/testdata/echo.wasm"} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter().WithCloseOnContextDone(true).WithMemoryLimitPages(64))
	defer rt.Close(ctx)
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := cm.Decode(b)
		if err != nil {
			return
		}
		var calls []string
		host := stubHost(c, &calls)
		host.MaxLift = 1 << 20
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		cc, err := Compile(cctx, rt, c, host)
		if err != nil {
			return
		}
		defer cc.Close(ctx)
		in, err := cc.Instantiate(cctx)
		if err != nil {
			return
		}
		defer in.Close(ctx)
		for _, name := range cc.Exports() {
			ft := cc.Type(name)
			args := make([]any, len(ft.Params))
			for i, p := range ft.Params {
				args[i] = zero(p.Type)
			}
			_, _ = in.Call(cctx, name, args...)
		}
	})
}
