package mcp

import (
	"strings"
	"testing"
	"time"
)

// TestStartTime: a request's start time is the time now, taken from a
// base less than a second old, or read anew when the base is older; it
// carries a monotonic reading (time.Since measures from it).
func TestStartTime(t *testing.T) {
	for _, c := range []struct {
		name   string
		base   time.Time
		rebase bool // the base is replaced by the time read
	}{
		{"fresh base", time.Now(), false},
		{"base an hour old", time.Now().Add(-time.Hour), true},
		{"base without a monotonic reading", time.Now().Add(-time.Hour).Round(0), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.base
			clockBase.Store(&b)
			before := time.Now()
			got := startTime()
			after := time.Now()
			if got.Before(before) || got.After(after) {
				t.Errorf("start %v, want between %v and %v", got, before, after)
			}
			if !strings.Contains(got.String(), " m=") {
				t.Errorf("start %v has no monotonic reading", got)
			}
			if rebased := clockBase.Load() != &b; rebased != c.rebase {
				t.Errorf("base replaced: %v, want %v", rebased, c.rebase)
			}
		})
	}
}
