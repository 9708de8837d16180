package component

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// BenchmarkEcho measures one call of echo.wasm's echo: lowering the
// string (realloc in the guest), the core call, lifting the result.
func BenchmarkEcho(b *testing.B) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cc, err := Compile(ctx, rt, load(b, "../../internal/component/testdata/echo.wasm"), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := strings.Repeat("x", 64)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		in, err := cc.Instantiate(ctx) // echo's bump allocator never frees
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		for range 1000 {
			if _, err := in.Call(ctx, "echo", s); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		in.Close(ctx)
		b.StartTimer()
	}
}

// BenchmarkHostCall measures a call of linked.wasm's sum, whose core
// function calls the host's add: two lifts and two lowers of two u32s.
func BenchmarkHostCall(b *testing.B) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cc, err := Compile(ctx, rt, load(b, "testdata/linked.wasm"), (&linkedHost{}).host())
	if err != nil {
		b.Fatal(err)
	}
	in, err := cc.Instantiate(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := in.Call(ctx, "sum", uint64(1), uint64(2)); err != nil {
			b.Fatal(err)
		}
	}
}
