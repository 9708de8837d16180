package runtime

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// goodMedian returns the median latency of n echo calls on p, each made
// after a goroutine woken by a timer (as a server's reader is woken by the
// network poller) hands the request to a worker: the latency includes
// the waits for a processor, counted from the timer's expiry.
func goodMedian(t *testing.T, p *Pool, n int) time.Duration {
	t.Helper()
	req, resp := make(chan struct{}), make(chan error)
	go func() {
		for range req {
			_, out, err := p.Call(context.Background(), []byte("e-hello"), nil, nil)
			if err == nil && string(out) != "e-hello" {
				err = fmt.Errorf("output %q", out)
			}
			resp <- err
		}
	}()
	defer close(req)
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		time.Sleep(time.Millisecond) // woken by a timer, as by the network poller
		req <- struct{}{}
		err := <-resp
		d[i] = time.Since(start) - time.Millisecond
		if err != nil {
			t.Fatalf("good call: %v", err)
		}
	}
	slices.Sort(d)
	return d[n/2]
}

// TestSchedulerIsolation: while eight calls of a spinning plugin run to
// their deadline, a quick plugin's calls stay about as fast as alone (the
// scheduler parks all but BackgroundCPUs of the spinners), and every
// spinner, parked or running, still ends at its deadline. Without the
// scheduler the good calls' median is tens of milliseconds on two cores
// (the Go scheduler shares the processors among nine busy goroutines), far
// above the bound.
func TestSchedulerIsolation(t *testing.T) {
	testutil.WallClock(t) // latencies of real calls beside spinning guests
	if testing.Short() {
		t.Skip("runs spinning guests for seconds")
	}
	const timeout = 500 * time.Millisecond
	spin := newPool(t, watGuest, Limits{Timeout: timeout, Instances: 8}, Sandbox{})
	good := newPool(t, watGuest, Limits{Instances: 1}, Sandbox{})
	if spin.m.e.sched == nil {
		t.Fatal("the test engine has no scheduler")
	}
	goodMedian(t, good, 50) // warm up
	alone := goodMedian(t, good, 300)

	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var late []time.Duration
	var calls atomic.Int64
	for range 8 {
		wg.Go(func() {
			for i := 0; i < 20 && !stop.Load(); i++ {
				start := time.Now()
				_, _, err := spin.Call(context.Background(), []byte("l"), nil, nil)
				took := time.Since(start)
				calls.Add(1)
				callErr(t, err, KindDeadline)
				if took > timeout+time.Second {
					mu.Lock()
					late = append(late, took)
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond) // let the spinners go background
	attacked := goodMedian(t, good, 300)
	stop.Store(true)
	wg.Wait()
	t.Logf("good call median alone %v, under attack %v (%.1fx); %d spinning calls", alone, attacked, float64(attacked)/float64(alone), calls.Load())
	if bound := max(20*alone, 2*time.Millisecond); attacked > bound {
		t.Errorf("good call median under attack %v, want at most %v (alone %v)", attacked, bound, alone)
	}
	if len(late) > 0 {
		t.Errorf("%d spinning calls ended long after their %v deadline: %v", len(late), timeout, late)
	}
}

// TestSchedulerYields: a call yields its processor to the Go scheduler
// about every fgYieldEvery of guest time while it is foreground, then its
// thread to the operating system about every bgYieldEvery once it is
// background; a quick call never yields.
func TestSchedulerYields(t *testing.T) {
	testutil.WallClock(t) // yields counted against the real time a guest spins
	const timeout = 200 * time.Millisecond
	p := newPool(t, watGuest, Limits{Timeout: timeout, Instances: 1}, Sandbox{})
	s := p.m.e.sched
	if s == nil {
		t.Fatal("the test engine has no scheduler")
	}
	// A foreground call yields at most once per fgYieldEvery of the guest
	// time its slice counts, and at least a tenth of that (room for a
	// loaded machine and the race detector); a background one at most
	// once per bgYieldEvery until its deadline (twice that allows for the
	// call ending late), and at least as often as the guest time it was
	// credited allows (bgMin), not its deadline: on a loaded machine the
	// operating system may run the spinning thread a small part of those
	// 200 ms (126 yields of the 1,950 its deadline allows, at load 7).
	for _, tc := range []struct {
		name, input string
		kind        Kind     // 0: the call succeeds
		fg, bg      [2]int64 // the range of each kind of yield
	}{
		{"spinning", "l", KindDeadline, [2]int64{int64(defaultSlice / fgYieldEvery / 10), int64(defaultSlice/fgYieldEvery) + 1},
			[2]int64{-1, int64(2 * timeout / bgYieldEvery)}}, // -1: bgMin
		{"quick", "e-hello", 0, [2]int64{0, 0}, [2]int64{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fg0, bg0, cpu0 := s.yields[0].Load(), s.yields[1].Load(), p.guestCPU.Load()
			_, _, err := p.Call(context.Background(), []byte(tc.input), nil, nil)
			if tc.bg[0] < 0 {
				tc.bg[0] = bgMin(time.Duration(p.guestCPU.Load() - cpu0))
			}
			if tc.kind == 0 {
				if err != nil {
					t.Fatal(err)
				}
			} else {
				callErr(t, err, tc.kind)
			}
			for _, y := range []struct {
				what string
				n    int64
				want [2]int64
			}{{"foreground", s.yields[0].Load() - fg0, tc.fg}, {"background", s.yields[1].Load() - bg0, tc.bg}} {
				if y.n < y.want[0] || y.n > y.want[1] {
					t.Errorf("%d %s yields, want %d to %d", y.n, y.what, y.want[0], y.want[1])
				}
			}
		})
	}
}

// bgMin is the fewest background yields a call credited with guest
// time cpu makes. Its first defaultSlice (plus at most one exit's credit,
// maxGap) is foreground; from then on it yields at the first exit at
// least bgYieldEvery of wall time after its last yield, and an exit's
// credit is its gap capped at maxGap, so each yield comes within
// bgYieldEvery+maxGap of credit; the last stretch may end without one.
func bgMin(cpu time.Duration) int64 {
	return int64((cpu-defaultSlice-maxGap)/(bgYieldEvery+maxGap)) - 1
}

// TestSchedulerTurns: free slots go round robin between the pools with
// parked calls, FIFO within a pool, so that a pool with many waiting
// calls gets the turns of a pool with one.
func TestSchedulerTurns(t *testing.T) {
	s := &scheduler{slots: 1, slice: time.Millisecond, quantum: time.Millisecond, closed: make(chan struct{})}
	var qa, qb schedQueue
	park := func(q *schedQueue, n int) []*task {
		var ts []*task
		for range n {
			tk := newTask(s, q, nil)
			q.waiters = append(q.waiters, tk)
			if !q.inRing {
				q.inRing = true
				s.ring = append(s.ring, q)
			}
			s.waiting.Add(1)
			ts = append(ts, tk)
		}
		return ts
	}
	s.running = 1 // a call holds the only slot
	a := park(&qa, 3)
	b := park(&qb, 1)
	granted := func() *task {
		for _, tk := range append(slices.Clone(a), b...) {
			select {
			case <-tk.wake:
				return tk
			default:
			}
		}
		return nil
	}
	var order []*task
	for range 4 {
		s.mu.Lock()
		s.releaseLocked()
		s.mu.Unlock()
		order = append(order, granted())
	}
	want := []*task{a[0], b[0], a[1], a[2]}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("grant %d went to the wrong call (order %v, want %v)", i, order, want)
		}
	}
	if s.running != 1 || s.waiting.Load() != 0 || len(s.ring) != 0 || qa.inRing || qb.inRing {
		t.Errorf("after the grants: running %d, waiting %d, ring %d", s.running, s.waiting.Load(), len(s.ring))
	}
}

// TestSchedulerOff: with BackgroundCPUs negative the engine has no
// scheduler and instances run without the probe.
func TestSchedulerOff(t *testing.T) {
	if newScheduler(Config{BackgroundCPUs: -1}) != nil {
		t.Fatal("BackgroundCPUs -1 gave a scheduler")
	}
	if s := newScheduler(Config{}); s == nil || s.slots < 1 || s.slice != defaultSlice {
		t.Fatalf("default scheduler %+v", s)
	}
}

// TestPoolUsageStats: the pool reports the guest time its calls ran, the
// linear memory of its live instances and its module's compile time.
func TestPoolUsageStats(t *testing.T) {
	testutil.WallClock(t) // guest CPU time of a real spin
	p := newPool(t, watGuest, Limits{Timeout: 100 * time.Millisecond, Instances: 1}, Sandbox{})
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
	st := p.Stats()
	if st.Memory != 2<<16 { // guest.wat declares 2 pages
		t.Errorf("memory %d with one idle instance, want %d", st.Memory, 2<<16)
	}
	if st.Compile <= 0 {
		t.Errorf("compile time %v", st.Compile)
	}
	_, _, err := p.Call(context.Background(), []byte("l"), nil, nil) // spins to its deadline
	callErr(t, err, KindDeadline)
	st = p.Stats()
	if st.GuestCPU < 5*time.Millisecond || st.GuestCPU > time.Second {
		t.Errorf("guest CPU %v after a 100 ms spin", st.GuestCPU)
	}
	if st.Memory != 0 {
		t.Errorf("memory %d after the only instance was discarded", st.Memory)
	}
}

// TestParkedCallsEndAtDeadline: spinning calls that the scheduler parks
// (all but BackgroundCPUs of them) and the ones it runs all fail with
// KindDeadline: a parked call asked for its context's Done, so the
// context's timer, which may lag the probe that stopped the guest by the
// clock, must not make the call look like a plain trap.
func TestParkedCallsEndAtDeadline(t *testing.T) {
	const timeout = 300 * time.Millisecond
	spin := newPool(t, watGuest, Limits{Timeout: timeout, Instances: 8}, Sandbox{})
	if spin.m.e.sched == nil {
		t.Fatal("the test engine has no scheduler")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_, _, err := spin.Call(context.Background(), []byte("l"), nil, nil)
			callErr(t, err, KindDeadline)
		})
	}
	wg.Wait()
}
