package plugins

import (
	"context"

	"github.com/wasmcp/wasmcp/runtime"
)

// CallHook observes the plugin calls of a Request that carries it
// (Request.Hook): telemetry, the audit of denials. Each round of the
// input_required flow is one call. Its methods run on the goroutine of
// the call.
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
