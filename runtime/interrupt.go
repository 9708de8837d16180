package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/sys"

	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// interrupter stops a running instance of an instrumented module by
// storing 1 into its flag global and 0 into its fuel: the guest traps
// (unreachable) at its next function entry or loop header, or, if the fuel
// store raced with the guest's own update and was lost, once its fuel runs
// out (within instrument.Refill bytes of code). One per instance, reused by
// every call: a timer for the call's deadline, reset per call, and a
// context.AfterFunc on the caller's context if it can be cancelled. No
// goroutine is started unless one of them fires.
type interrupter struct {
	e     *Engine
	mu    sync.Mutex // serialises the host's writes to flag and fuel
	flag  api.MutableGlobal
	fuel  api.MutableGlobal
	stack api.MutableGlobal // the stack budget (see instrument.StackName)
	timer *time.Timer       // the deadline; created by the first arm
	done  chan struct{}     // a fire finished (one send per fire)
	fire  func()            // it.onDone, allocated once
	task  *task             // guest-CPU scheduling; nil when the engine has none
	// more are the globals of a component instance's further core
	// instances, set and cleared with the first's (add).
	more []coreGlobals
}

// coreGlobals are the instrumentation's globals of one core instance.
type coreGlobals struct{ flag, fuel, stack api.MutableGlobal }

// add makes the interrupter stop mod too, another core instance of the
// same component instance.
func (it *interrupter) add(mod api.Module) error {
	flag, ok1 := mod.ExportedGlobal(instrument.GlobalName).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(instrument.FuelName).(api.MutableGlobal)
	stack, ok3 := mod.ExportedGlobal(instrument.StackName).(api.MutableGlobal)
	if !ok1 || !ok2 || !ok3 {
		return errors.New("instrumented module exports no interrupt flag")
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.flag.Get() != 0 {
		flag.Set(1)
		fuel.Set(0)
	}
	it.more = append(it.more, coreGlobals{flag, fuel, stack})
	return nil
}

func newInterrupter(e *Engine, mod api.Module) (*interrupter, error) {
	flag, ok1 := mod.ExportedGlobal(instrument.GlobalName).(api.MutableGlobal)
	fuel, ok2 := mod.ExportedGlobal(instrument.FuelName).(api.MutableGlobal)
	stack, ok3 := mod.ExportedGlobal(instrument.StackName).(api.MutableGlobal)
	if !ok1 || !ok2 || !ok3 {
		return nil, errors.New("instrumented module exports no interrupt flag")
	}
	it := &interrupter{e: e, flag: flag, fuel: fuel, stack: stack, done: make(chan struct{}, 2)}
	it.fire = it.onDone
	return it, nil
}

// armed is what arm arranged for one call.
type armed struct {
	cctx  context.Context
	timer bool        // it.timer runs until cctx's deadline
	stop  func() bool // stops the AfterFunc on the caller's ctx; nil if none
}

// arm clears the flag (or sets it if the engine is closing), refills the
// stack budget, and arranges
// for it to be set at cctx's deadline or when ctx, the caller's context
// (cctx's parent, or cctx itself), is cancelled; now is the time. With
// the scheduler the instance's probes do that; without it, a timer and a
// context.AfterFunc. Pass the result to disarm once the guest has
// returned.
func (it *interrupter) arm(ctx, cctx context.Context, now time.Time) armed {
	it.mu.Lock()
	if it.e.closed.Load() {
		it.set()
	} else {
		it.flag.Set(0)
		for _, g := range it.more {
			g.flag.Set(0)
		}
	}
	it.mu.Unlock()
	it.stack.Set(api.EncodeI32(instrument.Stack))
	for _, g := range it.more {
		g.stack.Set(api.EncodeI32(instrument.Stack))
	}
	it.e.inGuest.Add(1)
	a := armed{cctx: cctx}
	if it.task != nil {
		// The scheduler's probe, at every exit of the guest code, checks
		// the deadline and ctx itself (task.probe): no timer to reset and
		// no AfterFunc to register per call. A guest blocked in a host
		// call gets there once the host call returns, as with a timer.
		it.task.begin(cctx, now)
		return a
	}
	if d, ok := cctx.Deadline(); ok {
		if it.timer == nil {
			it.timer = time.AfterFunc(d.Sub(now), it.fire)
		} else {
			it.timer.Reset(d.Sub(now))
		}
		a.timer = true
	}
	if ctx.Done() != nil {
		a.stop = context.AfterFunc(ctx, it.fire)
	}
	return a
}

// disarm cancels what arm arranged. For each callback that has already
// started it waits until the callback has finished, so no write to the
// flag is pending when disarm returns and the next arm's reset cannot be
// overtaken. If the deadline timer fired, it also waits for cctx to be
// done (its own timer may lag by a moment), so that the call is
// classified as past its deadline. It returns the time it was called.
func (it *interrupter) disarm(a armed) time.Time {
	now := time.Now()
	if it.task != nil {
		it.task.end(now)
	}
	defer it.e.inGuest.Add(-1)
	if a.timer && !it.timer.Stop() {
		<-it.done
		<-a.cctx.Done()
	}
	if a.stop != nil && !a.stop() {
		<-it.done
	}
	return now
}

// overflow wraps err, what a call returned, in a *stackOverflow if the
// guest trapped for running out of its stack budget.
func (it *interrupter) overflow(err error) error {
	if err == nil {
		return nil
	}
	if api.DecodeI32(it.stack.Get()) < 0 {
		return &stackOverflow{err}
	}
	for _, g := range it.more {
		if api.DecodeI32(g.stack.Get()) < 0 {
			return &stackOverflow{err}
		}
	}
	return err
}

// stackOverflow is a guest's trap for running out of its stack budget
// (instrument.Stack): it reads as wazero's own stack overflow, whose
// ceiling the budget comes well before.
type stackOverflow struct{ err error }

func (e *stackOverflow) Error() string { return "wasm error: stack overflow\n" + e.err.Error() }
func (e *stackOverflow) Unwrap() error { return e.err }

func (it *interrupter) onDone() {
	it.interrupt()
	it.done <- struct{}{}
}

// interrupt stops the instance. It is safe at any time, even on a closed
// instance (the globals' storage outlives it).
func (it *interrupter) interrupt() {
	it.mu.Lock()
	it.set()
	it.mu.Unlock()
}

// stopping reports whether the flag is set (the guest is to trap at its
// next check).
func (it *interrupter) stopping() bool {
	it.mu.Lock()
	defer it.mu.Unlock()
	return it.flag.Get() != 0
}

// set sets the flag, then empties the fuel so that the next check takes
// the slow path; it.mu is held.
func (it *interrupter) set() {
	it.flag.Set(1)
	it.fuel.Set(0)
	for _, g := range it.more {
		g.flag.Set(1)
		g.fuel.Set(0)
	}
}

// instantiate creates an instance of p's module with config mc under ctx,
// the call's context (the instance's memory is mem; st is the state its
// imports see). For an instrumented module, mc runs no start function:
// instantiate runs m.starts itself, interruptibly, with the semantics of
// wazero's start functions (an exit with code 0 closes the module and is no
// error; another exit is returned as is; any other failure closes the
// module and is wrapped).
func (p *Pool) instantiate(ctx context.Context, st *callState, mem *limitedMemory, mc wazero.ModuleConfig) (api.Module, *interrupter, error) {
	cc := &callCtx{Context: ctx, st: st}
	var sl sleeper
	if p.m.interruptible() {
		mc = mc.WithNanosleep(sl.sleep)
	}
	mod, err := p.m.rt.InstantiateModule(experimental.WithMemoryAllocator(cc, mem), p.m.cm, mc)
	if err != nil || !p.m.interruptible() {
		return mod, nil, err
	}
	it, err := newInterrupter(p.m.e, mod)
	if err != nil {
		_ = mod.Close(context.Background())
		return mod, nil, err
	}
	sl.it = it
	if s := p.m.e.sched; s != nil {
		yield, ok := mod.ExportedGlobal(instrument.YieldName).(api.MutableGlobal)
		if !ok {
			_ = mod.Close(context.Background())
			return mod, nil, errors.New("instrumented module exports no yield switch")
		}
		it.task = newTask(s, &p.sq, it)
		it.task.acct = &p.guestCPU
		sl.task = it.task
		mem.task, mem.yield = it.task, yield
		yield.Set(1)
	}
	p.track(mod, it)
	for _, name := range p.m.starts {
		a := it.arm(ctx, ctx, time.Now())
		_, err := mod.ExportedFunction(name).Call(cc)
		it.disarm(a)
		err = it.overflow(err)
		if err != nil {
			p.untrack(mod)
			_ = mod.Close(context.Background())
			if se, ok := err.(*sys.ExitError); ok {
				if se.ExitCode() == 0 {
					err = nil
				}
				return mod, it, err
			}
			return mod, it, fmt.Errorf("module[] function[%s] failed: %w", name, err)
		}
	}
	return mod, it, nil
}

// sleeper is the guest sleep (poll_oneoff) of an instrumented instance.
// A guest that loops on short sleeps runs little code between them: its
// probes come seconds apart (at 1 ms a sleep, 18 s past a 200 ms
// deadline), so with the scheduler (task) the call's deadline and context
// are checked after every sleep as a probe checks them; and a short loop
// checks its fuel only once per instrument.Budget bytes of its code, dozens
// of sleeps (over half a second of 10 ms sleeps past a deadline or a
// cancellation), so once the interrupt flag is set the guest sleeps no
// more and gets to that check at once. it and task are set before any
// guest code runs.
type sleeper struct {
	it   *interrupter
	task *task
}

func (s *sleeper) sleep(ns int64) {
	if s.it != nil && s.it.stopping() {
		return
	}
	cappedSleep(ns)
	if t := s.task; t != nil && t.ctx != nil && t.expired(time.Now()) {
		t.it.interrupt()
	}
}

// track registers a live instrumented instance so that Engine.Close can
// interrupt it; untrack forgets it when it is closed.
func (p *Pool) track(mod api.Module, it *interrupter) {
	p.mu.Lock()
	p.live[mod] = it
	p.mu.Unlock()
}

func (p *Pool) untrack(mod api.Module) {
	p.mu.Lock()
	delete(p.live, mod)
	p.mu.Unlock()
}

// interruptAll stops every running instrumented call of p (Engine.Close;
// calls that start later see the engine closed in arm). Instances on the
// fallback runtime are stopped by wazero when the runtime closes.
func (p *Pool) interruptAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range p.live {
		it.interrupt()
	}
}
