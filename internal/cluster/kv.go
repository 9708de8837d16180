package cluster

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasmcp/wasmcp/hostapi"
)

// KV is the plugin key-value store in Redis: the same namespaces, quotas,
// expiry and listing order as hostapi.KVStore, shared by every replica.
// Each namespace is four Redis keys under one hash tag (so that a Redis
// Cluster keeps them on one shard): a hash of values, a sorted set of the
// keys for listing in bytewise order, a sorted set of expiry times and a
// byte counter. Every operation is one Lua script, so quotas hold under
// concurrent writers on different replicas; expiry uses Redis's clock.
type KV struct {
	c *Cluster
	q hostapi.KVQuota
}

var _ hostapi.KV = (*KV)(nil)

// KV returns the plugin kv store in Redis with quota q (zero fields are
// hostapi's defaults).
func (c *Cluster) KV(q hostapi.KVQuota) *KV { return &KV{c: c, q: q.WithDefaults()} }

// kvKeys are the Redis keys of plugin's namespace: values, index,
// expiries, bytes.
func kvKeys(plugin string) []string {
	tag := "wasmcp:kv:{" + hex.EncodeToString([]byte(plugin)) + "}:"
	return []string{tag + "v", tag + "i", tag + "x", tag + "b"}
}

// kvLib is the Lua shared by the scripts: KEYS are kvKeys.
const kvLib = `
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local function drop(k)
  local n = redis.call('HSTRLEN', KEYS[1], k)
  if redis.call('HDEL', KEYS[1], k) == 1 then
    redis.call('DECRBY', KEYS[4], #k + n)
  end
  redis.call('ZREM', KEYS[2], k)
  redis.call('ZREM', KEYS[3], k)
end
local function expired(k, now)
  local e = redis.call('ZSCORE', KEYS[3], k)
  return e and tonumber(e) <= now
end
`

var (
	kvGet = redis.NewScript(kvLib + `
local now = now_ms()
if expired(ARGV[1], now) then drop(ARGV[1]) return false end
return redis.call('HGET', KEYS[1], ARGV[1])
`)
	// ARGV: key, value, ttl in ms (0: none), max keys, max bytes.
	// Returns 1, or 0 when over quota.
	kvSet = redis.NewScript(kvLib + `
local now = now_ms()
local k, v = ARGV[1], ARGV[2]
local ttl, maxKeys, maxBytes = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
if expired(k, now) then drop(k) end
local function fits()
  local n = redis.call('HLEN', KEYS[1])
  local bytes = tonumber(redis.call('GET', KEYS[4]) or '0')
  local grow = #k + #v
  if redis.call('HEXISTS', KEYS[1], k) == 1 then
    grow = grow - #k - redis.call('HSTRLEN', KEYS[1], k)
  else
    n = n + 1
  end
  return n <= maxKeys and bytes + grow <= maxBytes, grow
end
local ok, grow = fits()
if not ok then
  for _, e in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do drop(e) end
  ok, grow = fits()
  if not ok then return 0 end
end
redis.call('HSET', KEYS[1], k, v)
redis.call('ZADD', KEYS[2], 0, k)
if ttl > 0 then redis.call('ZADD', KEYS[3], now + ttl, k) else redis.call('ZREM', KEYS[3], k) end
redis.call('INCRBY', KEYS[4], grow)
return 1
`)
	kvDelete = redis.NewScript(kvLib + `
drop(ARGV[1])
return 1
`)
	// ARGV: prefix, after ("" for the start), limit. Returns up to
	// limit+1 live keys.
	kvList = redis.NewScript(kvLib + `
local now = now_ms()
local prefix, after, limit = ARGV[1], ARGV[2], tonumber(ARGV[3])
local lo = '-'
if prefix ~= '' then lo = '[' .. prefix end
if after ~= '' and (prefix == '' or after >= prefix) then lo = '(' .. after end
local hi = '+'
if prefix ~= '' then hi = '(' .. prefix .. '\255' end
local out, offset = {}, 0
while #out <= limit do
  local ks = redis.call('ZRANGEBYLEX', KEYS[2], lo, hi, 'LIMIT', offset, 256)
  if #ks == 0 then break end
  for _, k in ipairs(ks) do
    if not expired(k, now) and string.sub(k, 1, #prefix) == prefix then
      out[#out + 1] = k
      if #out > limit then break end
    end
  end
  offset = offset + #ks
end
return out
`)
)

// Get implements hostapi.KV.
func (s *KV) Get(ctx context.Context, plugin, key string) (json.RawMessage, bool, error) {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	v, err := kvGet.Run(ctx, s.c.rdb, kvKeys(plugin), key).Text()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap("kv get", err)
	}
	return json.RawMessage(v), true, nil
}

// Set implements hostapi.KV.
func (s *KV) Set(ctx context.Context, plugin, key string, value json.RawMessage, ttl time.Duration) error {
	if len(key) > s.q.MaxKeySize || len(value) > s.q.MaxValueSize {
		return hostapi.ErrKVQuota
	}
	var ms int64
	if ttl > 0 {
		ms = max(1, ttl.Milliseconds())
	}
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	n, err := kvSet.Run(ctx, s.c.rdb, kvKeys(plugin), key, []byte(value), ms, s.q.MaxKeys, s.q.MaxBytes).Int()
	if err != nil {
		return wrap("kv set", err)
	}
	if n == 0 {
		return hostapi.ErrKVQuota
	}
	return nil
}

// Delete implements hostapi.KV.
func (s *KV) Delete(ctx context.Context, plugin, key string) error {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	return wrap("kv delete", kvDelete.Run(ctx, s.c.rdb, kvKeys(plugin), key).Err())
}

// List implements hostapi.KV.
func (s *KV) List(ctx context.Context, plugin, prefix, after string, limit int) ([]string, string, error) {
	ctx, cancel := s.c.ctx(ctx)
	defer cancel()
	keys, err := kvList.Run(ctx, s.c.rdb, kvKeys(plugin), prefix, after, limit).StringSlice()
	if err != nil {
		return nil, "", wrap("kv list", err)
	}
	if len(keys) > limit {
		return keys[:limit], keys[limit-1], nil
	}
	return keys, "", nil
}
