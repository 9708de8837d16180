package plugins

import (
	"testing"
	"testing/synctest"
)

// TestLoadSlots: with the slots taken, waiting loads are granted urgent
// first (hurry), then smallest, then in spec order; a slot is never
// handed to two loads.
func TestLoadSlots(t *testing.T) {
	// On a fake clock: once every goroutine is blocked (synctest.Wait),
	// each load is known to wait, and a second grant to have not come.
	synctest.Test(t, func(t *testing.T) {
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
		synctest.Wait()
		s.mu.Lock()
		n := len(s.waiting)
		s.mu.Unlock()
		if n != len(waits) {
			t.Fatalf("%d of %d loads waiting", n, len(waits))
		}
		s.hurry(waits[4])
		for _, want := range []int{4, 1, 2, 3, 0} {
			s.release()
			if o := <-got; o != want {
				t.Fatalf("granted load %d, want %d", o, want)
			}
			synctest.Wait()
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
	})
}
