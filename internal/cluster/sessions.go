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

// Load returns the state of id and extends its expiry to ttl.
func (s *Sessions) Load(id string, ttl time.Duration) ([]byte, bool, error) {
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	b, err := s.c.rdb.GetEx(ctx, sessionKey(id), ttl).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, wrap("session load", err)
	}
	return b, true, nil
}

// Delete removes id.
func (s *Sessions) Delete(id string) error {
	ctx, cancel := s.c.ctx(context.Background())
	defer cancel()
	return wrap("session delete", s.c.rdb.Del(ctx, sessionKey(id)).Err())
}
