// Package wasip2 is the WASI 0.2 host of wasmcp's components: the
// functions of wasi:io (error, poll, streams), wasi:clocks (wall-clock,
// monotonic-clock), wasi:random (random, insecure, insecure-seed),
// wasi:cli (environment, exit, stdin, stdout, stderr, terminal-*),
// wasi:filesystem (types, preopens) on os.Root mounts, wasi:sockets
// (every operation denied), wasi:http (types, outgoing-handler) through
// hostapi's http/fetch policy, and wasi:config/store, as
// runtime/component Funcs.
//
// The table Funcs returns is static and keyed without versions
// ("wasi:io/streams#[method]output-stream.write"), so that it links a
// component built for any 0.2.x minor version. What one component
// instance sees (its environment, output, mounts, handles) is a State,
// made with New and put in the context of each call with WithState:
//
//	st := wasip2.New(wasip2.Options{Stdout: log, Stderr: log, Env: env})
//	defer st.Close()
//	host := &component.Host{Funcs: wasip2.Funcs(), Drop: wasip2.Drop, ByteLists: true}
//	...
//	res, err := inst.Call(wasip2.WithState(ctx, st), "greet", "world")
//
// Resources the host implements (pollables, streams, descriptors, HTTP
// messages) are representations in the State's own table; a function
// given a representation that is not live, or not of the resource its
// signature names, fails the guest's call (a trap), as do lengths over
// the limits and a call without a State. No function panics.
//
// A component's stdout and stderr are cut into lines, each given to the
// writer of Options in one Write, within the bounds hostapi puts on a
// wasmcp/1 plugin's log (hostapi.MaxLogLines lines of at most
// hostapi.MaxLogLineText bytes per call); the excess is dropped and
// counted (State.Dropped).
package wasip2
