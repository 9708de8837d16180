package mcp

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"
)

// TestMemRates checks the process's token buckets against the fake
// clock: a burst, the wait it names, the refill, and that a swept
// table forgets only what it may.
func TestMemRates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newMemRates()
		ctx := context.Background()
		take := func(key string) time.Duration {
			t.Helper()
			w, err := r.Take(ctx, key, 2, 3) // 2 a second, bursts of 3
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		for i := range 3 {
			if w := take("a"); w != 0 {
				t.Fatalf("call %d of the burst waits %v", i, w)
			}
		}
		if w := take("a"); w != 500*time.Millisecond {
			t.Fatalf("past the burst: wait %v, want 500ms", w)
		}
		if w := take("b"); w != 0 {
			t.Fatalf("another key waits %v", w)
		}
		time.Sleep(499 * time.Millisecond)
		if w := take("a"); w <= 0 || w > 2*time.Millisecond {
			t.Fatalf("1 ms before the refill: wait %v", w)
		}
		time.Sleep(time.Millisecond)
		if w := take("a"); w != 0 {
			t.Fatalf("after the refill: wait %v", w)
		}
		if w := take("a"); w != 500*time.Millisecond {
			t.Fatalf("the refill gave more than one call: wait %v", w)
		}
		time.Sleep(time.Hour)
		for i := range 3 {
			if w := take("a"); w != 0 {
				t.Fatalf("after an hour, call %d waits %v", i, w)
			}
		}

		// Many keys: the table stays bounded, and a bucket in debt is
		// remembered while the shard has room.
		for i := range 200_000 {
			r.Take(ctx, fmt.Sprint("k", i), 1, 1)
		}
		n := 0
		for i := range r.shards {
			n += len(r.shards[i].m)
		}
		if n > len(r.shards)*(2*maxPrincipalsPerShard+2) {
			t.Errorf("%d buckets remembered after 200,000 keys", n)
		}
	})
}
