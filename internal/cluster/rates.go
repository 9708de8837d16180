package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rates keeps token buckets in Redis (it satisfies mcp.RateStore), so
// that every replica counts a principal's calls of a tool against one
// bucket. A bucket is a hash under wasmcp:rate:SHA-256(key), timed by
// the Redis server's clock, expiring once it would be full again.
type Rates struct{ c *Cluster }

// Rates returns the cluster's rate store.
func (c *Cluster) Rates() *Rates { return &Rates{c: c} }

// rateTake is Take's script. KEYS: the bucket. ARGV: rate a second,
// burst. A bucket that is not a hash, or whose fields do not parse, is
// taken for a full one; its level is held between 0 and burst, and a
// last time in the future counts as now, so that no planted value keeps
// a caller out for longer than an honest bucket would. Returns 0 or the
// milliseconds until a call is there.
var rateTake = redis.NewScript(`
local k = KEYS[1]
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local tokens, last = burst, now
if redis.call('TYPE', k).ok == 'hash' then
  local v = redis.call('HMGET', k, 'tokens', 'last')
  local a, b = tonumber(v[1]), tonumber(v[2])
  if a and b and a == a and b == b then
    tokens, last = math.max(0, math.min(burst, a)), math.min(b, now)
  end
else
  redis.call('DEL', k)
end
tokens = math.min(burst, tokens + (now - last) / 1000 * rate)
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  wait = math.ceil((1 - tokens) / rate * 1000)
end
redis.call('HSET', k, 'tokens', string.format('%.6f', tokens), 'last', now)
redis.call('PEXPIRE', k, math.ceil((burst - tokens) / rate * 1000) + 1000)
return wait
`)

// Take implements mcp.RateStore.
func (r *Rates) Take(ctx context.Context, key string, rate float64, burst int) (time.Duration, error) {
	ctx, cancel := r.c.ctx(ctx)
	defer cancel()
	sum := sha256.Sum256([]byte(key))
	ms, err := rateTake.Run(ctx, r.c.rdb, []string{"wasmcp:rate:" + hex.EncodeToString(sum[:])},
		strconv.FormatFloat(rate, 'g', -1, 64), burst).Int64()
	if err != nil {
		return 0, wrap("rate take", err)
	}
	return time.Duration(ms) * time.Millisecond, nil
}
