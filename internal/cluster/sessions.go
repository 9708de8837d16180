package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sessions keeps the state of legacy HTTP sessions in Redis (it
// satisfies mcp.SessionStore): one value per session id, expiring after
// the session's idle timeout, which every use extends.
type Sessions struct{ c *Cluster }

// Sessions returns the cluster's session store.
func (c *Cluster) Sessions() *Sessions { return &Sessions{c: c} }

func sessionKey(id string) string { return "wasmcp:session:" + id }

// Save stores state under id for ttl.
func (s *Sessions) Save(id string, state []byte, ttl time.Duration) error {
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	return wrap("session save", s.c.rdb.Set(ctx, sessionKey(id), state, ttl).Err())
}

// Load returns the state of id and extends its expiry to ttl; of a
// state longer than max bytes, only the first max+1, so that a record
// made huge by another writer of Redis is not read whole (the engine
// refuses it by its length). A key holding no string is no session.
func (s *Sessions) Load(id string, ttl time.Duration, max int) ([]byte, bool, error) {
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	b, err := sessionLoad.Run(ctx, s.c.rdb, []string{sessionKey(id)}, ttl.Milliseconds(), max).Text()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap("session load", err)
	}
	return []byte(b), true, nil
}

// sessionLoad is Load's read: KEYS a session, ARGV its new expiry in
// milliseconds (none when 0) and the most bytes to read but one.
var sessionLoad = redis.NewScript(`
if redis.call('TYPE', KEYS[1]).ok ~= 'string' then return false end
local ttl = tonumber(ARGV[1])
if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[2]))
`)

// Delete removes id.
func (s *Sessions) Delete(id string) error {
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	return wrap("session delete", s.c.rdb.Del(ctx, sessionKey(id)).Err())
}
