package plugins

import (
	"context"

	"github.com/wasmcp/wasmcp/runtime"
)

// CallHook observes the plugin calls made under a context carrying it
// (WithCallHook): telemetry. Each round of the input_required flow is one
// call. Its methods run on the goroutine of the call.
type CallHook interface {
	// CallStart is called before plugin runs method (the ABI method) on
	// target (the tool or prompt name, or the resource URI; empty for
	// completions). It returns the call's context, derived from ctx, and
	// the runtime.Host the call uses: host itself or a wrapper of it.
	CallStart(ctx context.Context, plugin, method, target string, host runtime.Host) (context.Context, runtime.Host)
	// CallEnd is called once the call returned, with the context
	// CallStart returned and the runtime's error (a *runtime.Error), or
	// nil.
	CallEnd(ctx context.Context, err error)
}

type callHookKey struct{}

// WithCallHook returns a copy of ctx carrying h for the plugin calls of
// the Registry methods called with it.
func WithCallHook(ctx context.Context, h CallHook) context.Context {
	return context.WithValue(ctx, callHookKey{}, h)
}

func callHookFrom(ctx context.Context) CallHook {
	h, _ := ctx.Value(callHookKey{}).(CallHook)
	return h
}
