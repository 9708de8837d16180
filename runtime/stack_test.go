package runtime

import (
	"context"
	goruntime "runtime"
	"testing"
)

// TestStackOverflowHeap: an unbounded recursion is stopped by the stack
// budget (instrument.Stack) long before wazero's own ceiling, which cost
// about 161 MiB of heap per call; the bound here is generous (other
// goroutines of the test binary allocate too), and the pool answers
// afterwards with a new instance.
func TestStackOverflowHeap(t *testing.T) {
	const bound = 64 << 20
	p := newPool(t, watGuest, Limits{}, Sandbox{})
	echo := func() {
		t.Helper()
		if _, out, err := p.Call(context.Background(), []byte("e again"), nil, nil); err != nil || string(out) != "e again" {
			t.Fatalf("echo: %q, %v", out, err)
		}
	}
	echo() // an instance, instantiated outside the measure
	const calls = 3
	for range calls {
		var before, after goruntime.MemStats
		goruntime.ReadMemStats(&before)
		_, _, err := p.Call(context.Background(), []byte("r"), nil, nil)
		goruntime.ReadMemStats(&after)
		e := callErr(t, err, KindTrap)
		if e.Message != "plugin crashed: stack overflow" {
			t.Errorf("message %q, want the stack overflow", e.Message)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("overflowing call: %d MiB allocated", alloc>>20)
		if alloc > bound {
			t.Errorf("an overflowing call allocated %d MiB, bound %d MiB", alloc>>20, bound>>20)
		}
		echo()
	}
	if s := p.Stats(); s.Discarded != calls {
		t.Errorf("stats %+v, want the %d overflowed instances discarded", s, calls)
	}
}
