package runtime

// This file is the contract other packages (hostapi, plugins,
// internal/server) program against; names and signatures are fixed.

import (
	"context"
	"io"
	"log/slog"
	"time"
)

// Config configures an Engine. The zero value is usable: an on-disk
// compilation cache under the user cache directory and no logging.
type Config struct {
	// CacheDir is the directory of the compilation cache. Empty means
	// os.UserCacheDir()/wasmcp/cache; the engine creates it 0700 and keeps
	// entries per wazero version. It holds native code, and the engine
	// treats it as untrusted: every entry is authenticated (an
	// HMAC-SHA256 under the cache key) before wazero reads it, and one
	// that does not verify is deleted and the module compiled again.
	CacheDir string
	// CacheKeyFile is the 32-byte key that authenticates the cache's
	// entries, created 0600 on first use; it must be outside CacheDir.
	// Empty means $WASMCP_CACHE_KEY, else
	// os.UserConfigDir()/wasmcp/cache.key. Without a usable key the
	// engine runs without the on-disk cache and logs why.
	CacheKeyFile string
	// NoCache disables the on-disk cache (compiled code is still shared in
	// memory within the process).
	NoCache bool
	// Logger receives the engine's own log lines; nil discards them.
	Logger *slog.Logger
	// BackgroundCPUs is how many calls that have run past CPUSlice may run
	// guest code at once (the others wait, parked, for their turn, shared
	// round robin between plugins). 0 means max(1, GOMAXPROCS-1), so that
	// a fresh call always finds a processor; negative turns scheduling off.
	BackgroundCPUs int
	// CPUSlice is the guest time a call runs before it becomes background;
	// 0 means 5 ms. A background call yields its turn every 2 × CPUSlice.
	CPUSlice time.Duration
	// Modules bounds what a compiled module may declare; zero fields take
	// the defaults (DefaultModuleLimits).
	Modules ModuleLimits
	// ExtismUser lists the functions of the extism:host/user module that
	// an Extism plugin may import (package plugins supplies hyper-mcp's).
	// An import of any other is a load error naming it; nil lists none.
	// Names must be distinct and not empty.
	ExtismUser []ExtismFunction
}

// ExtismFunction is one function of the extism:host/user module, called
// with the Extism convention (the runtime's kernel does the memory
// plumbing; Host gives the meaning). The errno abi.ErrCanceled traps,
// stopping the guest.
type ExtismFunction struct {
	// Name is the function's import name and the method of the
	// Host.Call it makes.
	Name string
	// Param: the function takes the handle (an i64) of a kernel block
	// whose bytes are the params of Host.Call ("null" for a bad handle);
	// a method the Host's Granter refuses gets "{}", and a block over
	// the params cap of a host call fails with abi.ErrTooBig, uncalled.
	// Without Param, the params are "{}".
	Param bool
	// Result: the function returns the handle (an i64) of a new block
	// holding Host.Call's result, 0 on an errno. Without it, the result
	// is dropped.
	Result bool
}

// Mode is how a module is called.
type Mode int

const (
	// Reactor modules export wasmcp_call and are pooled.
	Reactor Mode = iota + 1
	// Command modules export _start only and run once per call in a fresh
	// instance.
	Command
	// Extism modules import from extism:host/env: they are pooled like a
	// reactor and called per export with Pool.CallExport.
	Extism
	// Component is the mode of a WebAssembly component (Component Model,
	// WASI 0.2), compiled by Engine.CompileComponent and called per export
	// with Pool.CallComponent.
	Component
)

// Import is one import of a module.
type Import struct {
	Module string
	Name   string
}

// Limits bounds one plugin's instances. Zero fields take the defaults in
// DefaultLimits.
type Limits struct {
	// Memory is the linear-memory limit of each instance, in bytes
	// (rounded down to 64 KiB pages).
	Memory uint64
	// Timeout is the wall-clock deadline of one call.
	Timeout time.Duration
	// MaxOutput is the most bytes a call may write with output_write (or
	// stdout in command mode); the first byte over it traps the guest.
	MaxOutput int
	// Instances is the pool size: at most this many calls run at once.
	Instances int
	// MaxQueue is how many calls may wait for a free instance; further
	// calls fail at once with KindBusy. It bounds the memory queued calls
	// hold; QueueWait is what sheds load. Zero means 64 × Instances.
	MaxQueue int
	// QueueWait bounds the expected wait for an instance: a call that
	// would queue behind more calls than the instances can serve in
	// QueueWait (at the pool's recent mean call duration) fails at once
	// with KindBusy, so a quick plugin absorbs bursts of hundreds of
	// callers while a slow one refuses early. A queued call also never
	// waits past its Timeout. Zero means min(Timeout, 5s).
	QueueWait time.Duration
	// RecycleMemory: an instance whose linear memory grew past this many
	// bytes is closed after its call instead of being pooled. Zero means
	// half of Memory.
	RecycleMemory uint64
	// IdleTimeout: a pooled instance unused for this long is closed (by
	// one timer per pool, not per instance). Zero means the default;
	// negative keeps idle instances until the pool closes.
	IdleTimeout time.Duration
}

// DefaultLimits are the limits used for zero fields of Limits.
func DefaultLimits() Limits {
	return Limits{Memory: 64 << 20, Timeout: 10 * time.Second, MaxOutput: 4 << 20, Instances: 4,
		IdleTimeout: 5 * time.Minute}
}

// Mount is a host directory made visible to the guest.
type Mount struct {
	HostPath  string
	GuestPath string
	ReadOnly  bool
}

// Sandbox is what a plugin's instances may see beyond the wasmcp imports.
// The zero value grants nothing: no files, no environment, no arguments.
type Sandbox struct {
	Env    map[string]string
	Mounts []Mount
	// Output receives the guest's stdout (command modes excepted) and
	// stderr, capped per call; nil discards. Never os.Stdout.
	Output io.Writer
	// ComponentState, for a component (Mode Component), makes the host
	// state of each new instance (its WASI view: environment, files,
	// output); Env, Mounts and Output are then not used. nil gives
	// instances no state.
	ComponentState func() (InstanceState, error)
}

// InstanceState is a host's state of one component instance, such as
// its WASI resources. Bind returns the context of a call of the instance
// (its instantiation included) carrying the state, for the component's
// host functions to find; Close releases it once the instance is closed.
type InstanceState interface {
	Bind(ctx context.Context) context.Context
	Close() error
}

// Granter is implemented by a Host that can tell, before the params of
// a host call are built, that the plugin's grants refuse method whatever
// its params. The Extism kernel asks it first for each host function
// that hands the host a guest block (http_request and the
// extism:host/user functions), so that a refused call costs no copy of
// the block: grants first, then the params cap, then the copy. A call
// MayCall refuses is still made, with its params left out ("{}", or for
// http/fetch the method and URL alone), for the Host to refuse and audit
// as usual. A wrapping Host passes MayCall on to the Host it wraps.
type Granter interface {
	MayCall(method string) bool
}

// MayCall reports whether h may grant method: h's Granter answer, true
// for a Host that is not a Granter.
func MayCall(h Host, method string) bool {
	g, ok := h.(Granter)
	return !ok || g.MayCall(method)
}

// Host is the per-call host side of the wasmcp imports log and call. The
// runtime does the memory plumbing (bounds checks, copies, result_read);
// Host gives the meaning. Implementations must not block past ctx.
type Host interface {
	// Log handles the log import. level is 0 (debug) to 7 (emergency), as
	// the guest gave it (not clamped). msg aliases guest memory: it is valid
	// only until Log returns.
	Log(ctx context.Context, level int32, msg []byte)
	// Call handles the call import: method and params as the guest gave
	// them. It returns the result JSON and 0, or nil and a negative errno
	// (abi.Err*); with abi.ErrFailed, result is the error JSON that
	// result_read then returns. params is a buffer the runtime reuses: it
	// is valid only until Call returns. result is kept (not copied) until
	// the guest's next call import or the end of the guest call.
	Call(ctx context.Context, method string, params []byte) (result []byte, errno int32)
}
