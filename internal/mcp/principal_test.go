package mcp

import (
	"strconv"
	"testing"
	"time"
)

// TestPrincipalsForget: principals without calls (and with a full rate
// bucket) are forgotten, so that many clients do not grow the table.
func TestPrincipalsForget(t *testing.T) {
	tests := []struct {
		name  string
		rate  float64
		burst int
		max   int // entries left after 100000 clients, at most
	}{
		{"no rate limit", 0, 1, 0},
		{"rate limit, buckets refilled", 1000, 1, 0},
		{"rate limit, buckets refilling", 0.001, 1, 32 * (maxPrincipalsPerShard + 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPrincipals(10, tt.rate, tt.burst, 100)
			now := time.Unix(0, 0)
			for i := range 100000 {
				key := principalID{'a', strconv.Itoa(i)}
				if r := p.admit(key, now); r != nil {
					t.Fatalf("client %d refused: %s", i, r.err.Message)
				}
				if tt.rate >= 1000 {
					now = now.Add(time.Millisecond)
				}
				p.done(key, now)
			}
			n := 0
			for i := range p.shards {
				n += len(p.shards[i].m)
			}
			if n > tt.max {
				t.Fatalf("%d principals remembered, want at most %d", n, tt.max)
			}
		})
	}
	// The share and the rate refuse, and a place given back is usable.
	p := newPrincipals(2, 0, 1, 100)
	now := time.Unix(0, 0)
	for range 2 {
		if r := p.admit(principalID{'a', "x"}, now); r != nil {
			t.Fatal(r.err.Message)
		}
	}
	if r := p.admit(principalID{'a', "x"}, now); r == nil || r.reason != refusedCallerLimit {
		t.Fatalf("third call: %+v", r)
	}
	p.done(principalID{'a', "x"}, now)
	if r := p.admit(principalID{'a', "x"}, now); r != nil {
		t.Fatal(r.err.Message)
	}
	q := newPrincipals(100, 1, 2, 100)
	q.admit(principalID{'a', "y"}, now)
	q.admit(principalID{'a', "y"}, now)
	if r := q.admit(principalID{'a', "y"}, now); r == nil || r.retryAfter != 1 {
		t.Fatalf("past the burst: %+v", r)
	}
	if r := q.admit(principalID{'a', "y"}, now.Add(1100*time.Millisecond)); r != nil {
		t.Fatalf("after a refill: %s", r.err.Message)
	}
}
