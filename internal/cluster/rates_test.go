package cluster_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
)

// TestRates checks the Redis token buckets: two replicas take from one
// bucket (a burst of 3 between them), the wait is the bucket's refill
// time, other keys are apart, and a bucket some other writer of Redis
// planted (not a hash, fields that do not parse, a level past the burst)
// is taken for a full one, and one empty with a time in the future for
// an empty one from now: none lets a caller past the burst or keeps it
// out longer than an honest bucket would.
func TestRates(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t)
	a, b := open(t, r).Rates(), open(t, r).Rates()
	take := func(s interface {
		Take(context.Context, string, float64, int) (time.Duration, error)
	}, key string) time.Duration {
		t.Helper()
		w, err := s.Take(ctx, key, 0.01, 3) // one call per 100 s, bursts of 3
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for i, s := range []interface {
		Take(context.Context, string, float64, int) (time.Duration, error)
	}{a, b, a} {
		if w := take(s, "k"); w != 0 {
			t.Fatalf("call %d of the burst waits %v", i, w)
		}
	}
	if w := take(b, "k"); w < 99*time.Second || w > 100*time.Second {
		t.Fatalf("past the burst on the other replica: wait %v, want about 100s", w)
	}
	if w := take(a, "other"); w != 0 {
		t.Fatalf("another key waits %v", w)
	}

	redisKey := func(key string) string {
		sum := sha256.Sum256([]byte(key))
		return "wasmcp:rate:" + hex.EncodeToString(sum[:])
	}
	for _, plant := range [][]string{
		{"SET", redisKey("p1"), "junk"},
		{"HSET", redisKey("p2"), "tokens", "nan", "last", "x"},
		{"HSET", redisKey("p3"), "tokens", "1e300", "last", "0"},
		{"HSET", redisKey("p4"), "tokens", "-1e300", "last", "99999999999999"},
	} {
		if _, err := r.Do(plant...); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"p1", "p2", "p3", "p4"} {
		n := 0
		for range 5 {
			if take(a, key) == 0 {
				n++
			}
		}
		if n != 3 && !(key == "p4" && n == 0) {
			t.Errorf("planted bucket %s: %d calls of 5 taken, want the burst of 3", key, n)
		}
	}
	if ttl, err := r.Do("PTTL", redisKey("k")); err != nil || ttl == "-1" || ttl == "-2" {
		t.Errorf("a bucket's expiry: %q, %v", ttl, err)
	}
}
