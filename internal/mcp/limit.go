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

	nwait   atomic.Int64 // len(waiters), readable without mu
	mu      sync.Mutex
	waiters []chan struct{} // FIFO; closed when granted a slot
	nfirst  int             // waiters[:nfirst] resume (acquireFirst), FIFO among themselves
}

func newCallLimiter(maxRunning, maxWaiting int, wait time.Duration) *callLimiter {
	return &callLimiter{max: int64(maxRunning), capacity: int64(maxRunning + maxWaiting), waitTimeout: wait}
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

// tryAcquire takes a run slot if one is free.
func (l *callLimiter) tryAcquire() bool {
	for {
		n := l.running.Load()
		if n >= l.max {
			return false
		}
		if l.running.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// acquire waits for a run slot. It fails when ctx ends or, if timeout is
// positive, after timeout.
func (l *callLimiter) acquire(ctx context.Context, timeout time.Duration) error {
	return l.acquireAt(ctx, timeout, false)
}

// acquireFirst is acquire for a call that resumes after yielding its slot
// (yieldSlot): it waits ahead of the calls that have not started, since
// it holds a plugin instance that no other call can use meanwhile.
func (l *callLimiter) acquireFirst(ctx context.Context, timeout time.Duration) error {
	return l.acquireAt(ctx, timeout, true)
}

func (l *callLimiter) acquireAt(ctx context.Context, timeout time.Duration, first bool) error {
	if l.tryAcquire() {
		return nil
	}
	l.mu.Lock()
	l.nwait.Add(1) // before trying again: a release now sees a waiter
	if l.tryAcquire() {
		l.nwait.Add(-1)
		l.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	if first {
		l.waiters = slices.Insert(l.waiters, l.nfirst, w)
		l.nfirst++
	} else {
		l.waiters = append(l.waiters, w)
	}
	l.mu.Unlock()
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	var err error
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
		err = errBusyWait
	}
	l.mu.Lock()
	if i := slices.Index(l.waiters, w); i >= 0 {
		l.waiters = slices.Delete(l.waiters, i, i+1)
		if i < l.nfirst {
			l.nfirst--
		}
		l.nwait.Add(-1)
		l.mu.Unlock()
		return err
	}
	l.mu.Unlock()
	l.release() // granted while giving up: pass the slot on
	return err
}

// release gives a run slot back, to the first waiter if there is one.
func (l *callLimiter) release() {
	l.running.Add(-1)
	if l.nwait.Load() == 0 {
		return
	}
	l.mu.Lock()
	for len(l.waiters) > 0 && l.tryAcquire() {
		w := l.waiters[0]
		l.waiters = slices.Delete(l.waiters, 0, 1)
		if l.nfirst > 0 {
			l.nfirst--
		}
		l.nwait.Add(-1)
		close(w)
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

// admitCall takes a limiter place for cl if its method is bounded; false
// means the server is full and cl must be refused with busyError.
func (s *Server) admitCall(cl *call) bool {
	if !limited(cl.req.Method) {
		return true
	}
	if !s.limit.admit() {
		return false
	}
	cl.admitted = true
	return true
}

// runSlot acquires the run slot of an admitted call (admitting it first
// if the transport did not).
func (s *Server) runSlot(cl *call) error {
	if !cl.admitted {
		if !s.limit.admit() {
			return s.busyError()
		}
		cl.admitted = true
	}
	if err := s.limit.acquire(cl.ctx, s.limit.waitTimeout); err != nil {
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
		s.limit.release()
	}
	if cl.admitted {
		cl.admitted = false
		s.limit.unadmit()
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
		s.limit.release()
	}
	return running
}

func (s *Server) resumeSlot(ctx context.Context, cl *call, paused bool) {
	if !paused {
		return
	}
	actx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(cl.ctx, cancel)
	err := s.limit.acquire(actx, 0)
	stop()
	cancel()
	if err != nil {
		return
	}
	cl.mu.Lock()
	if cl.released {
		cl.mu.Unlock()
		s.limit.release()
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
	s.limit.release()
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
	err := s.limit.acquireFirst(actx, s.limit.waitTimeout)
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
		s.limit.release()
		return errRequestDone
	}
	cl.running = true
	cl.mu.Unlock()
	return nil
}
