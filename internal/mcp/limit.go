package mcp

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// callLimiter bounds the provider calls of a whole Server (tools/call,
// resources/read, prompts/get, completion/complete): at most max run at
// once and at most maxWaiting more wait for a slot. A call is first
// admitted (a place among running and waiting calls, taken without
// blocking, so that transports can refuse a request before dispatching
// it), then acquires a run slot (waiting at most waitTimeout).
type callLimiter struct {
	slots       chan struct{}
	capacity    int64 // running + waiting
	admitted    atomic.Int64
	waitTimeout time.Duration
}

func newCallLimiter(maxRunning, maxWaiting int, wait time.Duration) *callLimiter {
	return &callLimiter{slots: make(chan struct{}, maxRunning), capacity: int64(maxRunning + maxWaiting), waitTimeout: wait}
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

// acquire waits for a run slot. It fails when ctx ends or after the wait
// timeout.
func (l *callLimiter) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(l.waitTimeout)
	defer t.Stop()
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return errBusyWait
	}
}

func (l *callLimiter) release() { <-l.slots }

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
		Message: "Server busy: " + strconv.Itoa(cap(s.limit.slots)) + " calls are running and the queue is full; retry later",
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
	if err := s.limit.acquire(cl.ctx); err != nil {
		return err
	}
	cl.mu.Lock()
	cl.running = true
	cl.mu.Unlock()
	return nil
}

// releaseCall gives back what cl holds of the limiter.
func (s *Server) releaseCall(cl *call) {
	cl.mu.Lock()
	running := cl.running
	cl.running = false
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
	select {
	case s.limit.slots <- struct{}{}:
	case <-ctx.Done():
		return
	case <-cl.ctx.Done():
		return
	}
	cl.mu.Lock()
	cl.running = true
	cl.mu.Unlock()
}
