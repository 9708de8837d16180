package denials

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"
)

// reports collects what a Limiter reports, with the time since t0.
type reports struct {
	mu  sync.Mutex
	t0  time.Time
	got []string
}

func (r *reports) report(key string, folded int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, key+" "+time.Since(r.t0).String()+" "+strconv.FormatInt(folded, 10))
}

// take returns the reports since the last take, sorted (the timers of
// two keys due at one instant fire in either order).
func (r *reports) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := r.got
	r.got = nil
	slices.Sort(got)
	return got
}

// TestLimiter (on a fake clock): in each interval from a key's first
// record, the first Burst pass and the rest are folded; the folded count
// is reported exactly when the interval ends, and the next record starts
// a new interval; keys are apart; Flush reports early, once.
func TestLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		r := &reports{t0: time.Now()}
		l := New(Options[string]{Burst: 3, Interval: interval}, r.report)
		allow := func(key string, n int) (passed int) {
			for range n {
				if l.Allow(key) {
					passed++
				}
			}
			return passed
		}
		steps := []struct {
			at     time.Duration // since the start
			key    string
			n      int // records
			passed int
			want   []string // reports since the last step (key, when, folded)
		}{
			{0, "a", 5, 3, nil},
			{0, "b", 2, 2, nil},
			{interval / 2, "b", 2, 1, nil},                      // b's interval began at 0 too
			{interval - time.Nanosecond, "a", 1, 0, nil},        // a's interval has not ended
			{interval, "c", 1, 1, []string{"a 1s 3", "b 1s 1"}}, // they have: reported then
			{interval, "a", 4, 3, nil},                          // a new interval for a
			{3 * interval / 2, "c", 1, 1, nil},
			{2*interval - time.Nanosecond, "a", 1, 0, nil},
			{2 * interval, "c", 3, 3, []string{"a 2s 2"}}, // c's interval (from 1 s) ended unfolded: a new one
			{10 * interval, "b", 3, 3, nil},               // long after: a burst again, nothing folded
		}
		for i, s := range steps {
			time.Sleep(time.Until(r.t0.Add(s.at)))
			synctest.Wait() // the timers due have reported
			if got := r.take(); !slices.Equal(got, s.want) {
				t.Errorf("step %d (at %v): reports %q, want %q", i, s.at, got, s.want)
			}
			if p := allow(s.key, s.n); p != s.passed {
				t.Errorf("step %d (at %v): %d of %d records of %s passed, want %d", i, s.at, p, s.n, s.key, s.passed)
			}
		}
		if f := l.Folded(); f != 6 {
			t.Errorf("Folded() = %d, want 6", f)
		}
		// Flush reports a pending count at once, and its timer no more.
		allow("d", 5)
		l.Flush()
		if got := r.take(); !slices.Equal(got, []string{"d 10s 2"}) {
			t.Errorf("Flush reported %q", got)
		}
		time.Sleep(2 * interval)
		synctest.Wait()
		if got := r.take(); len(got) != 0 {
			t.Errorf("after Flush, the interval's end reported %q", got)
		}
	})
}

// TestLimiterMaxKeys (on a fake clock): past MaxKeys keys, new keys share
// the Overflow key's window; keys whose interval ended and that folded
// nothing are forgotten to make room.
func TestLimiterMaxKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const interval = time.Second
		r := &reports{t0: time.Now()}
		l := New(Options[string]{Burst: 1, Interval: interval, MaxKeys: 2, Overflow: "other"}, r.report)
		for _, k := range []string{"a", "b"} {
			if !l.Allow(k) {
				t.Fatalf("first record of %s folded", k)
			}
		}
		// c and d share the overflow window: one record in all passes.
		if !l.Allow("c") || l.Allow("d") {
			t.Fatal("past MaxKeys, the new keys do not share one window")
		}
		time.Sleep(interval)
		synctest.Wait()
		if got := r.take(); !slices.Equal(got, []string{"other 1s 1"}) {
			t.Errorf("reports %q, want the overflow key's", got)
		}
		// a and b's intervals ended with nothing folded: forgotten, so
		// that e and f get windows of their own.
		if !l.Allow("e") || !l.Allow("f") || l.Allow("f") {
			t.Fatal("keys not forgotten after their interval")
		}
		if n := len(l.keys); n > 2 {
			t.Errorf("%d keys tracked, MaxKeys 2", n)
		}
	})
}

// TestField: short fields are kept, long ones cut at a rune boundary and
// marked with their full length.
func TestField(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"short", "abc", "abc"},
		{"at the bound", strings.Repeat("a", MaxField), strings.Repeat("a", MaxField)},
		{"long", strings.Repeat("a", MaxField+1), strings.Repeat("a", MaxField) + "…(257 bytes)"},
		{"a rune across the bound", strings.Repeat("a", MaxField-1) + "é", strings.Repeat("a", MaxField-1) + "…(257 bytes)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Field(tc.in)
			if got != tc.want || !utf8.ValidString(got) {
				t.Errorf("Field = %q, want %q", got, tc.want)
			}
		})
	}
}
