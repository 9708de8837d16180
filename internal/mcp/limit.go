package mcp

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// callLimiter bounds the provider calls of a whole Server (tools/call,
// resources/read, prompts/get, completion/complete): at most max run at
// once and at most maxWaiting more wait for a slot. A call is first
// admitted (a place among running and waiting calls, taken without
// blocking, so that transports can refuse a request before dispatching
// it), then acquires a run slot (waiting at most waitTimeout). The fast
// paths are atomic operations only: no lock is shared by every call.
type callLimiter struct {
	max         int64
	capacity    int64 // running + waiting
	admitted    atomic.Int64
	running     atomic.Int64
	waitTimeout time.Duration

	// Shares (Options.MaxCallsPerShare): the run slots that calls of one
	// share key (a plugin) may hold at once. A waiter whose share is full
	// lets the waiters behind it go first.
	perShare int64
	shares   sync.Map // key -> *shareState

	nwait   atomic.Int64 // len(waiters), readable without mu
	mu      sync.Mutex
	waiters []waiter // FIFO
	nfirst  int      // waiters[:nfirst] resume (acquireFirst), FIFO among themselves
}

// waiter is a call waiting for a run slot; ch is closed when granted.
type waiter struct {
	ch chan struct{}
	ks *shareState
}

// shareState counts the run slots held by the calls of one share key.
type shareState struct{ running atomic.Int64 }

func newCallLimiter(maxRunning, maxWaiting int, wait time.Duration) *callLimiter {
	return &callLimiter{max: int64(maxRunning), capacity: int64(maxRunning + maxWaiting), waitTimeout: wait, perShare: int64(maxRunning)}
}

// share returns the state of share key k (nil for "": no share).
func (l *callLimiter) share(k string) *shareState {
	if k == "" {
		return nil
	}
	if v, ok := l.shares.Load(k); ok {
		return v.(*shareState)
	}
	v, _ := l.shares.LoadOrStore(k, &shareState{})
	return v.(*shareState)
}

// admit takes a place for one call; false when running and waiting calls
// are at their bounds.
func (l *callLimiter) admit() bool {
	for {
		n := l.admitted.Load()
		if n >= l.capacity {
			return false
		}
		if l.admitted.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (l *callLimiter) unadmit() { l.admitted.Add(-1) }

// tryAcquire takes a run slot (in ks's share) if one is free.
func (l *callLimiter) tryAcquire(ks *shareState) bool {
	ok, undid := l.take(ks)
	if undid && l.nwait.Load() > 0 {
		// The share's slot was held a moment: a waiter of that share
		// may have been passed over meanwhile.
		l.wake()
	}
	return ok
}

// take takes a slot of ks's share and then a run slot; undid reports that
// it took the share's slot and gave it back. The first call of a share
// with none running takes a run slot even when every one is taken: a
// plugin with nothing running is never kept waiting by plugins that hold
// the slots (each share is at most one past the bound, so the calls
// running stay under max plus the number of plugins).
func (l *callLimiter) take(ks *shareState) (ok, undid bool) {
	first := false
	if ks != nil {
		for {
			m := ks.running.Load()
			if m >= l.perShare {
				return false, false
			}
			if ks.running.CompareAndSwap(m, m+1) {
				first = m == 0
				break
			}
		}
	}
	if first {
		l.running.Add(1)
		return true, false
	}
	for {
		n := l.running.Load()
		if n >= l.max {
			if ks != nil {
				ks.running.Add(-1)
			}
			return false, ks != nil
		}
		if l.running.CompareAndSwap(n, n+1) {
			return true, false
		}
	}
}

// acquire waits for a run slot. It fails when ctx ends or, if timeout is
// positive, after timeout.
func (l *callLimiter) acquire(ctx context.Context, timeout time.Duration) error {
	return l.acquireAt(ctx, timeout, false, nil)
}

// acquireFirst is acquire for a call that resumes after yielding its slot
// (yieldSlot): it waits ahead of the calls that have not started, since
// it holds a plugin instance that no other call can use meanwhile.
func (l *callLimiter) acquireFirst(ctx context.Context, timeout time.Duration) error {
	return l.acquireAt(ctx, timeout, true, nil)
}

func (l *callLimiter) acquireAt(ctx context.Context, timeout time.Duration, first bool, ks *shareState) error {
	if l.tryAcquire(ks) {
		return nil
	}
	l.mu.Lock()
	l.nwait.Add(1) // before trying again: a release now sees a waiter
	if ok, _ := l.take(ks); ok {
		l.nwait.Add(-1)
		l.mu.Unlock()
		return nil
	}
	w := waiter{ch: make(chan struct{}), ks: ks}
	if first {
		l.waiters = slices.Insert(l.waiters, l.nfirst, w)
		l.nfirst++
	} else {
		l.waiters = append(l.waiters, w)
	}
	l.mu.Unlock()
	expired, stop := clock(timeout, false)
	defer stop()
	var err error
	select {
	case <-w.ch:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = errBusyWait
	}
	l.mu.Lock()
	if i := slices.IndexFunc(l.waiters, func(x waiter) bool { return x.ch == w.ch }); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		if i < l.nfirst {
			l.nfirst--
		}
		l.nwait.Add(-1)
		l.mu.Unlock()
		return err
	}
	l.mu.Unlock()
	l.releaseShare(ks) // granted while giving up: pass the slot on
	return err
}

// release gives a run slot back, to the first waiter that may take it.
func (l *callLimiter) release() { l.releaseShare(nil) }

// releaseShare gives back a run slot of ks's share.
func (l *callLimiter) releaseShare(ks *shareState) {
	if ks != nil {
		ks.running.Add(-1)
	}
	l.running.Add(-1)
	if l.nwait.Load() == 0 {
		return
	}
	l.wake()
}

// wake grants free slots to the waiters, in order, skipping those whose
// share is full; a waiter whose share has come to have none running is
// granted whatever the others hold (see take).
func (l *callLimiter) wake() {
	l.mu.Lock()
	for i := 0; i < len(l.waiters); {
		if l.running.Load() >= l.max {
			// Full: only a waiter of a share with none running may go.
			if w := l.waiters[i]; w.ks == nil || w.ks.running.Load() != 0 {
				i++
				continue
			}
		}
		w := l.waiters[i]
		if ok, _ := l.take(w.ks); !ok {
			i++
			continue
		}
		l.waiters = slices.Delete(l.waiters, i, i+1)
		if i < l.nfirst {
			l.nfirst--
		}
		l.nwait.Add(-1)
		close(w.ch)
	}
	l.mu.Unlock()
}

// limited reports whether method runs provider code that the limiter
// bounds. Lists are served from memory and are not bounded.
func limited(method string) bool {
	switch method {
	case methodToolsCall, methodResRead, methodPromptsGet, methodComplete:
		return true
	}
	return false
}

// retryAfterSeconds is the Retry-After of busy answers.
const retryAfterSeconds = 1

var retryAfterValue = []string{strconv.Itoa(retryAfterSeconds)}

// busyError is the answer to a call refused because the server is full.
func (s *Server) busyError() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeRequestTimeout,
		Message: "Server busy: " + strconv.FormatInt(s.limit.max, 10) + " calls are running and the queue is full; retry later",
		Data:    []byte(`{"busy":true,"retryAfterMs":` + strconv.Itoa(retryAfterSeconds*1000) + `}`),
	}
}

var errBusyWait = &jsonrpc.Error{
	Code:    jsonrpc.CodeRequestTimeout,
	Message: "Server busy: no call slot became free in time; retry later",
	Data:    []byte(`{"busy":true,"retryAfterMs":` + strconv.Itoa(retryAfterSeconds*1000) + `}`),
}

// admitCall takes a limiter place for cl if its method is bounded, within
// its principal's share and rate; non-nil means cl must be refused so.
func (s *Server) admitCall(cl *call) *refusal {
	if !limited(cl.req.Method) {
		return nil
	}
	return s.admit(cl)
}

func (s *Server) admit(cl *call) *refusal {
	if s.opts.ToolRate != nil && cl.req.Method == methodToolsCall {
		if r := s.admitToolRate(cl); r != nil {
			return r
		}
	}
	var key principalID
	if s.principals.on {
		key = principalKey(cl)
		if r := s.principals.admit(key, s.principals.clock()); r != nil {
			return r
		}
	}
	if !s.limit.admit() {
		if key.kind != 0 {
			s.principals.done(key, s.principals.clock())
		}
		return &refusal{err: s.busyError(), reason: refusedUnavailable, retryAfter: retryAfterSeconds}
	}
	cl.admitted, cl.pkey = true, key
	return nil
}

// runSlot acquires the run slot of an admitted call (admitting it first
// if the transport did not).
func (s *Server) runSlot(cl *call) error {
	if !cl.admitted {
		if r := s.admit(cl); r != nil {
			return r.err
		}
	}
	if err := s.limit.acquireAt(cl.ctx, s.limit.waitTimeout, false, cl.share); err != nil {
		return err
	}
	cl.mu.Lock()
	cl.running = true
	cl.mu.Unlock()
	return nil
}

// releaseCall gives back what cl holds of the limiter. A slot the call
// takes again later (resumeSlot of a misbehaving Provider that uses its
// Request after returning) is given back at once.
func (s *Server) releaseCall(cl *call) {
	cl.mu.Lock()
	running := cl.running
	cl.running = false
	cl.yielded = false
	cl.released = true
	cl.mu.Unlock()
	if running {
		s.limit.releaseShare(cl.share)
	}
	if cl.admitted {
		cl.admitted = false
		s.limit.unadmit()
		if cl.pkey.kind != 0 {
			s.principals.done(cl.pkey, s.principals.clock())
		}
	}
}

// pauseSlot gives the run slot back while the call waits for the client
// (a client that never answers must not hold a slot), and resumeSlot takes
// one again.
func (s *Server) pauseSlot(cl *call) bool {
	cl.mu.Lock()
	running := cl.running
	cl.running = false
	cl.mu.Unlock()
	if running {
		s.limit.releaseShare(cl.share)
	}
	return running
}

func (s *Server) resumeSlot(ctx context.Context, cl *call, paused bool) {
	if !paused {
		return
	}
	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(cl.ctx, cancel)
	err := s.limit.acquireAt(actx, 0, false, cl.share)
	stop()
	cancel()
	if err != nil {
		return
	}
	cl.mu.Lock()
	if cl.released {
		cl.mu.Unlock()
		s.limit.releaseShare(cl.share)
		return
	}
	cl.running = true
	cl.mu.Unlock()
}

// A call waiting for an instance of its plugin (runtime.Pool's queue)
// yields its run slot, so that calls queued behind a slow plugin do not
// keep calls to other plugins from running: the composition root attaches
// a runtime.QueueHook built on Request.YieldSlot and Request.ResumeSlot.
// The call keeps its admitted place, so running plus waiting calls stay
// bounded by MaxConcurrentCalls + MaxWaitingCalls.
//
// No deadlock: a call that resumes holds a plugin instance and waits for a
// run slot. A call holding a run slot never waits for an instance while
// holding it (it yields first), and it gives the slot back when it ends,
// which its deadline bounds; so the calls holding slots always make
// progress, and the wait is bounded anyway by CallWaitTimeout and the
// call's deadline. A waiter that gives up (timeout, cancellation) passes a
// slot it was granted on, as every waiter does.

// yieldSlot gives cl's run slot back while it waits for a plugin
// instance; resumeSlotAfterYield takes one again.
func (s *Server) yieldSlot(cl *call) {
	cl.mu.Lock()
	if !cl.running {
		cl.mu.Unlock()
		return // not running, or its slot is already paused (clientCall)
	}
	cl.running = false
	cl.yielded = true
	cl.mu.Unlock()
	s.limit.releaseShare(cl.share)
}

func (s *Server) resumeSlotAfterYield(ctx context.Context, cl *call) error {
	cl.mu.Lock()
	if !cl.yielded {
		cl.mu.Unlock()
		return nil
	}
	cl.yielded = false
	cl.mu.Unlock()
	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(cl.ctx, cancel)
	err := s.limit.acquireAt(actx, s.limit.waitTimeout, true, cl.share)
	stop()
	cancel()
	if err != nil {
		if e := cl.ctx.Err(); e != nil && ctx.Err() == nil {
			err = e
		}
		return err
	}
	cl.mu.Lock()
	if cl.released {
		cl.mu.Unlock()
		s.limit.releaseShare(cl.share)
		return errRequestDone
	}
	cl.running = true
	cl.mu.Unlock()
	return nil
}
