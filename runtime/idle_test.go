package runtime

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// The idle tests run on a fake clock (testing/synctest): the sweep timer
// fires exactly IdleTimeout after an instance was pooled, and a call
// takes no time. The guest is compiled before the bubble (precompile).

// idleCall calls p's guest once, failing the test on an error.
func idleCall(t *testing.T, p *Pool) {
	t.Helper()
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
}

// TestIdleInstancesExpire: an instance idle for IdleTimeout is closed
// then, not a nanosecond before; a fresh one replaces it, and the sweep
// timer re-arms for it.
func TestIdleInstancesExpire(t *testing.T) {
	precompile(t, watGuest)
	synctest.Test(t, func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		p := newPool(t, watGuest, Limits{Instances: 2, IdleTimeout: timeout}, Sandbox{})
		if got := p.Limits().IdleTimeout; got != timeout {
			t.Fatalf("IdleTimeout %v", got)
		}
		for round := uint64(1); round <= 2; round++ {
			idleCall(t, p)
			time.Sleep(timeout - time.Nanosecond)
			synctest.Wait()
			if s := p.Stats(); s.Idle != 1 || s.Expired != round-1 || s.Created != round {
				t.Fatalf("round %d, a nanosecond before the idle timeout: stats %+v", round, s)
			}
			time.Sleep(time.Nanosecond)
			synctest.Wait()
			if s := p.Stats(); s.Idle != 0 || s.Expired != round {
				t.Fatalf("round %d, at the idle timeout: stats %+v", round, s)
			}
		}
	})
}

// TestIdleInstanceInUseDoesNotExpire: an instance used again within
// IdleTimeout each time, however often, is kept.
func TestIdleInstanceInUseDoesNotExpire(t *testing.T) {
	precompile(t, watGuest)
	synctest.Test(t, func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		p := newPool(t, watGuest, Limits{Instances: 1, IdleTimeout: timeout}, Sandbox{})
		for range 30 {
			idleCall(t, p)
			time.Sleep(timeout - time.Nanosecond)
			synctest.Wait()
		}
		if s := p.Stats(); s.Created != 1 || s.Expired != 0 {
			t.Errorf("stats %+v: an instance used every %v expired", s, timeout-time.Nanosecond)
		}
	})
}

// TestIdleTimeoutNegativeKeeps: a negative IdleTimeout keeps idle
// instances for good, without a timer; the default is five minutes.
func TestIdleTimeoutNegativeKeeps(t *testing.T) {
	precompile(t, watGuest)
	synctest.Test(t, func(t *testing.T) {
		p := newPool(t, watGuest, Limits{IdleTimeout: -1}, Sandbox{})
		idleCall(t, p)
		time.Sleep(24 * time.Hour)
		synctest.Wait()
		if s := p.Stats(); s.Idle != 1 || s.Expired != 0 || p.sweep != nil {
			t.Errorf("stats %+v, timer %v", s, p.sweep != nil)
		}
		if d := (Limits{}).withDefaults().IdleTimeout; d != 5*time.Minute {
			t.Errorf("default IdleTimeout %v", d)
		}
	})
}

// gateHost is a Host whose calls block until gate is closed.
type gateHost struct {
	fakeHost
	gate chan struct{}
}

func (h *gateHost) Call(ctx context.Context, method string, params []byte) ([]byte, int32) {
	<-h.gate
	return []byte(`{}`), 0
}

// TestIdleSweepRearms: with two instances pooled at different times, the
// sweep that closes the first re-arms for the second, which is closed
// exactly IdleTimeout after it was pooled.
func TestIdleSweepRearms(t *testing.T) {
	precompile(t, watGuest)
	synctest.Test(t, func(t *testing.T) {
		const timeout = 100 * time.Millisecond
		p := newPool(t, watGuest, Limits{Instances: 2, IdleTimeout: timeout}, Sandbox{})
		h := &gateHost{gate: make(chan struct{})}
		held := make(chan error, 1)
		go func() {
			_, _, err := p.Call(context.Background(), []byte("cm\n{}"), h, nil)
			held <- err
		}()
		synctest.Wait() // the first instance waits in its host call
		idleCall(t, p)  // the second: pooled at 0
		time.Sleep(timeout / 2)
		close(h.gate) // the first: pooled at timeout/2
		if err := <-held; err != nil {
			t.Fatal(err)
		}
		stats := func(at time.Duration, idle int, expired uint64) {
			t.Helper()
			synctest.Wait()
			if s := p.Stats(); s.Created != 2 || s.Idle != idle || s.Expired != expired {
				t.Fatalf("at %v: stats %+v, want 2 created, %d idle, %d expired", at, s, idle, expired)
			}
		}
		stats(timeout/2, 2, 0)
		time.Sleep(timeout/2 - time.Nanosecond)
		stats(timeout-time.Nanosecond, 2, 0)
		time.Sleep(time.Nanosecond)
		stats(timeout, 1, 1)
		time.Sleep(timeout/2 - time.Nanosecond)
		stats(3*timeout/2-time.Nanosecond, 1, 1)
		time.Sleep(time.Nanosecond)
		stats(3*timeout/2, 0, 2)
	})
}
