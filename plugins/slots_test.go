package plugins

import (
	"testing"
	"time"
)

// TestLoadSlots: with the slots taken, waiting loads are granted urgent
// first (hurry), then smallest, then in spec order; a slot is never
// handed to two loads.
func TestLoadSlots(t *testing.T) {
	s := newLoadSlots(1)
	s.acquire(&slotWait{}) // the one slot, taken
	waits := []*slotWait{
		{size: 300, order: 0},
		{size: 100, order: 1},
		{size: 100, order: 2},
		{size: 200, order: 3},
		{size: 900, order: 4}, // hurried below
	}
	got := make(chan int, len(waits))
	for _, w := range waits {
		go func() {
			s.acquire(w)
			got <- w.order
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		s.mu.Lock()
		n := len(s.waiting)
		s.mu.Unlock()
		if n == len(waits) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d loads waiting", n, len(waits))
		}
		time.Sleep(time.Millisecond)
	}
	s.hurry(waits[4])
	for _, want := range []int{4, 1, 2, 3, 0} {
		s.release()
		if o := <-got; o != want {
			t.Fatalf("granted load %d, want %d", o, want)
		}
		select {
		case o := <-got:
			t.Fatalf("load %d granted too with one slot", o)
		default:
		}
	}
	s.release()
	if s.free != 1 {
		t.Fatalf("%d slots free after every release, want 1", s.free)
	}
}
