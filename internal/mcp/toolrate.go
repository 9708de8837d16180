package mcp

import (
	"context"
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Per-tool rate limits (Options.ToolRate): one token bucket per tool and
// principal, kept in the process (memRates) or in a RateStore that
// replicas share, asked when a tools/call is admitted.

// RateStore keeps the token buckets of Options.ToolRate.
type RateStore interface {
	// Take takes one call from the bucket key, which holds at most
	// burst calls and refills at rate calls a second (a new bucket is
	// full). It returns 0 when the call was taken, else how long until
	// the bucket has one (and takes nothing). It must return within a
	// bounded time.
	Take(ctx context.Context, key string, rate float64, burst int) (wait time.Duration, err error)
}

// errRateStore refuses a rate-limited call while the RateStore is
// unavailable: it may well be within its rate.
var errRateStore = &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout,
	Message: "Server busy: the rate limit store is unavailable; retry later", Data: busyData(retryAfterSeconds)}

// admitToolRate refuses cl, a tools/call, when its principal is past the
// rate of the tool it names.
func (s *Server) admitToolRate(cl *call) *refusal {
	v, ok := jsonscan.Member(cl.req.Params, "name")
	if !ok {
		return nil
	}
	name, ok := jsonscan.String(v)
	if !ok {
		return nil
	}
	key, rate, burst := s.opts.ToolRate(name)
	if rate <= 0 {
		return nil
	}
	p := principalKey(cl)
	bucket := key + "\x00" + string(p.kind) + p.name
	wait, err := s.rates.Take(cl.ctx, bucket, rate, max(1, burst))
	if err != nil {
		s.log.Warn("rate limit store unavailable: a rate-limited call is refused", "tool", name, "error", err)
		return &refusal{err: errRateStore, reason: refusedUnavailable, retryAfter: retryAfterSeconds}
	}
	if wait <= 0 {
		return nil
	}
	secs := max(1, int(math.Ceil(wait.Seconds())))
	return &refusal{err: &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout,
		Message: "Rate limit: more than " + strconv.FormatFloat(rate, 'g', 4, 64) + " calls a second of this tool from this client; retry later",
		Data:    []byte(`{"busy":true,"retryAfterMs":` + strconv.FormatInt(max(1, wait.Milliseconds()), 10) + `}`)},
		reason: refusedCallerLimit, retryAfter: secs}
}

// memRates is the RateStore of one process: sharded buckets, forgotten
// once full, at most maxPrincipalsPerShard remembered a shard past
// which buckets not yet full are forgotten too (such a caller may burst
// again), so that many callers cannot grow it without bound.
type memRates struct {
	seed   maphash.Seed
	shards [32]rateShard
	now    func() time.Time
}

type rateShard struct {
	mu      sync.Mutex
	m       map[string]rateBucket
	sweepAt int
}

type rateBucket struct {
	tokens     float64
	last       time.Time
	rate, full float64
}

func newMemRates() *memRates { return &memRates{seed: maphash.MakeSeed(), now: time.Now} }

// level is b's tokens at now.
func (b *rateBucket) level(now time.Time) float64 {
	return min(b.full, b.tokens+max(0, now.Sub(b.last).Seconds())*b.rate)
}

// Take implements RateStore.
func (r *memRates) Take(_ context.Context, key string, rate float64, burst int) (time.Duration, error) {
	now := r.now()
	sh := &r.shards[maphash.String(r.seed, key)%uint64(len(r.shards))]
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = map[string]rateBucket{}
	}
	b, ok := sh.m[key]
	if !ok {
		if len(sh.m) >= max(sh.sweepAt, 256) {
			r.sweepLocked(sh, now)
			sh.sweepAt = min(2*len(sh.m), maxPrincipalsPerShard+1)
		}
		b = rateBucket{tokens: float64(burst), last: now}
	}
	b.rate, b.full = rate, float64(burst)
	b.tokens, b.last = b.level(now), now
	var wait time.Duration
	if b.tokens >= 1 {
		b.tokens--
	} else {
		wait = time.Duration(math.Ceil((1 - b.tokens) / rate * float64(time.Second)))
	}
	sh.m[key] = b
	return wait, nil
}

func (r *memRates) sweepLocked(sh *rateShard, now time.Time) {
	for k, b := range sh.m {
		if b.level(now) >= b.full {
			delete(sh.m, k)
		}
	}
	if len(sh.m) > maxPrincipalsPerShard {
		clear(sh.m)
	}
}
