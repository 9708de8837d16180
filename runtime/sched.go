package runtime

import (
	"context"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Guest CPU scheduling (see Engine, "CPU").
//
// Every instrumented instance exits to Go every instrument.Refill bytes of
// guest code; with the yield switch on, the exit is a probe of the
// instance's memory allocator (limitedMemory), which calls task.probe on
// the call's goroutine. A call is foreground until it has run slice of
// guest time; it then becomes background and needs one of the scheduler's
// slots to go on. A background call that has held its slot for a quantum
// gives it up at its next probe if another background call waits. Waiting
// calls are parked on a channel (they use no CPU), queued per Pool, and
// slots are granted round robin between the pools that have waiters, so a
// plugin with eight runaway calls gets the share of a plugin with one.
// Foreground calls never wait: with slots = GOMAXPROCS-1 a fresh call
// always finds a processor.
//
// Running calls also yield at their probes, a foreground call to the Go
// scheduler and a background call to the operating system:
//
//   - A foreground call yields its processor (runtime.Gosched) every
//     fgYieldEvery. A burst of fresh calls of a runaway plugin (eight of
//     them restarting at their deadline) would otherwise hold every P for
//     their whole slice, and the reader, the replies' writer and the calls
//     woken at their deadline waited behind them: a runaway's -32001 came
//     up to 70 ms (once 280 ms) past its deadline.
//   - A background call yields its thread to the kernel (osYield) every
//     bgYieldEvery. The kernel does not preempt a thread that spins on its
//     processor for a thread of the server that has just been woken (the
//     reader of the next request, a reply's writer) until the spinner's
//     time slice ends, milliseconds later: while a runaway held one of two
//     processors, a quick tool's p99 latency was that slice.
//
// Each kind of call gets one kind of yield. With both for background
// calls, in one run in two on a loaded machine a runaway's deadline
// timers fired seconds late (-32001 after 2-9 s); probably because
// Gosched moved the call from thread to thread and the kernel's penalty
// for a sched_yield under contention (the thread is picked last for a
// while) then fell on every thread of the server. Not proven; with one
// kind each it was not seen again.
//
// A parked call still ends at its deadline, on cancellation and on
// Engine.Close: its wait ends, it sets its instance's interrupt flag and
// the guest traps at its next check.

const (
	defaultSlice = 5 * time.Millisecond
	// maxGap caps the guest time one probe credits: a longer gap between
	// two probes is time blocked in a host call or descheduled, not run.
	maxGap = time.Millisecond
	// fgYieldEvery and bgYieldEvery are how often a foreground call
	// yields its processor and a background call its thread (see above):
	// a Gosched costs about 0.2 µs, a sched_yield about 1.5 µs.
	fgYieldEvery = 250 * time.Microsecond
	bgYieldEvery = 100 * time.Microsecond
)

// scheduler is an Engine's guest-CPU scheduler; nil when scheduling is off.
type scheduler struct {
	slots   int
	slice   time.Duration
	quantum time.Duration
	closed  chan struct{} // closed by Engine.Close

	waiting atomic.Int64 // calls parked, readable without mu
	// yields counts the yields of foreground ([0]) and background ([1])
	// calls (a test reads them).
	yields  [2]atomic.Int64
	mu      sync.Mutex
	running int           // background calls holding a slot
	ring    []*schedQueue // queues with waiters, in turn order
}

// newScheduler returns the scheduler of cfg, or nil when cfg turns it off.
func newScheduler(cfg Config) *scheduler {
	slots := cfg.BackgroundCPUs
	if slots < 0 {
		return nil
	}
	if slots == 0 {
		slots = max(1, goruntime.GOMAXPROCS(0)-1)
	}
	slice := cfg.CPUSlice
	if slice <= 0 {
		slice = defaultSlice
	}
	return &scheduler{slots: slots, slice: slice, quantum: 2 * slice, closed: make(chan struct{})}
}

func (s *scheduler) close() { close(s.closed) }

// schedQueue holds one Pool's parked calls, FIFO.
type schedQueue struct {
	waiters []*task
	inRing  bool
}

// task is one instance's scheduling state, reset by every call.
type task struct {
	s    *scheduler
	q    *schedQueue
	it   *interrupter
	acct *atomic.Int64   // the pool's guest CPU, ns; may be nil
	ctx  context.Context // the call's; nil outside a call
	wake chan struct{}   // a slot was granted (buffered 1)

	deadline time.Time // ctx's deadline; zero for none

	last    time.Time     // the previous probe
	yielded time.Time     // the last yield
	cpu     time.Duration // guest time credited so far
	bg      bool          // past its slice
	holding bool          // holds a slot
	since   time.Time     // when it took the slot
}

func newTask(s *scheduler, q *schedQueue, it *interrupter) *task {
	return &task{s: s, q: q, it: it, wake: make(chan struct{}, 1)}
}

// begin resets t for a call under ctx, its guest code starting now. Only
// a call that parks asks for ctx.Done (which a call's deadlineCtx derives
// on demand).
func (t *task) begin(ctx context.Context, now time.Time) {
	t.ctx = ctx
	t.deadline, _ = ctx.Deadline()
	t.last, t.yielded = now, now
	t.cpu, t.bg, t.holding = 0, false, false
}

// end gives back the slot the call holds, if any, once its guest code has
// returned (at now).
func (t *task) end(now time.Time) {
	t.cpu += min(now.Sub(t.last), maxGap)
	if t.acct != nil {
		t.acct.Add(int64(t.cpu))
	}
	if t.holding {
		t.holding = false
		t.s.mu.Lock()
		t.s.releaseLocked()
		t.s.mu.Unlock()
	}
	t.ctx = nil
}

// probe runs on the call's goroutine at each exit of its guest code.
func (t *task) probe() {
	if t.ctx == nil {
		return // guest code run outside a call's arm and disarm: never park it
	}
	now := time.Now()
	t.cpu += min(now.Sub(t.last), maxGap)
	t.last = now
	if t.expired(now) {
		// Past its deadline or cancelled: the guest traps at the flag
		// check that follows the probe.
		t.it.interrupt()
		return
	}
	if d := now.Sub(t.yielded); t.bg && d >= bgYieldEvery {
		osYield()
		t.s.yields[1].Add(1)
		now = time.Now()
		t.last, t.yielded = now, now
	} else if !t.bg && d >= fgYieldEvery {
		goruntime.Gosched()
		t.s.yields[0].Add(1)
		now = time.Now()
		t.last, t.yielded = now, now
	}
	switch {
	case !t.bg:
		if t.cpu < t.s.slice {
			return
		}
		t.bg = true
		t.acquire()
	case !t.holding:
		// Its wait ended without a slot (deadline, cancellation,
		// close): the interrupt flag is set and the guest traps at its
		// next check; let it get there.
	case now.Sub(t.since) >= t.s.quantum && t.s.waiting.Load() > 0:
		t.holding = false
		t.s.mu.Lock()
		t.s.releaseLocked()
		t.s.mu.Unlock()
		t.acquire()
	}
}

// expired reports whether the call is past its deadline or its context
// is done, at now. It is how the deadline and cancellation reach a
// running guest when the engine schedules (see interrupter.arm).
func (t *task) expired(now time.Time) bool {
	if !t.deadline.IsZero() && !now.Before(t.deadline) {
		return true
	}
	if c, ok := t.ctx.(*deadlineCtx); ok {
		return c.parent.Err() != nil
	}
	return t.ctx.Err() != nil
}

// acquire takes a slot, parking the call until one is granted or its wait
// ends. It resets t.last so that the wait is not credited as guest time.
func (t *task) acquire() {
	s := t.s
	defer func() { t.last = time.Now() }()
	s.mu.Lock()
	if s.running < s.slots && len(s.ring) == 0 {
		s.running++
		s.mu.Unlock()
		t.holding, t.since = true, time.Now()
		return
	}
	t.q.waiters = append(t.q.waiters, t)
	if !t.q.inRing {
		t.q.inRing = true
		s.ring = append(s.ring, t.q)
	}
	s.waiting.Add(1)
	s.mu.Unlock()
	select {
	case <-t.wake:
		t.holding, t.since = true, time.Now()
		return
	case <-t.ctx.Done():
	case <-s.closed:
	}
	s.mu.Lock()
	if k := slices.Index(t.q.waiters, t); k >= 0 {
		t.q.waiters = slices.Delete(t.q.waiters, k, k+1)
		s.waiting.Add(-1)
		if len(t.q.waiters) == 0 && t.q.inRing {
			t.q.inRing = false
			s.ring = slices.DeleteFunc(s.ring, func(q *schedQueue) bool { return q == t.q })
		}
	} else {
		// Granted while its wait ended: give the slot on.
		<-t.wake
		s.releaseLocked()
	}
	s.mu.Unlock()
	t.it.interrupt()
}

// releaseLocked gives back one slot and grants free slots to the parked
// calls, one pool at a time in turn; s.mu is held.
func (s *scheduler) releaseLocked() {
	s.running--
	for s.running < s.slots && len(s.ring) > 0 {
		q := s.ring[0]
		w := q.waiters[0]
		q.waiters = slices.Delete(q.waiters, 0, 1)
		s.ring = slices.Delete(s.ring, 0, 1)
		if len(q.waiters) > 0 {
			s.ring = append(s.ring, q)
		} else {
			q.inRing = false
		}
		s.waiting.Add(-1)
		s.running++
		w.wake <- struct{}{}
	}
}
