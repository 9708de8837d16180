package runtime

import (
	"context"
	"testing"
	"time"
)

func TestIdleInstancesExpire(t *testing.T) {
	p := newPool(t, watGuest, Limits{Instances: 2, IdleTimeout: 100 * time.Millisecond}, Sandbox{})
	if got := p.Limits().IdleTimeout; got != 100*time.Millisecond {
		t.Fatalf("IdleTimeout %v", got)
	}
	call := func() {
		t.Helper()
		if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	call()
	if s := p.Stats(); s.Idle != 1 {
		t.Fatalf("stats %+v", s)
	}
	waitFor(t, func() bool { s := p.Stats(); return s.Idle == 0 && s.Expired == 1 })
	// A fresh instance after expiry, and the timer re-arms.
	call()
	waitFor(t, func() bool { s := p.Stats(); return s.Idle == 0 && s.Expired == 2 && s.Created == 2 })
}

func TestIdleInstanceInUseDoesNotExpire(t *testing.T) {
	// The idle timeout is far above the 10 ms between calls, so that a
	// loaded machine's scheduling stalls cannot open a gap that long.
	p := newPool(t, watGuest, Limits{Instances: 1, IdleTimeout: 2 * time.Second}, Sandbox{})
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s := p.Stats(); s.Created != 1 || s.Expired != 0 {
		t.Errorf("stats %+v: an instance used every 10ms expired", s)
	}
}

func TestIdleTimeoutNegativeKeeps(t *testing.T) {
	p := newPool(t, watGuest, Limits{IdleTimeout: -1}, Sandbox{})
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if s := p.Stats(); s.Idle != 1 || s.Expired != 0 || p.sweep != nil {
		t.Errorf("stats %+v, timer %v", s, p.sweep != nil)
	}
	if d := (Limits{}).withDefaults().IdleTimeout; d != 5*time.Minute {
		t.Errorf("default IdleTimeout %v", d)
	}
}
