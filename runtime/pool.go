package runtime

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/internal/abi"
	rcomp "github.com/wasmcp/wasmcp/runtime/component"
)

// defaultQueueWait is the default of Limits.QueueWait (capped by Timeout).
const defaultQueueWait = 5 * time.Second

// Pool runs calls on one module with one set of limits and one sandbox. In
// reactor mode it keeps up to Limits.Instances instances, created lazily
// and reused while healthy; in command mode it runs each call in a fresh
// instance, at most Limits.Instances at once. A Pool is safe for concurrent
// use; its call path takes no lock shared with other pools.
type Pool struct {
	m     *Module
	lim   Limits
	mc    wazero.ModuleConfig
	out   *lockedWriter
	paths []string                      // host paths to keep out of messages
	state func() (InstanceState, error) // Mode Component: Sandbox.ComponentState

	slots chan struct{} // one token per running call
	done  chan struct{} // closed by Close
	sq    schedQueue    // the pool's calls parked by the scheduler; under e.sched.mu

	mu     sync.Mutex
	idle   []*instance // least recently used first
	closed bool
	live   map[api.Module]*interrupter // instrumented instances not closed yet
	sweep  *time.Timer                 // closes instances idle past IdleTimeout
	swept  bool                        // sweep is armed

	waiting   atomic.Int64
	busy      atomic.Int64
	mean      atomic.Int64 // recent mean time a call holds a slot, ns (EWMA)
	guestCPU  atomic.Int64 // ns, see PoolStats.GuestCPU
	memBytes  atomic.Int64 // see PoolStats.Memory
	created   atomic.Uint64
	discarded atomic.Uint64
	recycled  atomic.Uint64
	expired   atomic.Uint64
}

// PoolStats is a snapshot of a pool's counters.
type PoolStats struct {
	Idle      int    // pooled instances waiting for a call
	Busy      int    // calls running
	Waiting   int    // calls queued for a free slot
	Created   uint64 // instances created since NewPool
	Discarded uint64 // instances closed after a failure
	Recycled  uint64 // healthy instances closed for their memory size
	Expired   uint64 // healthy instances closed after IdleTimeout unused
	// GuestCPU is the guest time the pool's calls have run, as the
	// scheduler credits it (time between the instrumentation's exits,
	// each gap capped at a millisecond); zero without the scheduler.
	GuestCPU time.Duration
	// Memory is the linear memory of the pool's live instances, in bytes.
	Memory int64
	// Compile is how long compiling the pool's module took.
	Compile time.Duration
	// CompileCached is whether that compile found the module's native
	// code in the compilation cache (see Engine.Compile).
	CompileCached bool
}

// instance is one live reactor instance and its reusable call state.
type instance struct {
	mod    api.Module
	it     *interrupter // nil on the fallback runtime
	fn     entryFunc
	idle   time.Time // when it was last pooled
	stack  []uint64
	st     callState
	stdout stdioSink
	stderr stdioSink
	mem    limitedMemory
	// A component instance (Mode Component): its core instances, mod
	// being the first, and their memories (mem is unused).
	comp   *rcomp.Instance
	cmem   *componentMemory
	cstate InstanceState // nil without Sandbox.ComponentState
}

// memSize is the size of the instance's linear memory, all of a
// component instance's memories together.
func (inst *instance) memSize() uint64 {
	if inst.cmem != nil {
		return inst.cmem.total
	}
	return uint64(inst.mod.Memory().Size())
}

// refused reports whether a memory of the instance refused to grow in
// this call.
func (inst *instance) refused() bool {
	if inst.cmem != nil {
		return inst.cmem.refused()
	}
	return inst.mem.refused
}

// NewPool creates a pool for m. Zero fields of l take DefaultLimits (and
// MaxQueue 4 × Instances, RecycleMemory half of Memory); sb is the sandbox
// of every instance. It fails if the limit is below the module's declared
// minimum memory or a mount is not a directory.
func (m *Module) NewPool(l Limits, sb Sandbox) (*Pool, error) {
	l = l.withDefaults()
	if l.Memory < m.minMem {
		return nil, fmt.Errorf("plugin %q: memory limit %d bytes is below the module's minimum of %d", m.name, l.Memory, m.minMem)
	}
	start := m.init
	if m.interruptible() {
		start = "" // the pool runs m.starts itself (see instantiate)
	}
	mc, err := moduleConfig(sb, start)
	if err != nil {
		return nil, fmt.Errorf("plugin %q: %w", m.name, err)
	}
	p := &Pool{
		m:     m,
		lim:   l,
		mc:    mc,
		out:   &lockedWriter{w: sb.Output},
		paths: hostPaths(sb),
		state: sb.ComponentState,
		slots: make(chan struct{}, l.Instances),
		done:  make(chan struct{}),
		live:  map[api.Module]*interrupter{},
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || m.e.closed.Load() {
		return nil, &Error{Kind: KindClosed, Message: "plugin is closed"}
	}
	m.pools[p] = struct{}{}
	return p, nil
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.Memory == 0 {
		l.Memory = d.Memory
	}
	l.Memory &^= 1<<16 - 1
	if l.Memory == 0 {
		l.Memory = 1 << 16
	}
	if l.Timeout <= 0 {
		l.Timeout = d.Timeout
	}
	if l.MaxOutput <= 0 {
		l.MaxOutput = d.MaxOutput
	}
	if l.Instances <= 0 {
		l.Instances = d.Instances
	}
	if l.MaxQueue <= 0 {
		l.MaxQueue = 64 * l.Instances
	}
	if l.QueueWait <= 0 {
		l.QueueWait = min(l.Timeout, defaultQueueWait)
	}
	if l.RecycleMemory == 0 {
		l.RecycleMemory = l.Memory / 2
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	return l
}

// Limits returns the pool's limits with defaults applied.
func (p *Pool) Limits() Limits { return p.lim }

// Call runs one request envelope and returns the guest's status and output.
//
// Reactor mode takes a pooled instance (instantiating one, and running its
// _initialize, when none is idle) and calls wasmcp_call under ctx and
// Limits.Timeout. Command mode instantiates a fresh instance with input on
// stdin and behind input_*; output is stdout plus output_write, exit code 0
// is status 0, 1 is status 1. The timeout covers queueing, instantiation and
// the call. opts may set another timeout, and a QueueHook told when the
// call has to queue for an instance; nil is the pool's Limits.
//
// Every failure is an *Error whose Kind says why (deadline, canceled,
// memory, output, trap, exit, status, busy, closed, bad module) and whose
// Message is short and free of host paths. An instance is discarded after
// any failure and recycled when its memory grew past RecycleMemory.
func (p *Pool) Call(ctx context.Context, input []byte, h Host, opts *CallOptions) (status uint32, output []byte, err error) {
	if p.m.mode == Component {
		return 0, nil, badModule("a component is called with CallComponent")
	}
	return p.call(ctx, job{input: input}, h, opts)
}

// job is what one call runs: the input, and for an Extism module the
// export to call (CallExport), for a component its call (CallComponent).
type job struct {
	input  []byte
	export string
	comp   *componentCall
}

// call is Call for every mode.
func (p *Pool) call(ctx context.Context, j job, h Host, opts *CallOptions) (status uint32, output []byte, err error) {
	if p.isClosed() {
		return 0, nil, closedError()
	}
	start := time.Now()
	timeout := p.timeout(opts)
	if err := ctx.Err(); err != nil {
		return 0, nil, p.ctxError(ctx, ctx, start, timeout, err)
	}
	// Clock reads cost ≈100 ns on some virtual machines, a few per cent of
	// a call: start serves for the deadline and, if the call did not
	// queue, for the time it holds its slot.
	cctx := withCallDeadline(ctx, start.Add(timeout))
	cctx.timeout = timeout
	defer cctx.release()
	var queue QueueHook
	if opts != nil {
		queue = opts.Queue
	}
	queued, err := p.acquire(cctx, queue)
	if err != nil {
		return 0, nil, p.ctxError(ctx, cctx, start, timeout, err)
	}
	held := start
	if queued {
		held = time.Now()
	}
	if p.m.mode == Command {
		defer p.releaseTimed(held, time.Time{})
		return p.command(ctx, cctx, start, j.input, h)
	}
	return p.reactor(ctx, cctx, start, held, j, h)
}

// acquire takes a call slot, queueing if all are taken and the queue is
// not full, and reports whether it queued. A call that queues tells h,
// if any: Waiting before it blocks, Resume once it has its slot.
func (p *Pool) acquire(ctx context.Context, h QueueHook) (bool, error) {
	select {
	case p.slots <- struct{}{}:
		p.busy.Add(1)
		return false, nil
	default:
	}
	return true, p.queue(ctx, h)
}

// queue is acquire once every slot is taken.
func (p *Pool) queue(ctx context.Context, h QueueHook) error {
	n := p.waiting.Add(1)
	if n > int64(p.lim.MaxQueue) {
		p.waiting.Add(-1)
		return &Error{Kind: KindBusy, Message: fmt.Sprintf("plugin is busy (%d calls running, queue full)", p.lim.Instances)}
	}
	if wait := p.expectedWait(n); wait > p.lim.QueueWait {
		p.waiting.Add(-1)
		return &Error{Kind: KindBusy, Message: fmt.Sprintf("plugin is busy (%d calls running, %d queued: about %v to wait)",
			p.lim.Instances, n-1, wait.Round(time.Millisecond))}
	}
	if h != nil {
		h.Waiting()
	}
	err := p.wait(ctx)
	p.waiting.Add(-1)
	if err != nil || h == nil {
		return err
	}
	if err := h.Resume(ctx); err != nil {
		p.release()
		if ctx.Err() != nil {
			return ctx.Err() // Call classifies it: deadline or canceled
		}
		return &Error{Kind: KindBusy, Message: err.Error(), Detail: "resuming after the queue: " + err.Error(), Err: err}
	}
	return nil
}

// wait blocks until the queued call gets a slot.
func (p *Pool) wait(ctx context.Context) error {
	select {
	case p.slots <- struct{}{}:
		p.busy.Add(1)
		if p.isClosed() {
			p.release()
			return closedError()
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-p.done:
		return closedError()
	}
}

func (p *Pool) release() {
	p.busy.Add(-1)
	<-p.slots
}

// releaseTimed releases a slot taken at since and folds the time it was
// held, until now (zero for the clock's time), into the pool's mean (the
// first call's time, then an exponentially weighted average, 1/8 per call;
// concurrent updates may lose one, which only slows the average).
func (p *Pool) releaseTimed(since, now time.Time) {
	if now.IsZero() {
		now = time.Now()
	}
	d := int64(now.Sub(since))
	if m := p.mean.Load(); m == 0 {
		p.mean.Store(d)
	} else {
		p.mean.Store(m + (d-m)/8)
	}
	p.release()
}

// expectedWait is how long the n-th queued call can expect to wait for
// an instance at the pool's recent mean call duration.
func (p *Pool) expectedWait(n int64) time.Duration {
	return time.Duration(p.mean.Load() * ((n + int64(p.lim.Instances) - 1) / int64(p.lim.Instances)))
}

func (p *Pool) isClosed() bool {
	select {
	case <-p.done:
		return true
	default:
		return p.m.e.closed.Load()
	}
}

func closedError() *Error { return &Error{Kind: KindClosed, Message: "plugin is closed"} }

// reactor runs one call on a pooled instance, which holds the slot it took
// at held, and gives the slot back.
func (p *Pool) reactor(ctx context.Context, cctx *deadlineCtx, start, held time.Time, j job, h Host) (uint32, []byte, error) {
	var end time.Time // when the guest returned, if known
	defer func() { p.releaseTimed(held, end) }()
	began := held // when the call's work began, as far as the guest's slice is concerned
	inst := p.takeIdle()
	if inst == nil {
		var err error
		if inst, err = p.newInstance(cctx, h); err != nil {
			return 0, nil, p.classify(ctx, cctx, start, cctx.timeout, err, false, "")
		}
		began = time.Now()
	}
	inst.st.begin(j.input, h, p.lim.MaxOutput)
	inst.st.export, inst.st.comp = j.export, j.comp
	inst.stdout.reset()
	inst.stderr.reset()
	if inst.cmem != nil {
		inst.cmem.resetRefused()
	} else {
		inst.mem.refused = false
	}
	var a armed
	if inst.it != nil {
		// Not the clock: what ran since began (taking an instance,
		// resetting its state) is credited to the guest's slice, a few
		// hundred nanoseconds against milliseconds.
		a = inst.it.arm(ctx, cctx, began)
	}
	cctx.st = &inst.st
	err := inst.fn.CallWithStack(cctx, inst.stack)
	if inst.it != nil {
		end = inst.it.disarm(a)
		err = inst.it.overflow(err)
	}
	status := uint32(inst.stack[0])
	if err == nil { // pitfall 8: the watcher may have closed the module after a clean return
		settle(cctx, end)
		err = cctx.errAt(end)
	}
	if err != nil {
		cerr := p.classify(ctx, cctx, start, cctx.timeout, err, inst.refused(), string(inst.stderr.keep))
		inst.st.end()
		p.discard(inst, &p.discarded)
		return 0, nil, cerr
	}
	out := append([]byte(nil), inst.st.out...)
	inst.st.end()
	if status != abi.StatusOK && status != abi.StatusError {
		p.discard(inst, &p.discarded)
		return status, out, &Error{Kind: KindStatus, ExitCode: status,
			Message: fmt.Sprintf("plugin failed (status %d)", status)}
	}
	if inst.memSize() > p.lim.RecycleMemory {
		p.discard(inst, &p.recycled)
	} else {
		p.putIdle(inst, end)
	}
	return status, out, nil
}

// newInstance instantiates the module and runs its start function under
// ctx (the call's deadline applies).
func (p *Pool) newInstance(ctx context.Context, h Host) (*instance, error) {
	if p.m.mode == Component {
		return p.newComponentInstance(ctx, h)
	}
	inst := &instance{stack: make([]uint64, 1), mem: limitedMemory{limit: p.lim.Memory, declMax: p.m.maxMem, mmap: p.m.interruptible(), acct: &p.memBytes}}
	inst.stdout = stdioSink{out: p.out}
	inst.stderr = stdioSink{out: p.out, head: true, keep: make([]byte, 0, stderrKeep)}
	inst.st.begin(nil, h, p.lim.MaxOutput)
	mc := p.mc.WithStdout(&inst.stdout).WithStderr(&inst.stderr)
	mod, it, err := p.instantiate(ctx, &inst.st, &inst.mem, mc)
	p.created.Add(1)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil && mod.IsClosed() {
		err = errExitedAtStart
	}
	if err != nil {
		p.discarded.Add(1)
		if mod != nil {
			p.closeModule(mod)
		}
		return nil, &startError{err: err, stderr: string(inst.stderr.keep), refused: inst.mem.refused}
	}
	inst.mod, inst.it = mod, it
	inst.fn = p.entry(mod, &inst.st)
	return inst, nil
}

func (p *Pool) takeIdle() *instance {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.idle); n > 0 {
		inst := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		return inst
	}
	return nil
}

func (p *Pool) putIdle(inst *instance, now time.Time) {
	p.mu.Lock()
	if !p.closed {
		p.idle = append(p.idle, inst)
		if p.lim.IdleTimeout > 0 {
			if now.IsZero() {
				now = time.Now()
			}
			inst.idle = now
			p.armSweep(p.lim.IdleTimeout)
		}
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.closeInstance(inst)
}

func (p *Pool) discard(inst *instance, counter *atomic.Uint64) {
	counter.Add(1)
	p.closeInstance(inst)
}

// closeInstance closes a pooled instance and forgets it.
func (p *Pool) closeInstance(inst *instance) {
	if inst.comp == nil {
		p.closeModule(inst.mod)
		return
	}
	p.untrack(inst.mod)
	_ = inst.comp.Close(context.Background())
	if inst.cstate != nil {
		_ = inst.cstate.Close()
	}
}

// closeModule closes an instance's module and forgets it.
func (p *Pool) closeModule(mod api.Module) {
	p.untrack(mod)
	_ = mod.Close(context.Background())
}

// Close closes the pool: idle instances are closed at once, queued calls
// fail with KindClosed, in-flight calls finish and their instances are then
// closed, and later calls fail with KindClosed. It does not wait and is
// idempotent.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.done)
	idle := p.idle
	p.idle = nil
	if p.sweep != nil {
		p.sweep.Stop()
	}
	p.mu.Unlock()
	for _, inst := range idle {
		p.closeInstance(inst)
	}
	p.m.mu.Lock()
	delete(p.m.pools, p)
	p.m.mu.Unlock()
	return nil
}

// Stats returns a snapshot of the pool's counters.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	idle := len(p.idle)
	p.mu.Unlock()
	return PoolStats{
		Idle:          idle,
		Busy:          int(p.busy.Load()),
		Waiting:       int(p.waiting.Load()),
		Created:       p.created.Load(),
		Discarded:     p.discarded.Load(),
		Recycled:      p.recycled.Load(),
		Expired:       p.expired.Load(),
		GuestCPU:      time.Duration(p.guestCPU.Load()),
		Memory:        p.memBytes.Load(),
		Compile:       p.m.compile,
		CompileCached: p.m.cached,
	}
}
