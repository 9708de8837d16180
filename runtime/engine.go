package runtime

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

const wazeroModule = "github.com/tetratelabs/wazero"

// Engine owns the wazero runtimes (compiler engine, core features V2), the
// compilation cache and the host modules. Compile modules with it once at
// load, then create pools from the modules.
//
// # Interruption
//
// Compile instruments each module (package runtime/internal/instrument): a
// check at every function entry and loop header that charges a fuel
// counter by code size, exits to Go every 64 KiB of code run (so that the
// goroutine can be preempted, e.g. for garbage collection) and then traps
// if the instance's flag is set. With the guest-CPU scheduler
// (Config.BackgroundCPUs) every exit is a probe, which sets the flag once
// the call is past its deadline or its context is done; without it a call
// arms a per-instance timer for its deadline and, if the caller's context
// can be cancelled, context.AfterFunc, either of which sets the flag. So
// a guest past its deadline or cancelled is stopped within microseconds,
// in loops and in recursion alike, and the call is classified
// KindDeadline or KindCanceled. Such modules run on a runtime without
// wazero's WithCloseOnContextDone, whose per-loop exits to Go made loops
// 6–25× slower and cost a goroutine per call.
//
// A module that cannot be instrumented (an instruction outside core
// features V2, an export with a reserved name) is compiled on a second
// runtime, created on first use, with WithCloseOnContextDone as before, and
// the reason is logged. Both runtimes share the compilation cache.
//
// # Memory limits
//
// wazero's WithMemoryLimitPages is per runtime; per-plugin limits are
// enforced instead by a memory allocator given to each instantiation
// (experimental.WithMemoryAllocator): its Reallocate refuses to grow past the
// pool's Limits.Memory, so memory.grow returns -1 exactly as it does at a
// runtime limit. One runtime therefore serves every limit, each module is
// compiled once, and no wasm bytes are kept. NewPool refuses a limit below
// the module's declared minimum.
//
// An Engine is safe for concurrent use.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	cache wazero.CompilationCache
	rt    wazero.Runtime // instrumented modules, no CloseOnContextDone
	wasi  map[string]api.FunctionDefinition
	// extismUser is Config.ExtismUser by name.
	extismUser map[string]ExtismFunction

	safeMu sync.Mutex
	safe   wazero.Runtime // fallback with CloseOnContextDone, created on first use

	sched     *scheduler      // nil when off
	inGuest   atomic.Int64    // calls between arm and disarm
	compiling sync.WaitGroup  // compilations running (see compileWithin)
	done      context.Context // cancelled by Close
	stop      context.CancelFunc

	closed atomic.Bool
	mu     sync.Mutex
	mods   map[*Module]struct{}

	// What this engine compiled (compiledKey), and the
	// authenticated on-disk cache (nil without it; see cache.go).
	compiled sync.Map
	disk     *diskCache
}

// NewEngine creates an Engine. The on-disk cache directory (Config.CacheDir
// or the user cache directory) is created 0700 and namespaced by the wazero
// version, so a server upgrade never loads stale native code; its entries
// are authenticated before use (see Config.CacheDir).
func NewEngine(ctx context.Context, cfg Config) (*Engine, error) {
	user, err := extismUserTable(cfg.ExtismUser)
	if err != nil {
		return nil, err
	}
	cfg.Modules = instrument.WithDefaults(cfg.Modules)
	e := &Engine{cfg: cfg, log: cfg.Logger, mods: map[*Module]struct{}{}, sched: newScheduler(cfg), extismUser: user}
	e.done, e.stop = context.WithCancel(context.Background())
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.cache = wazero.NewCompilationCache()
	if !cfg.NoCache {
		dir, err := cacheDir(cfg.CacheDir)
		if err != nil {
			return nil, err
		}
		root := cfg.CacheDir
		if root == "" {
			root = filepath.Dir(dir)
		}
		disk, err := newDiskCache(root, dir, cfg.CacheKeyFile, e.log)
		if err != nil {
			e.log.Warn("compilation cache: the on-disk cache is off (every start compiles)", "error", err)
		} else {
			c, err := wazero.NewCompilationCacheWithDir(disk.work)
			if err == nil {
				err = disk.setFiles()
			}
			if err != nil {
				_ = disk.close()
				if c != nil {
					_ = c.Close(ctx)
				}
				return nil, fmt.Errorf("open compilation cache: %w", err)
			}
			e.cache, e.disk = c, disk
		}
	}
	rt, err := e.newRuntime(ctx, false)
	if err != nil {
		_ = e.cache.Close(ctx)
		if e.disk != nil {
			_ = e.disk.close()
		}
		return nil, err
	}
	e.rt = rt
	e.wasi = e.rt.Module(abi.WASIModule).ExportedFunctionDefinitions()
	return e, nil
}

// newRuntime creates a runtime on the engine's cache with WASI and the
// wasmcp host module; closeOnDone selects WithCloseOnContextDone.
func (e *Engine) newRuntime(ctx context.Context, closeOnDone bool) (wazero.Runtime, error) {
	rc := wazero.NewRuntimeConfig().
		WithCompilationCache(e.cache).
		WithCloseOnContextDone(closeOnDone).
		WithCoreFeatures(api.CoreFeaturesV2)
	rt := wazero.NewRuntimeWithConfig(ctx, rc)
	if _, err := wasi_snapshot_preview1.Instantiate(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate wasi: %w", err)
	}
	if err := instantiateHostModule(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate %s host module: %w", abi.ImportModule, err)
	}
	if err := e.instantiateExtism(ctx, rt); err != nil {
		_ = rt.Close(ctx)
		return nil, fmt.Errorf("instantiate Extism host modules: %w", err)
	}
	return rt, nil
}

// safeRuntime returns the fallback runtime, creating it on first use.
func (e *Engine) safeRuntime(ctx context.Context) (wazero.Runtime, error) {
	e.safeMu.Lock()
	defer e.safeMu.Unlock()
	if e.safe == nil {
		if e.closed.Load() {
			return nil, &Error{Kind: KindClosed, Message: "engine is closed"}
		}
		rt, err := e.newRuntime(ctx, true)
		if err != nil {
			return nil, err
		}
		e.safe = rt
	}
	return e.safe, nil
}

// cacheDir resolves, creates and secures the cache directory and returns
// its per-wazero-version subdirectory.
func cacheDir(dir string) (string, error) {
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("locate cache directory: %w", err)
		}
		dir = filepath.Join(base, "wasmcp", "cache")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create cache directory: %w", err)
	}
	// The cache holds executable code: keep it private even if it existed.
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("secure cache directory: %w", err)
	}
	sub := filepath.Join(dir, "wazero-"+wazeroVersion())
	if err := os.MkdirAll(sub, 0o700); err != nil {
		return "", fmt.Errorf("create cache directory: %w", err)
	}
	return sub, nil
}

// wazeroVersion is the wazero module version from the build info. Test
// binaries carry no dependency info (and wazero then calls itself "dev"),
// so it falls back to the version in the source path of a wazero function
// (".../wazero@v1.12.0/..."), and to "unknown" when vendored.
func wazeroVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == wazeroModule {
				if d.Replace != nil {
					return "replaced"
				}
				return d.Version
			}
		}
	}
	if f := goruntime.FuncForPC(reflect.ValueOf(wazero.NewRuntime).Pointer()); f != nil {
		file, _ := f.FileLine(f.Entry())
		if _, v, ok := strings.Cut(file, wazeroModule+"@"); ok {
			if v, _, ok := strings.Cut(v, "/"); ok {
				return v
			}
		}
	}
	return "unknown"
}

// Close interrupts running calls (they fail with KindClosed), closes every
// module and pool of the engine, then the runtimes and the cache. Later
// calls fail with KindClosed. Close waits (at most closeWait, or until ctx
// ends) for the interrupted calls to leave guest code before it closes
// the instrumented runtime, since wazero does not expect a module closed
// under running code and the instances' memory is then unmapped; if some
// are still running it leaves that runtime open. It is idempotent.
func (e *Engine) Close(ctx context.Context) error {
	if e.closed.Swap(true) {
		return nil
	}
	e.stop()
	if e.sched != nil {
		e.sched.close()
	}
	e.mu.Lock()
	mods := slices.Collect(maps.Keys(e.mods))
	e.mu.Unlock()
	for _, m := range mods {
		m.interrupt()
	}
	stopped := e.waitGuests(ctx) && e.waitCompiles(ctx)
	var errs []error
	for _, m := range mods {
		errs = append(errs, m.Close(ctx))
	}
	if !stopped {
		// Closing the runtimes would unmap the linear memory of a guest
		// that is still running (see limitedMemory) or pull the store
		// from under a compilation: leave them to the process's exit.
		e.log.Warn("calls or compilations still running after the engine closed; its runtimes are left open",
			"calls", e.inGuest.Load())
		return errors.Join(errs...)
	}
	errs = append(errs, e.rt.Close(ctx))
	e.safeMu.Lock()
	if e.safe != nil {
		errs = append(errs, e.safe.Close(ctx))
	}
	e.safeMu.Unlock()
	errs = append(errs, e.cache.Close(ctx))
	if e.disk != nil {
		errs = append(errs, e.disk.close())
	}
	return errors.Join(errs...)
}

func (e *Engine) compileWorkers() int { return goruntime.NumCPU() }

// closeWait bounds how long Close waits for interrupted calls: a call
// blocked in a host function leaves guest code only when that returns.
const closeWait = time.Second

// waitCompiles waits for the compilations Close cancelled to return (they
// stop at wazero's next function boundary), at most closeWait or until
// ctx ends, and reports whether they all did.
func (e *Engine) waitCompiles(ctx context.Context) bool {
	ch := make(chan struct{})
	go func() {
		e.compiling.Wait()
		close(ch)
	}()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// waitGuests waits until no call is in instrumented guest code, at most
// closeWait or until ctx ends, and reports whether none is.
func (e *Engine) waitGuests(ctx context.Context) bool {
	deadline := time.Now().Add(closeWait)
	for e.inGuest.Load() > 0 && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	return e.inGuest.Load() == 0
}

// compiledKey identifies code compiled on the instrumented runtime
// (kind 'i') or the fallback one ('b') in Engine.compiled.
func compiledKey(kind byte, code []byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte{kind})
	h.Write(code)
	var key [sha256.Size]byte
	h.Sum(key[:0])
	return key
}

// compileModule compiles code on rt (the fallback runtime when
// ensureTermination) through the authenticated on-disk cache, and
// reports whether the native code came from a cache: compiled before by
// this engine, or a verified entry of the on-disk cache. An entry that
// does not verify is discarded (logged, naming the plugin) and the module
// compiled; so is a verified one that wazero cannot load.
func (e *Engine) compileModule(ctx context.Context, rt wazero.Runtime, ensureTermination bool, plugin string, code []byte) (wazero.CompiledModule, bool, error) {
	kind := byte('i')
	if ensureTermination {
		kind = 'b'
	}
	key := compiledKey(kind, code)
	_, seen := e.compiled.Load(key)
	if e.disk == nil {
		cm, err := rt.CompileModule(ctx, code)
		if err == nil {
			e.compiled.Store(key, struct{}{})
		}
		return cm, seen, err
	}
	names := e.disk.names(code, ensureTermination)
	defer e.disk.clear(names)
	placed := e.disk.place(plugin, names)
	cm, err := rt.CompileModule(ctx, code)
	if err != nil && placed && ctx.Err() == nil {
		e.log.Warn("compilation cache: a verified entry does not load; discarded, the plugin is compiled again",
			"plugin", plugin, "error", err)
		e.disk.drop(names)
		placed = false
		cm, err = rt.CompileModule(ctx, code)
	}
	if err != nil {
		return nil, false, err
	}
	e.compiled.Store(key, struct{}{})
	if !placed {
		e.disk.seal(plugin, names)
	}
	return cm, seen || placed, nil
}
