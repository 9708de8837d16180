package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/internal/abi"
	cm "github.com/wasmcp/wasmcp/internal/component"
	"github.com/wasmcp/wasmcp/internal/component/canon"
	rcomp "github.com/wasmcp/wasmcp/runtime/component"
	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// This file runs WebAssembly components (package runtime/component) under
// the same sandbox as core plugins: one Pool per (component, limits), its
// instances created lazily, reused while healthy and discarded after any
// failure, with the same deadline, CPU scheduling, memory limit and
// classification of failures.
//
// A component instance is several core instances (its own module, the
// WASI adapter, wit-component's shim and fixup modules). Each core module
// is instrumented as a plugin is (Host.Prepare); a module without a
// memory (the shim and fixup modules hold only trampolines and table
// fills) is first given an unexported memory of zero pages, since the
// instrumentation exits to Go through memory.grow, so that every core
// module of a component can be interrupted and scheduled: none is left
// to wazero's CloseOnContextDone, which cannot be mixed with instrumented
// modules linked to it in one runtime. A core module that cannot be
// instrumented for another reason refuses the component.
//
// One interrupter stops all of an instance's core instances at once, one
// scheduler task is charged for all of them, and Limits.Memory bounds the
// sum of the instance's linear memories (see componentMemory): a memory
// grown past what the others leave is refused as memory.grow -1, and the
// call classified KindMemory. Tables stay outside it, bounded per core
// module by ModuleLimits.TableElements.

// coreInfo is what the instrumentation reported of one core module of a
// component, by the order Host.Prepare saw them.
type coreInfo struct {
	maxMem int64 // declared memory maximum removed by instrument, bytes; -1 for none
	start  bool  // a start section moved to instrument.StartName
}

// CompileComponent compiles component c (decoded from a binary of size
// bytes) with host implementing its imports: each core module is
// instrumented (after host.Prepare, if set) and compiled through the
// engine's compilation cache, under the module limits and their
// CompileTimeout. The Module it returns has Mode Component and its
// exports are those Pool.CallComponent can call (runtime/component's
// names). host's Compile and Instantiated are the engine's own.
func (e *Engine) CompileComponent(ctx context.Context, name string, size int, c *cm.Component, host *rcomp.Host) (*Module, error) {
	if e.closed.Load() {
		return nil, &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	if host == nil {
		host = &rcomp.Host{}
	}
	m := &Module{e: e, name: name, mode: Component, rt: e.rt, size: size, maxMem: -1, pools: map[*Pool]struct{}{}}
	h := *host
	lim := e.cfg.Modules
	h.Prepare = func(core []byte) ([]byte, error) {
		if host.Prepare != nil {
			var err error
			if core, err = host.Prepare(core); err != nil {
				return nil, err
			}
		}
		out, info, err := instrumentCore(core, lim)
		if err != nil {
			return nil, err
		}
		ci := coreInfo{maxMem: -1, start: info.Start}
		if info.MemoryMax >= 0 {
			ci.maxMem = info.MemoryMax << 16
		}
		m.cores = append(m.cores, ci)
		return out, nil
	}
	hits, compiles := 0, 0
	h.Compile = func(ctx context.Context, core []byte) (wazero.CompiledModule, error) {
		cmod, hit, err := e.compileModule(ctx, e.rt, false, name, core)
		compiles++
		if hit {
			hits++
		}
		return cmod, err
	}
	h.Instantiated = m.coreInstantiated
	began := time.Now()
	cc, err := e.compileComponentWithin(ctx, func(ctx context.Context) (*rcomp.Compiled, error) {
		return rcomp.Compile(ctx, e.rt, c, &h)
	})
	m.compile = time.Since(began)
	m.cached = compiles > 0 && hits == compiles
	if err != nil {
		var re *Error
		if errors.As(err, &re) && re.Kind == KindClosed {
			return nil, re
		}
		return nil, fmt.Errorf("compile plugin %q: %w", name, &Error{Kind: KindBadModule, Message: "invalid component: " + err.Error(), Detail: err.Error(), Err: err})
	}
	m.comp = cc
	m.exports = cc.Exports()
	if err := e.register(m); err != nil {
		_ = cc.Close(ctx)
		return nil, err
	}
	return m, nil
}

// compileComponentWithin runs compile in a goroutine and gives up at the
// module limits' CompileTimeout, as compileWithin does for a module:
// what an abandoned compilation compiled is closed once it returns.
func (e *Engine) compileComponentWithin(ctx context.Context, compile func(context.Context) (*rcomp.Compiled, error)) (*rcomp.Compiled, error) {
	timeout := e.cfg.Modules.CompileTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	e.mu.Lock()
	if e.closed.Load() {
		e.mu.Unlock()
		return nil, &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	e.compiling.Add(1)
	e.mu.Unlock()
	stop := context.AfterFunc(e.done, cancel)
	defer stop()
	type result struct {
		cc  *rcomp.Compiled
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer e.compiling.Done()
		var r result
		defer func() {
			if p := recover(); p != nil {
				r = result{err: fmt.Errorf("compiler panicked: %v", p)}
			}
			done <- r
		}()
		r.cc, r.err = compile(experimental.WithCompilationWorkers(cctx, max(2, e.compileWorkers())))
	}()
	select {
	case r := <-done:
		if r.err == nil || cctx.Err() == nil || ctx.Err() != nil {
			return r.cc, r.err
		}
	case <-cctx.Done():
		go func() {
			if r := <-done; r.cc != nil {
				_ = r.cc.Close(context.Background())
			}
		}()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if e.closed.Load() {
		return nil, &Error{Kind: KindClosed, Message: "engine is closed"}
	}
	return nil, fmt.Errorf("compiling took longer than %v ([limits] compile_timeout)", timeout)
}

// instrumentCore instruments one core module of a component, its
// imported tables left to the module that defines them
// (instrument.InstrumentLinked); a module without a memory is given one
// of zero pages first (see the top of this file).
func instrumentCore(core []byte, lim ModuleLimits) ([]byte, instrument.Info, error) {
	out, info, err := instrument.InstrumentLinked(core, lim)
	if errors.Is(err, instrument.ErrNoMemory) {
		var with []byte
		if with, err = withEmptyMemory(core); err == nil {
			out, info, err = instrument.InstrumentLinked(with, lim)
		}
	}
	if err != nil {
		return nil, info, fmt.Errorf("core module cannot be instrumented for interruption: %w", err)
	}
	return out, info, nil
}

// withEmptyMemory returns core module b, which has no memory, with a
// memory section declaring one memory of zero pages, placed where the
// section order puts it (before the first global, export, start,
// element, data count, code or data section).
func withEmptyMemory(b []byte) ([]byte, error) {
	if len(b) < 8 {
		return nil, errors.New("core module truncated")
	}
	sec := []byte{5, 3, 1, 0, 0} // memory section: one memory, no maximum, minimum 0
	pos := 8
	for pos < len(b) {
		id := b[pos]
		var size, shift uint64
		n := pos + 1
		for {
			if n >= len(b) || shift > 28 {
				return nil, errors.New("core module: bad section size")
			}
			c := b[n]
			n++
			size |= uint64(c&0x7f) << shift
			shift += 7
			if c&0x80 == 0 {
				break
			}
		}
		if size > uint64(len(b)-n) {
			return nil, errors.New("core module: section past the end")
		}
		if id >= 6 {
			break
		}
		pos = n + int(size)
	}
	return slices.Concat(b[:pos], sec, b[pos:]), nil
}

// componentMemory is the memory allocator of one component instance: a
// limitedMemory per linear memory of its core instances, the sum of
// their sizes bounded by Limits.Memory. It also holds what the engine's
// hook (coreInstantiated) sets up per instance: the interrupter over all
// its core instances, the yield switches the scheduler's probes set.
// One component instance runs one call at a time, so its fields need no
// lock.
type componentMemory struct {
	p      *Pool
	total  uint64 // bytes of all the instance's memories
	mems   []*limitedMemory
	seen   int // mems whose core instance is known (coreInstantiated)
	cores  int // core instances instantiated so far
	yields []api.MutableGlobal
	it     *interrupter
	key    api.Module // the first core instance: the pool tracks the instance by it
}

type componentMemoryKey struct{}

// Allocate gives each memory its own limitedMemory, accounted in c.
func (c *componentMemory) Allocate(_, _ uint64) experimental.LinearMemory {
	m := &limitedMemory{limit: c.p.lim.Memory, declMax: -1, mmap: true, acct: &c.p.memBytes, comp: c}
	c.mems = append(c.mems, m)
	return m
}

// probe reports whether a yield switch of the instance reads 2 (the
// instrumentation's probe, which may come through another core
// instance's memory than its own), handing it to the scheduler.
func (c *componentMemory) probe() bool {
	for _, y := range c.yields {
		if y.Get() == 2 {
			y.Set(1)
			c.it.task.probe()
			return true
		}
	}
	return false
}

// refused reports whether a memory of the instance refused to grow.
func (c *componentMemory) refused() bool {
	return slices.ContainsFunc(c.mems, func(m *limitedMemory) bool { return m.refused })
}

func (c *componentMemory) resetRefused() {
	for _, m := range c.mems {
		m.refused = false
	}
}

// coreInstantiated is the Instantiated hook of every component's host:
// for core instance i of an instance being created by a pool, it gives
// the memories the core instance defined their declared maximum, checks
// the instance's memories against the limit, adds the core instance to
// the interrupter (creating it and the scheduler's task with the first)
// and runs the start function the instrumentation moved out, armed.
func (m *Module) coreInstantiated(ctx context.Context, mod api.Module) error {
	c, _ := ctx.Value(componentMemoryKey{}).(*componentMemory)
	if c == nil || c.cores >= len(m.cores) {
		return errors.New("component instantiated outside a pool")
	}
	info := m.cores[c.cores]
	c.cores++
	for _, lm := range c.mems[c.seen:] {
		lm.declMax = info.maxMem
	}
	c.seen = len(c.mems)
	if c.total > c.p.lim.Memory {
		for _, lm := range c.mems {
			lm.refused = true
		}
		return fmt.Errorf("the component's memories take %d bytes at start, over the limit of %d", c.total, c.p.lim.Memory)
	}
	if c.it == nil {
		it, err := newInterrupter(m.e, mod)
		if err != nil {
			return err
		}
		if s := m.e.sched; s != nil {
			it.task = newTask(s, &c.p.sq, it)
			it.task.acct = &c.p.guestCPU
		}
		c.it, c.key = it, mod
		c.p.track(mod, it)
	} else if err := c.it.add(mod); err != nil {
		return err
	}
	if c.it.task != nil {
		yield, ok := mod.ExportedGlobal(instrument.YieldName).(api.MutableGlobal)
		if !ok {
			return errors.New("instrumented module exports no yield switch")
		}
		yield.Set(1)
		c.yields = append(c.yields, yield)
		for _, lm := range c.mems {
			lm.task = c.it.task
		}
	}
	if !info.start {
		return nil
	}
	fn := mod.ExportedFunction(instrument.StartName)
	if fn == nil {
		return errors.New("instrumented module exports no start function")
	}
	a := c.it.arm(ctx, ctx, time.Now())
	_, err := fn.Call(ctx)
	c.it.disarm(a)
	return c.it.overflow(err)
}

// newComponentInstance instantiates the pool's component under ctx, the
// call's (its deadline applies to the start functions).
func (p *Pool) newComponentInstance(ctx context.Context, h Host) (*instance, error) {
	inst := &instance{stack: make([]uint64, 1)}
	inst.st.begin(nil, h, p.lim.MaxOutput)
	c := &componentMemory{p: p}
	inst.cmem = c
	cc := &callCtx{Context: ctx, st: &inst.st}
	ictx := experimental.WithMemoryAllocator(context.WithValue(cc, componentMemoryKey{}, c), c)
	if p.state != nil {
		st, err := p.state()
		if err != nil {
			p.discarded.Add(1)
			return nil, &startError{err: fmt.Errorf("component host state: %w", err)}
		}
		inst.cstate = st
		ictx = st.Bind(ictx)
	}
	in, err := p.m.comp.Instantiate(ictx)
	p.created.Add(1)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil && c.it == nil {
		err = errors.New("component has no core instance")
	}
	if err != nil {
		p.discarded.Add(1)
		if in != nil {
			_ = in.Close(context.Background())
		}
		if c.key != nil {
			p.untrack(c.key)
		}
		if inst.cstate != nil {
			_ = inst.cstate.Close()
		}
		return nil, &startError{err: err, refused: c.refused()}
	}
	inst.comp, inst.mod, inst.it = in, c.key, c.it
	inst.fn = &componentEntry{in: in, st: &inst.st, state: inst.cstate}
	return inst, nil
}

// componentCall is one CallComponent: what to call, and what came back.
type componentCall struct {
	export string
	args   []any
	result any
	err    error // a failure that left the instance usable (a value that does not fit)
}

// componentEntry runs the export of the call in st (CallComponent) on
// one component instance, in place of wasmcp_call: stack[0] is
// abi.StatusOK with the result in the componentCall, or abi.StatusError
// when the call failed without trapping (the instance is kept).
type componentEntry struct {
	in    *rcomp.Instance
	st    *callState
	state InstanceState // nil for none
}

func (e *componentEntry) CallWithStack(ctx context.Context, stack []uint64) error {
	call := e.st.comp
	if call == nil {
		return errors.New("a component is called with CallComponent")
	}
	if e.state != nil {
		ctx = e.state.Bind(ctx)
	}
	v, err := e.in.Call(ctx, call.export, call.args...)
	if err != nil {
		if u := errors.Unwrap(err); u != nil && err.Error() == call.export+": "+u.Error() {
			err = u // the export's name is the caller's to give
		}
		if e.in.Trapped() || !errors.Is(err, canon.ErrValue) {
			return err
		}
		call.err = err
		stack[0] = abi.StatusError
		return nil
	}
	call.result = v
	stack[0] = abi.StatusOK
	return nil
}

// ErrComponentArgs wraps what CallComponent returns for a call the
// component refused without running (arguments that do not fit the
// function's types): the instance was kept.
var ErrComponentArgs = errors.New("the component cannot take these arguments")

// CallComponent calls export of a component (Mode Component; see
// Module.Exports) with args as runtime/component's Go values, under the
// pool's limits, and returns its result (nil for a function without
// one). Failures are as Call's: an *Error whose Kind says why, after
// which the instance is discarded; arguments the component's canonical
// ABI refuses are an error wrapping ErrComponentArgs, and the instance
// is kept. h is the call's Host (HostOf gives it to the component's
// host functions); opts are as Call's.
func (p *Pool) CallComponent(ctx context.Context, export string, args []any, h Host, opts *CallOptions) (any, error) {
	if p.m.mode != Component {
		return nil, badModule("not a component")
	}
	if !slices.Contains(p.m.exports, export) {
		return nil, badModule(fmt.Sprintf("component has no exported function %q", export))
	}
	call := &componentCall{export: export, args: args}
	status, _, err := p.call(ctx, job{comp: call}, h, opts)
	if err != nil {
		return nil, err
	}
	if status == abi.StatusError {
		return nil, fmt.Errorf("%w: %w", ErrComponentArgs, call.err)
	}
	return call.result, nil
}

// ExitError is what a component's host function returns for the guest's
// exit with code (wasi:cli/exit): the call ends there and is classified
// KindExit, as a core plugin's proc_exit is, and the instance replaced.
func ExitError(code uint32) error { return sys.NewExitError(code) }

// HostOf returns the Host of the runtime call running under ctx (the h
// given to Call, CallExport or CallComponent), as a component's host
// functions get ctx; nil outside a call.
func HostOf(ctx context.Context) Host { return stateOf(ctx).host }
