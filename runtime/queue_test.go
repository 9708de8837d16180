package runtime

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// testHook counts the QueueHook calls and answers Resume with resume.
type testHook struct {
	waiting, resumed atomic.Int32
	deadline         atomic.Bool // Resume's context carried a deadline
	resume           func(ctx context.Context) error
}

func (h *testHook) Waiting() { h.waiting.Add(1) }

func (h *testHook) Resume(ctx context.Context) error {
	h.resumed.Add(1)
	_, ok := ctx.Deadline()
	h.deadline.Store(ok)
	if h.resume == nil {
		return nil
	}
	return h.resume(ctx)
}

var errNoSlot = errors.New("no slot")

// TestQueueHook: a call told its pool's queue through the QueueHook of
// its context: Waiting only when it blocks, Resume only once it has an
// instance, and a failed Resume gives the instance back.
func TestQueueHook(t *testing.T) {
	tests := []struct {
		name      string
		timeout   time.Duration
		blocked   bool   // another call holds the only instance
		queueFull bool   // and another waits in the only queue place
		then      string // once the hooked call is queued: "free", "cancel", "close" or "" (wait)
		resume    func(ctx context.Context) error
		wantKind  Kind // 0: the call succeeds
		wantErr   error
		waiting   int32
		resumed   int32
	}{
		{name: "free instance", waiting: 0, resumed: 0},
		{name: "queued then resumed", blocked: true, then: "free", waiting: 1, resumed: 1},
		{name: "resume fails", blocked: true, then: "free", resume: func(context.Context) error { return errNoSlot },
			wantKind: KindBusy, wantErr: errNoSlot, waiting: 1, resumed: 1},
		// The blocker is cancelled (not left to its own deadline, which
		// would race with the hooked call's), then Resume outlasts the
		// hooked call's deadline.
		{name: "resume outlasts the deadline", timeout: time.Second, blocked: true, then: "free",
			resume:   func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() },
			wantKind: KindDeadline, waiting: 1, resumed: 1},
		{name: "queue full", blocked: true, queueFull: true, wantKind: KindBusy, waiting: 0, resumed: 0},
		{name: "cancelled while queued", blocked: true, then: "cancel", wantKind: KindCanceled, waiting: 1, resumed: 0},
		{name: "closed while queued", blocked: true, then: "close", wantKind: KindClosed, waiting: 1, resumed: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			p := newPool(t, watGuest, Limits{Instances: 1, MaxQueue: 1, Timeout: timeout}, Sandbox{})
			bctx, freeBlocker := context.WithCancel(context.Background())
			defer freeBlocker()
			var wg sync.WaitGroup
			defer wg.Wait()
			if tt.blocked {
				wg.Go(func() { _, _, _ = p.Call(bctx, []byte("l"), nil, nil) })
				waitFor(t, func() bool { return p.Stats().Busy == 1 })
			}
			if tt.queueFull {
				wg.Go(func() { _, _, _ = p.Call(bctx, []byte("e"), nil, nil) })
				waitFor(t, func() bool { return p.Stats().Waiting == 1 })
			}

			h := &testHook{resume: tt.resume}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				out []byte
				err error
			}
			done := make(chan result, 1)
			go func() {
				_, out, err := p.Call(ctx, []byte("e hooked"), nil, &CallOptions{Queue: h})
				done <- result{out, err}
			}()
			if tt.blocked && !tt.queueFull {
				waitFor(t, func() bool { return h.waiting.Load() == 1 })
				switch tt.then {
				case "free":
					freeBlocker()
				case "cancel":
					cancel()
				case "close":
					_ = p.Close(context.Background())
				}
			}
			r := <-done
			freeBlocker()
			if tt.wantKind == 0 {
				if r.err != nil || string(r.out) != "e hooked" {
					t.Fatalf("Call = %q, %v", r.out, r.err)
				}
			} else {
				callErr(t, r.err, tt.wantKind)
				if tt.wantErr != nil && !errors.Is(r.err, tt.wantErr) {
					t.Errorf("error %v does not wrap %v", r.err, tt.wantErr)
				}
			}
			if w, res := h.waiting.Load(), h.resumed.Load(); w != tt.waiting || res != tt.resumed {
				t.Errorf("Waiting ×%d, Resume ×%d; want ×%d, ×%d", w, res, tt.waiting, tt.resumed)
			}
			if tt.resumed > 0 && !h.deadline.Load() {
				t.Error("Resume's context has no deadline: the call's Timeout does not apply")
			}
			wg.Wait()
			// Whatever happened, the slot is free: the instance a failed
			// Resume took goes back, and the pool still answers.
			waitFor(t, func() bool { s := p.Stats(); return s.Busy == 0 && s.Waiting == 0 })
			if tt.then == "close" {
				return
			}
			if _, out, err := p.Call(context.Background(), []byte("e after"), nil, nil); err != nil || string(out) != "e after" {
				t.Fatalf("Call after = %q, %v", out, err)
			}
		})
	}
}

// TestQueueHookRunsNothingBeforeResume: a guest does not start before
// Resume returns (a caller that bounds running calls counts it from
// there).
func TestQueueHookRunsNothingBeforeResume(t *testing.T) {
	p := newPool(t, watGuest, Limits{Instances: 1, MaxQueue: 4, Timeout: 10 * time.Second}, Sandbox{})
	bctx, freeBlocker := context.WithCancel(context.Background())
	defer freeBlocker()
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { _, _, _ = p.Call(bctx, []byte("l"), nil, nil) })
	waitFor(t, func() bool { return p.Stats().Busy == 1 })

	release := make(chan struct{})
	h := &testHook{resume: func(context.Context) error { <-release; return nil }}
	host := &fakeHost{}
	done := make(chan error, 1)
	go func() {
		_, _, err := p.Call(context.Background(), []byte("L1hello"), host, &CallOptions{Queue: h})
		done <- err
	}()
	waitFor(t, func() bool { return h.waiting.Load() == 1 })
	freeBlocker()
	waitFor(t, func() bool { return h.resumed.Load() == 1 })
	time.Sleep(20 * time.Millisecond)
	host.mu.Lock()
	early := len(host.logs)
	host.mu.Unlock()
	if early != 0 {
		t.Fatalf("the guest ran before Resume returned (%d logs)", early)
	}
	if s := p.Stats(); s.Busy != 1 || s.Waiting != 0 {
		t.Errorf("stats while resuming %+v, want the call counted busy, not waiting", s)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	host.mu.Lock()
	defer host.mu.Unlock()
	if len(host.logs) != 1 {
		t.Errorf("logs %q, want one", host.logs)
	}
}

// TestQueueWait: a call that would wait longer than QueueWait for an
// instance (calls ahead ÷ instances × the mean call time) is refused at
// once; one within it queues and runs. A first spinning call lasts its
// 200 ms deadline, so the mean is known; the two that then run and queue
// spin until the test cancels them (so a loaded machine cannot end them
// before they overlap), leaving the mean as it was.
func TestQueueWait(t *testing.T) {
	testutil.WallClock(t) // the mean call time comes from a guest spins in native code, which a fake clock cannot hold
	const timeout = 200 * time.Millisecond
	p := newPool(t, watGuest, Limits{Instances: 1, Timeout: time.Minute, QueueWait: 300 * time.Millisecond}, Sandbox{})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	_, _, err := p.Call(ctx, []byte("l"), nil, nil) // the mean: 200 ms
	cancel()
	callErr(t, err, KindDeadline)
	spin, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for range 2 { // one runs, one queues (expected wait 200 ms)
		wg.Go(func() {
			_, _, err := p.Call(spin, []byte("l"), nil, nil)
			errs <- err
		})
	}
	for p.Stats().Busy+p.Stats().Waiting < 2 {
		if len(errs) > 0 { // refused or failed: they will never overlap
			t.Fatalf("a spinning call ended before the test cancelled it: %v", <-errs)
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	_, _, err = p.Call(context.Background(), []byte("e"), nil, nil) // second in the queue: 400 ms
	e := callErr(t, err, KindBusy)
	if took := time.Since(start); took > timeout/2 {
		t.Errorf("refused after %v, want at once", took)
	}
	t.Logf("refused: %s", e.Message)
	stop()
	wg.Wait()
	for range 2 {
		callErr(t, <-errs, KindCanceled)
	}
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Errorf("call after the queue drained: %v", err)
	}
}
