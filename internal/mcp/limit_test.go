package mcp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestCallLimiterHammer: many goroutines acquire and release; no more
// than max ever run, every waiter is eventually served (no lost wakeups),
// and giving up while being granted passes the slot on.
func TestCallLimiterHammer(t *testing.T) {
	const max = 3
	l := newCallLimiter(max, 1000, time.Minute)
	var now, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 300 {
				ctx := context.Background()
				var cancel context.CancelFunc = func() {}
				if (g+i)%7 == 0 {
					ctx, cancel = context.WithTimeout(ctx, time.Microsecond)
				}
				var err error
				if (g+i)%5 == 0 { // a call resuming after it yielded
					err = l.acquireFirst(ctx, 0)
				} else {
					err = l.acquire(ctx, 0)
				}
				cancel()
				if err != nil {
					if !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("acquire: %v", err)
					}
					continue
				}
				n := now.Add(1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				now.Add(-1)
				l.release()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("waiters never served (lost wakeup)")
	}
	if p := peak.Load(); p > max {
		t.Fatalf("%d ran at once, max %d", p, max)
	}
	if r, w := l.running.Load(), l.nwait.Load(); r != 0 || w != 0 || l.nfirst != 0 {
		t.Fatalf("after the hammer: running %d, waiting %d, nfirst %d", r, w, l.nfirst)
	}
}

// TestCallLimiterBounds (on a fake clock): admission is running plus
// waiting calls, a call that finds no slot gives up after exactly the
// wait timeout, and an unadmitted place is given back.
func TestCallLimiterBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const timeout = 50 * time.Millisecond
		l := newCallLimiter(1, 1, timeout)
		if !l.admit() || !l.admit() || l.admit() {
			t.Fatal("admission is not running + waiting")
		}
		if err := l.acquire(context.Background(), l.waitTimeout); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := l.acquire(context.Background(), l.waitTimeout); !errors.Is(err, errBusyWait) {
			t.Fatalf("second acquire = %v, want busy after the wait timeout", err)
		}
		if d := time.Since(start); d != timeout {
			t.Fatalf("gave up after %v, want %v", d, timeout)
		}
		l.release()
		l.unadmit()
		if !l.admit() {
			t.Fatal("place not given back")
		}
	})
}

// TestCallLimiterResumeFirst: calls that resume (acquireFirst) get freed
// slots before calls that have not started, in arrival order among
// themselves. On a fake clock: each waiter is known to be queued once
// every goroutine is blocked (synctest.Wait).
func TestCallLimiterResumeFirst(t *testing.T) {
	tests := []struct {
		name  string
		first []bool // waiters, in arrival order: true for acquireFirst
		want  []int  // the order in which they get a slot
	}{
		{"new calls in arrival order", []bool{false, false, false}, []int{0, 1, 2}},
		{"a resuming call ahead of new ones", []bool{false, false, true}, []int{2, 0, 1}},
		{"resuming calls in arrival order", []bool{true, false, true, false, true}, []int{0, 2, 4, 1, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l := newCallLimiter(1, len(tt.first), time.Minute)
				if err := l.acquire(context.Background(), 0); err != nil {
					t.Fatal(err)
				}
				granted := make(chan int, len(tt.first))
				for i, first := range tt.first {
					go func() {
						var err error
						if first {
							err = l.acquireFirst(context.Background(), 0)
						} else {
							err = l.acquire(context.Background(), 0)
						}
						if err != nil {
							t.Error(err)
						}
						granted <- i
					}()
					synctest.Wait()
					if n := l.nwait.Load(); n != int64(i+1) {
						t.Fatalf("%d waiting after %d arrived", n, i+1)
					}
				}
				for _, want := range tt.want {
					l.release()
					if got := <-granted; got != want {
						t.Fatalf("waiter %d got the slot, want %d", got, want)
					}
				}
				l.release()
				if r, w := l.running.Load(), l.nwait.Load(); r != 0 || w != 0 || l.nfirst != 0 {
					t.Fatalf("after: running %d, waiting %d, nfirst %d", r, w, l.nfirst)
				}
			})
		})
	}
}

// TestCallLimiterIdleShare: with every run slot held by calls of shares
// within their bound, the first call of a share with none running runs
// at once (one past the bound); its second call waits like any other and
// gets the next slot given back. On a fake clock: "at once" is before
// any time passes, "waits" is still blocked once every goroutine is.
func TestCallLimiterIdleShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		l := newCallLimiter(2, 10, time.Minute)
		l.perShare = 1
		a, b, c := l.share("a"), l.share("b"), l.share("c")
		for _, ks := range []*shareState{a, b} {
			if err := l.acquireAt(ctx, 0, false, ks); err != nil {
				t.Fatal(err)
			}
		}
		// With a wait timeout: a call that waited would fail.
		if err := l.acquireAt(ctx, time.Nanosecond, false, c); err != nil {
			t.Fatalf("the first call of an idle share waited for the slots others hold: %v", err)
		}
		if n := l.running.Load(); n != 3 {
			t.Fatalf("running %d, want 3 (one past the bound)", n)
		}
		// d's first call runs too; a second call of c waits (its share is
		// at its bound), and gets c's slot when c's first call ends.
		d := l.share("d")
		if err := l.acquireAt(ctx, 0, false, d); err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() { got <- l.acquireAt(ctx, 0, false, c) }()
		synctest.Wait()
		if n := l.nwait.Load(); n != 1 {
			t.Fatalf("the second call of c did not wait: %d waiting", n)
		}
		l.releaseShare(c)
		synctest.Wait()
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatal("the waiting call of c was not granted when c had none running")
		}
		for _, ks := range []*shareState{a, b, c, d} {
			l.releaseShare(ks)
		}
		if r, w := l.running.Load(), l.nwait.Load(); r != 0 || w != 0 {
			t.Fatalf("after: running %d, waiting %d", r, w)
		}
	})
}
