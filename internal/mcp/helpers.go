package mcp

import (
	"maps"
	"slices"
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
