// Package denials bounds what the server writes about capability
// denials, so that a plugin or client asking again and again for what it
// is not granted cannot flood the log or the audit trail:
//
//   - Field cuts every field of a record to MaxField bytes, with a marker
//     naming the full length ("…(3145728 bytes)");
//   - a Limiter lets the first Burst records of one key (say a plugin and
//     a capability) through in each Interval and counts the rest: when the
//     interval ends it reports how many it folded (the caller writes "N
//     more denials of X folded" and adds N to a metric), so that no denial
//     is lost silently.
//
// It is the one rule of every denial site (the telemetry audit, the
// server's audit without telemetry, the Extism kernel's refusals) and is
// meant for any other audit trail too. It imports nothing of ours.
package denials

import (
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// MaxField bounds one field of a denial record, in bytes (the marker
// aside).
const MaxField = 256

// Field returns s cut to at most MaxField bytes at a rune boundary,
// followed by "…(N bytes)" naming its full length; s itself when it is
// short enough.
func Field(s string) string {
	if len(s) <= MaxField {
		return s
	}
	i := MaxField
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// Defaults of a Limiter's zero fields.
const (
	DefaultBurst    = 10
	DefaultInterval = time.Second
	// DefaultMaxKeys bounds the keys a Limiter tracks at once; past it
	// every further key shares one window (Overflow).
	DefaultMaxKeys = 4096
)

// A Limiter rate-limits the records of repeated denials by key: in each
// Interval from a key's first record, the first Burst records pass and
// the others are folded (counted). When the interval of a key that folded
// records ends, Report is called once with the key and the count, from a
// timer's goroutine; the key's next record starts a new interval. The
// zero value is not usable: build one with New. It is safe for
// concurrent use.
type Limiter[K comparable] struct {
	burst    int
	interval time.Duration
	maxKeys  int
	overflow K
	report   func(key K, folded int64)

	mu     sync.Mutex
	keys   map[K]*window
	folded int64 // in total
}

type window struct {
	start  time.Time
	n      int   // records passed in this interval
	folded int64 // records folded in this interval
	timer  *time.Timer
}

// Options configures a Limiter; zero fields take the defaults.
type Options[K comparable] struct {
	Burst    int
	Interval time.Duration
	MaxKeys  int
	// Overflow is the key the records of keys past MaxKeys share.
	Overflow K
}

// New returns a Limiter that calls report with the count of each key's
// folded records at the end of the key's interval. report must not block
// for long.
func New[K comparable](opts Options[K], report func(key K, folded int64)) *Limiter[K] {
	l := &Limiter[K]{burst: opts.Burst, interval: opts.Interval, maxKeys: opts.MaxKeys, overflow: opts.Overflow,
		report: report, keys: map[K]*window{}}
	if l.burst <= 0 {
		l.burst = DefaultBurst
	}
	if l.interval <= 0 {
		l.interval = DefaultInterval
	}
	if l.maxKeys <= 0 {
		l.maxKeys = DefaultMaxKeys
	}
	return l
}

// Allow reports whether a record of key may be written now; false means
// it was folded, and will be reported.
func (l *Limiter[K]) Allow(key K) bool {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w := l.keys[key]
	if w == nil {
		if len(l.keys) >= l.maxKeys {
			l.sweep(now)
		}
		if len(l.keys) >= l.maxKeys {
			key = l.overflow
			w = l.keys[key]
		}
	}
	switch {
	case w == nil:
		l.keys[key] = &window{start: now, n: 1}
		return true
	case w.timer == nil && now.Sub(w.start) >= l.interval:
		w.start, w.n = now, 1
		return true
	case w.n < l.burst:
		w.n++
		return true
	}
	w.folded++
	l.folded++
	if w.timer == nil {
		w.timer = time.AfterFunc(max(l.interval-now.Sub(w.start), 0), func() { l.flush(key) })
	}
	return false
}

// sweep forgets the keys whose interval ended and that folded nothing.
func (l *Limiter[K]) sweep(now time.Time) {
	for k, w := range l.keys {
		if w.timer == nil && now.Sub(w.start) >= l.interval {
			delete(l.keys, k)
		}
	}
}

// flush reports the folded records of key and ends its interval.
func (l *Limiter[K]) flush(key K) {
	l.mu.Lock()
	w := l.keys[key]
	delete(l.keys, key)
	l.mu.Unlock()
	if w != nil && w.folded > 0 && l.report != nil {
		l.report(key, w.folded)
	}
}

// Flush reports now what every key folded so far (at shutdown, say) and
// ends their intervals.
func (l *Limiter[K]) Flush() {
	l.mu.Lock()
	var keys []K
	for k, w := range l.keys {
		if w.timer != nil && w.timer.Stop() {
			keys = append(keys, k)
		}
	}
	l.mu.Unlock()
	for _, k := range keys {
		l.flush(k)
	}
}

// Folded returns how many records the Limiter has folded in all.
func (l *Limiter[K]) Folded() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.folded
}
