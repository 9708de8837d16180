package runtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tetratelabs/wazero/api"
)

// fakeGlobal is an instrumentation global (the interrupt flag, the fuel)
// outside any guest: the scheduler's tests drive its probe without
// wazero.
type fakeGlobal struct {
	api.MutableGlobal
	v atomic.Uint64
}

func (g *fakeGlobal) Get() uint64  { return g.v.Load() }
func (g *fakeGlobal) Set(v uint64) { g.v.Store(v) }

// probedGuest stands for the guest code of one call: it runs from now
// under ctx, probing every step of guest time as instrumented code exits
// to Go, until its interrupt flag is set. It returns the times (since
// t0) at which a probe parked it and gave it back the processor, and when
// it stopped.
func probedGuest(ctx context.Context, s *scheduler, q *schedQueue, t0 time.Time, step time.Duration) (parked [][2]time.Duration, stopped time.Duration) {
	it := &interrupter{flag: &fakeGlobal{}, fuel: &fakeGlobal{}, stack: &fakeGlobal{}}
	tk := newTask(s, q, it)
	tk.begin(ctx, time.Now())
	for !it.stopping() {
		time.Sleep(step) // guest code runs
		from := time.Now()
		tk.probe()
		if to := time.Now(); to != from {
			parked = append(parked, [2]time.Duration{from.Sub(t0), to.Sub(t0)})
		}
	}
	tk.end(time.Now())
	return parked, time.Since(t0)
}

// TestSchedulerParking (on a fake clock, at the seam of the probe that
// instrumented guest code calls): with one background slot, two calls of
// two pools spinning until their deadlines run their first slice in the
// foreground; then the first to go background takes the slot, the other
// is parked, and they take turns of one quantum each. A parked call's
// deadline stops it at once; a running call's, at its next probe; and
// a call alone keeps the slot past its quantum.
func TestSchedulerParking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			ms      = time.Millisecond
			slice   = 5 * ms
			quantum = 10 * ms
			step    = 100 * time.Microsecond // guest time between probes
		)
		s := &scheduler{slots: 1, slice: slice, quantum: quantum, closed: make(chan struct{})}
		t0 := time.Now()
		type run struct {
			deadline time.Duration
			parked   [][2]time.Duration
			stopped  time.Duration
		}
		a, b := run{deadline: 100 * ms}, run{deadline: 200 * ms}
		guest := func(r *run, q *schedQueue) {
			ctx, cancel := context.WithDeadline(context.Background(), t0.Add(r.deadline))
			defer cancel()
			r.parked, r.stopped = probedGuest(ctx, s, q, t0, step)
		}
		var qa, qb schedQueue
		var wg sync.WaitGroup
		wg.Go(func() { guest(&a, &qa) })
		wg.Go(func() {
			time.Sleep(ms) // b starts a millisecond later: a goes background first
			guest(&b, &qb)
		})
		wg.Wait()

		// a: background at 5 ms with the slot, parked at the end of each
		// of its quanta until b's ends, and at its deadline (100 ms)
		// while parked. b: background at 6 ms, parked until a's quantum
		// ends at 15 ms; alone from 100 ms, it keeps the slot.
		for name, tc := range map[string]struct {
			got     run
			parked  [][2]time.Duration
			stopped time.Duration
		}{
			"a": {a, [][2]time.Duration{{15 * ms, 25 * ms}, {35 * ms, 45 * ms}, {55 * ms, 65 * ms}, {75 * ms, 85 * ms}, {95 * ms, 100 * ms}}, 100 * ms},
			"b": {b, [][2]time.Duration{{6 * ms, 15 * ms}, {25 * ms, 35 * ms}, {45 * ms, 55 * ms}, {65 * ms, 75 * ms}, {85 * ms, 95 * ms}}, 200 * ms},
		} {
			if !slices.Equal(tc.got.parked, tc.parked) {
				t.Errorf("%s parked %s, want %s", name, spans(tc.got.parked), spans(tc.parked))
			}
			if tc.got.stopped != tc.stopped {
				t.Errorf("%s stopped at %v, want %v", name, tc.got.stopped, tc.stopped)
			}
		}
		if s.running != 0 || s.waiting.Load() != 0 || len(s.ring) != 0 {
			t.Errorf("after the calls: running %d, waiting %d, ring %d", s.running, s.waiting.Load(), len(s.ring))
		}
	})
}

// spans formats time spans as [from, to) lists.
func spans(ss [][2]time.Duration) string {
	var b strings.Builder
	for _, s := range ss {
		fmt.Fprintf(&b, "[%v, %v) ", s[0], s[1])
	}
	return strings.TrimSpace(b.String())
}

// TestSchedulerYieldCounts (on a fake clock, at the probe's seam): a call
// alone yields its processor every fgYieldEvery of guest time while it is
// foreground (its first slice), then its thread every bgYieldEvery until
// its deadline stops it. TestSchedulerYields checks the same of a real
// guest on the wall clock, within bounds.
func TestSchedulerYieldCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			deadline = 20 * time.Millisecond
			step     = 50 * time.Microsecond // guest time between probes
		)
		s := &scheduler{slots: 1, slice: defaultSlice, quantum: 2 * defaultSlice, closed: make(chan struct{})}
		t0 := time.Now()
		ctx, cancel := context.WithDeadline(context.Background(), t0.Add(deadline))
		defer cancel()
		var q schedQueue
		parked, stopped := probedGuest(ctx, s, &q, t0, step)
		if len(parked) != 0 || stopped != deadline {
			t.Fatalf("parked %s, stopped at %v; want never parked, stopped at %v", spans(parked), stopped, deadline)
		}
		// Foreground: a yield at every fgYieldEvery up to the slice's end;
		// background: one every bgYieldEvery after it, up to (not at) the
		// deadline, whose probe stops the call instead.
		fg := int64(defaultSlice / fgYieldEvery)
		bg := int64((deadline-defaultSlice)/bgYieldEvery) - 1
		if got := s.yields[0].Load(); got != fg {
			t.Errorf("%d foreground yields, want %d", got, fg)
		}
		if got := s.yields[1].Load(); got != bg {
			t.Errorf("%d background yields, want %d", got, bg)
		}
	})
}
