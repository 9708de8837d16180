package cluster

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/wasmcp/wasmcp/hostapi"
)

// ErrUnavailable is wrapped by the errors of operations that could not
// reach Redis in bounded time. It is hostapi.ErrKVUnavailable, so that a
// plugin's kv call reports it as such.
var ErrUnavailable = hostapi.ErrKVUnavailable

// Options configures Open.
type Options struct {
	// URL is [cluster] redis: redis://[user:password@]host[:port][/db],
	// or rediss:// for TLS. Required.
	URL string
	// Key is [cluster] key, the secret shared by every replica. Required.
	Key string
	// Logger receives connection state changes; nil discards.
	Logger *slog.Logger
	// OpTimeout bounds each Redis operation, connecting included
	// (default 2s).
	OpTimeout time.Duration
	// ProbeInterval is how often the health probe pings Redis (default
	// 1s).
	ProbeInterval time.Duration
	// TLS overrides the TLS configuration of rediss:// URLs (tests trust
	// their own CA with it); nil means the system roots.
	TLS *tls.Config
}

// Cluster is a connection to a deployment's Redis. Its methods are safe
// for concurrent use.
type Cluster struct {
	rdb    *redis.Client
	key    []byte
	log    *slog.Logger
	op     time.Duration
	origin string // this replica's id on the bus

	health     atomic.Pointer[error] // last probe error; nil pointer before the first
	probeEvery time.Duration
	hub        hub
	busOnce    sync.Once
	bus        *Bus
	// notifierOnce makes the one TaskNotifier.
	notifierOnce sync.Once
	notifier     *TaskNotifier
	closed       chan struct{} // closed by Close
	closeOnce    sync.Once
	stop         context.CancelFunc
	wg           sync.WaitGroup
}

// Open connects to Redis. An unreachable Redis is not an error: the
// replica starts, Ready reports it, and the client connects as soon as
// Redis answers. A malformed URL or a missing key is.
func Open(ctx context.Context, o Options) (*Cluster, error) {
	if len(o.Key) == 0 {
		return nil, errors.New("cluster: key is required")
	}
	ro, err := redis.ParseURL(o.URL)
	if err != nil {
		return nil, fmt.Errorf("cluster: redis URL: %w", redactErr(err, o.URL))
	}
	if o.OpTimeout <= 0 {
		o.OpTimeout = 2 * time.Second
	}
	if o.ProbeInterval <= 0 {
		o.ProbeInterval = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if ro.TLSConfig != nil && o.TLS != nil {
		ro.TLSConfig = o.TLS.Clone()
	}
	ro.DialTimeout = o.OpTimeout / 2
	ro.ReadTimeout = o.OpTimeout / 2
	ro.WriteTimeout = o.OpTimeout / 2
	ro.PoolTimeout = o.OpTimeout / 2
	ro.ContextTimeoutEnabled = true
	ro.MaxRetries = 1
	ro.MinRetryBackoff = 10 * time.Millisecond
	ro.MaxRetryBackoff = 100 * time.Millisecond
	ro.DisableIdentity = true
	ro.Protocol = 2
	var id [originLen / 2]byte
	_, _ = rand.Read(id[:])
	c := &Cluster{rdb: redis.NewClient(ro), key: []byte(o.Key), log: o.Logger, op: o.OpTimeout, origin: hex.EncodeToString(id[:]), probeEvery: o.ProbeInterval}
	c.hub.c = c
	c.closed = make(chan struct{})
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	c.stop = stop
	c.probe(pctx)
	if err := c.Ready(); err != nil {
		c.log.Warn("cluster: Redis is not reachable yet; serving, not ready, retrying", "redis", redactURL(o.URL), "error", err)
	}
	c.wg.Go(func() {
		t := time.NewTicker(o.ProbeInterval)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				c.probe(pctx)
			}
		}
	})
	return c, nil
}

// probe pings Redis once and records the outcome, logging changes.
func (c *Cluster) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.op)
	defer cancel()
	err := c.rdb.Ping(ctx).Err()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return // Close
	}
	if err != nil {
		err = fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	prev := c.health.Swap(&err)
	switch {
	case prev != nil && *prev == nil && err != nil:
		c.log.Error("cluster: Redis unreachable", "error", err)
	case prev != nil && *prev != nil && err == nil:
		c.log.Info("cluster: Redis reachable again")
	}
}

// Ready reports whether the last probe reached Redis: nil, or an error
// wrapping ErrUnavailable.
func (c *Cluster) Ready() error {
	if p := c.health.Load(); p != nil {
		return *p
	}
	return fmt.Errorf("%w: not probed yet", ErrUnavailable)
}

// Key derives the key for one purpose ("requestState", "session", ...)
// from the cluster key: HMAC-SHA256(key, "wasmcp cluster "+purpose), 32
// bytes, the same on every replica.
func (c *Cluster) Key(purpose string) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write([]byte("wasmcp cluster " + purpose))
	return m.Sum(nil)
}

// Close stops the probe and the bus and closes the connections. Later
// calls do nothing.
func (c *Cluster) Close() error {
	var err error
	c.closeOnce.Do(func() {
		c.stop()
		close(c.closed)
		c.hub.close()
		c.wg.Wait()
		err = c.rdb.Close()
	})
	return err
}

// ctx bounds one operation by the operation timeout.
func (c *Cluster) ctx(parent context.Context) (context.Context, context.CancelFunc) {
	if parent == nil {
		parent = context.Background()
	}
	return context.WithTimeout(parent, c.op)
}

// wrap turns a client error into ours: Redis's own errors (a script
// error, out of memory) are returned as they are, anything else (no
// connection, a timeout) wraps ErrUnavailable.
func wrap(op string, err error) error {
	if err == nil || errors.Is(err, redis.Nil) {
		return err
	}
	var re redis.Error
	if errors.As(err, &re) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("cluster: %s: %w", op, err)
	}
	return fmt.Errorf("cluster: %s: %w: %v", op, ErrUnavailable, err)
}

// redactURL is the URL with any password replaced.
func redactURL(u string) string {
	if i, j := indexScheme(u), lastAt(u); i >= 0 && j > i {
		return u[:i] + "[redacted]" + u[j:]
	}
	return u
}

// redactErr drops the URL from err's text when it carries a password.
func redactErr(err error, u string) error {
	if redactURL(u) == u {
		return err
	}
	return errors.New("malformed (the URL is not repeated: it holds a password)")
}

func indexScheme(u string) int {
	for i := 0; i+3 <= len(u); i++ {
		if u[i:i+3] == "://" {
			return i + 3
		}
	}
	return -1
}

func lastAt(u string) int {
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '@' {
			return i
		}
	}
	return -1
}
