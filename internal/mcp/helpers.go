package mcp

import (
	"maps"
	"slices"
	"sync"
	"time"
)

// Small helpers the transports and the engine share.

// values returns the values of m: a snapshot, to act on them after
// unlocking the mutex that guards m.
func values[K comparable, V any](m map[K]V) []V {
	return slices.Collect(maps.Values(m))
}

// deref returns *p, or for nil the zero value (every option at its
// default).
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// clock returns the channel of a timer of d (a ticker of period d when
// repeat) and the function that stops it; for d <= 0, a nil channel,
// which never fires.
func clock(d time.Duration, repeat bool) (<-chan time.Time, func()) {
	switch {
	case d <= 0:
		return nil, func() {}
	case repeat:
		t := time.NewTicker(d)
		return t.C, t.Stop
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// closeOnce sets *closed, guarded by mu, and the first time runs then
// (when not nil) under mu too; it reports whether this was the first time.
func closeOnce(mu *sync.Mutex, closed *bool, then func()) bool {
	mu.Lock()
	defer mu.Unlock()
	if *closed {
		return false
	}
	*closed = true
	if then != nil {
		then()
	}
	return true
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
