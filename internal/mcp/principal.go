package mcp

import (
	"hash/maphash"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// Per-principal limits. A principal is whoever a call comes from: the
// authenticated caller (Request.Principal) when access control is on,
// else the legacy session, else the client's address (HTTP) or the stdio
// connection. One principal may hold at most Options.PrincipalConcurrent
// of the server's admitted places (running plus waiting calls), so that
// the last ones stay for the others, and may start at most
// Options.PrincipalRate calls a second (a token bucket of
// Options.PrincipalBurst). Refusals are -32001 with data
// {"busy":true,"retryAfterMs":...}, HTTP 429 with Retry-After.

// principals tracks the admitted calls and rate of every principal that
// has calls in flight (or a bucket still refilling). Its state is
// sharded so that calls of different principals share no lock.
type principals struct {
	max   int64   // admitted calls per principal
	rate  float64 // calls per second; 0: no rate limit
	burst float64
	on    bool // either bound can refuse

	seed   maphash.Seed
	shards [32]principalShard
}

type principalShard struct {
	mu      sync.Mutex
	m       map[principalID]principal // by value: a principal's first call allocates nothing once the map has grown
	sweepAt int
}

// principalID names a principal: its kind ('p' an authenticated caller,
// 's' a session, 'a' a client address or stdio connection) and its name.
// A struct rather than one string, so that naming a call's principal
// does not allocate. The zero value names none.
type principalID struct {
	kind byte
	name string
}

type principal struct {
	n      int64 // admitted calls
	tokens float64
	last   time.Time
}

func newPrincipals(max int, rate float64, burst int, capacity int) *principals {
	p := &principals{max: int64(max), rate: rate, burst: float64(burst), seed: maphash.MakeSeed()}
	p.on = p.max < int64(capacity) || rate > 0
	return p
}

func (p *principals) shard(key principalID) *principalShard {
	return &p.shards[(maphash.String(p.seed, key.name)+uint64(key.kind))%uint64(len(p.shards))]
}

// clock returns the time for admit and done: only the rate limit reads
// it (a clock read costs 50-100 ns on some virtual machines).
func (p *principals) clock() time.Time {
	if p.rate > 0 {
		return time.Now()
	}
	return time.Time{}
}

// admit takes a place for one call of key at now (see clock); nil means
// admitted.
func (p *principals) admit(key principalID, now time.Time) *refusal {
	sh := p.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m == nil {
		sh.m = map[principalID]principal{}
	}
	pr, ok := sh.m[key]
	if !ok {
		if len(sh.m) >= max(sh.sweepAt, 256) {
			p.sweepLocked(sh, now)
			sh.sweepAt = min(2*len(sh.m), maxPrincipalsPerShard+1)
		}
		pr = principal{tokens: p.burst, last: now}
	}
	rf := p.take(&pr, now)
	sh.m[key] = pr
	return rf
}

// take takes a place for one more call of pr at now, or refuses it.
func (p *principals) take(pr *principal, now time.Time) *refusal {
	if pr.n >= p.max {
		return &refusal{err: &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout,
			Message: "Too many calls from this client: " + strconv.FormatInt(pr.n, 10) + " are running or waiting, its share of the server; retry later",
			Data:    busyData(retryAfterSeconds)}, reason: refusedCallerLimit, retryAfter: retryAfterSeconds}
	}
	if p.rate > 0 {
		pr.tokens = min(p.burst, pr.tokens+now.Sub(pr.last).Seconds()*p.rate)
		pr.last = now
		if pr.tokens < 1 {
			wait := int(math.Ceil((1 - pr.tokens) / p.rate))
			return &refusal{err: &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout,
				Message: "Rate limit: more than " + strconv.FormatFloat(p.rate, 'g', -1, 64) + " calls a second from this client; retry later",
				Data:    busyData(max(1, wait))}, reason: refusedCallerLimit, retryAfter: max(1, wait)}
		}
		pr.tokens--
	}
	pr.n++
	return nil
}

// done gives back the place of one call of key at now (see clock).
func (p *principals) done(key principalID, now time.Time) {
	sh := p.shard(key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	pr, ok := sh.m[key]
	if !ok {
		return
	}
	pr.n--
	if pr.n <= 0 && p.idle(&pr, now) {
		delete(sh.m, key)
		return
	}
	sh.m[key] = pr
}

// idle reports whether a principal without calls has a full bucket (its
// state can be forgotten).
func (p *principals) idle(pr *principal, now time.Time) bool {
	return p.rate <= 0 || pr.tokens+now.Sub(pr.last).Seconds()*p.rate >= p.burst
}

// maxPrincipalsPerShard bounds what a shard remembers of principals
// without calls: past it their buckets are forgotten even if not full
// (such a principal may burst again), so that many clients cannot grow
// the table without bound.
const maxPrincipalsPerShard = 1024

func (p *principals) sweepLocked(sh *principalShard, now time.Time) {
	for k, pr := range sh.m {
		if pr.n <= 0 && p.idle(&pr, now) {
			delete(sh.m, k)
		}
	}
	if len(sh.m) > maxPrincipalsPerShard {
		for k, pr := range sh.m {
			if pr.n <= 0 {
				delete(sh.m, k)
			}
		}
	}
}

func busyData(retry int) []byte {
	return []byte(`{"busy":true,"retryAfterMs":` + strconv.Itoa(retry*1000) + `}`)
}

// principalKey names the principal of cl.
func principalKey(cl *call) principalID {
	switch {
	case cl.req.Principal != "":
		return principalID{'p', cl.req.Principal}
	case cl.req.SessionID != "":
		return principalID{'s', cl.req.SessionID}
	}
	return principalID{'a', cl.remote}
}
