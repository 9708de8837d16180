// Package runtime runs WebAssembly plugins on wazero in a sandbox: it
// compiles modules (with an on-disk cache), keeps bounded pools of
// instances per plugin, enforces memory, time and output limits, wires the
// wasmcp/1 imports to a per-call Host, and classifies every failure. It
// knows nothing about MCP.
//
// Use it in three steps: one Engine per process, Compile each plugin once at
// load, NewPool per (plugin, limits, sandbox), then Call per request with
// the request's Host:
//
//	e, err := runtime.NewEngine(ctx, runtime.Config{Logger: log})
//	m, err := e.Compile(ctx, "weather", wasm) // *ImportError names refused imports
//	p, err := m.NewPool(runtime.Limits{Timeout: 5 * time.Second}, runtime.Sandbox{Output: w})
//	status, out, err := p.Call(ctx, envelope, host, nil) // err is an *Error with a Kind
//
// # Sandbox
//
// Instances get no arguments, only Sandbox.Env and Sandbox.Mounts, an empty
// stdin (reactor mode), crypto randomness, real clocks and sleeps capped at
// 10 ms per poll so deadlines fire. stdout and stderr go to Sandbox.Output,
// 64 KiB each per call. Guest code is interruptible: Compile instruments
// every function entry and loop header (package
// runtime/internal/instrument), so a call past its deadline or cancelled
// is stopped within microseconds, recursion included; a module that cannot
// be instrumented falls back to wazero's slower CloseOnContextDone (see
// Engine). Pooled instances idle for Limits.IdleTimeout are closed.
//
// # Extism
//
// A module importing extism:host/env is an Extism plugin (Mode Extism):
// pooled like a reactor, called per export with Pool.CallExport, on a
// native Go Extism kernel whose memory the guest reaches only through the
// kernel functions (see extism.go and package runtime/internal/extism).
// The functions of extism:host/user it may import are the engine's
// Config.ExtismUser (package plugins supplies hyper-mcp's).
//
// # Components
//
// A WebAssembly component (package runtime/component) is compiled with
// Engine.CompileComponent (Mode Component), pooled like a reactor and
// called per export with Pool.CallComponent, its arguments and result
// as runtime/component's Go values. Every core module of a component is
// instrumented, one interrupter and one scheduler task serve all of an
// instance's core instances, and Limits.Memory bounds the sum of their
// memories (see component.go). Sandbox.ComponentState gives each
// instance its host state (its WASI view).
//
// # Memory
//
// Each instance's linear memory is limited by Limits.Memory through a
// per-instance allocator (see Engine); the wasm call stack and the compiled
// code live outside that limit, so bound Instances too.
package runtime
