package mcp

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
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
				err := l.acquire(ctx, 0)
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
	if r, w := l.running.Load(), l.nwait.Load(); r != 0 || w != 0 {
		t.Fatalf("after the hammer: running %d, waiting %d", r, w)
	}
}

func TestCallLimiterBounds(t *testing.T) {
	l := newCallLimiter(1, 1, 50*time.Millisecond)
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
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("gave up after %v", d)
	}
	l.release()
	l.unadmit()
	if !l.admit() {
		t.Fatal("place not given back")
	}
}
