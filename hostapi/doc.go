// Package hostapi gives meaning to the wasmcp/1 host calls (ABI §5): log,
// progress, notify/*, stream/close, config/get, http/fetch, kv/*, and the blocking client
// requests elicitation/create, sampling/createMessage and roots/list. Each
// is gated by the operator's Grants for the plugin. The runtime package does
// the guest-memory plumbing; a Host bound to a per-request Client is the
// runtime.Host of one call:
//
//	h, err := hostapi.New(hostapi.Options{Plugin: "weather", Grants: g, KV: kv})
//	...
//	status, out, err := pool.Call(ctx, envelope, h.Bind(client), nil)
//
// Results follow ABI §5: a JSON result and errno 0, or a negative errno
// (abi.Err*); with abi.ErrFailed the result is an error JSON
// {"code","message"}. No method panics: a panic inside one is recovered and
// answered with abi.ErrFailed.
package hostapi
