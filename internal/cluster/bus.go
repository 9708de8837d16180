package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// hub multiplexes the cluster's pub/sub channels over one Redis
// connection, which go-redis re-establishes (and resubscribes) after a
// failure. Messages published while a replica is cut off from Redis are
// lost to it: pub/sub keeps nothing.
type hub struct {
	c    *Cluster
	mu   sync.Mutex
	ps   *redis.PubSub // nil until the first subscription
	subs map[string]map[int]func([]byte)
	next int
}

// originLen is the length of the replica id that prefixes every message.
const originLen = 16

// publish sends payload on channel to the other replicas (a replica's
// own subscribers are called by the caller directly, so that they work
// while Redis is away).
func (c *Cluster) publish(ctx context.Context, channel string, payload []byte) error {
	ctx, cancel := c.ctx(ctx)
	defer cancel()
	msg := make([]byte, 0, originLen+len(payload))
	msg = append(append(msg, c.origin...), payload...)
	return wrap("publish", c.rdb.Publish(ctx, channel, msg).Err())
}

// subscribe calls fn with every payload another replica publishes on
// channel until the returned function is called. fn runs on the hub's
// goroutine and must not block.
func (c *Cluster) subscribe(channel string, fn func([]byte)) (unsubscribe func()) {
	h := &c.hub
	h.mu.Lock()
	if h.ps == nil {
		h.subs = map[string]map[int]func([]byte){}
		h.ps = c.rdb.Subscribe(context.Background())
		ch := h.ps.Channel(redis.WithChannelHealthCheckInterval(c.probeEvery), redis.WithChannelSendTimeout(time.Second))
		c.wg.Go(func() { h.run(ch) })
	}
	fns := h.subs[channel]
	if fns == nil {
		fns = map[int]func([]byte){}
		h.subs[channel] = fns
		// Recorded by go-redis even when Redis is down: it subscribes
		// when it reconnects.
		ctx, cancel := c.ctx(context.Background())
		_ = h.ps.Subscribe(ctx, channel)
		cancel()
	}
	id := h.next
	h.next++
	fns[id] = fn
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			defer h.mu.Unlock()
			delete(h.subs[channel], id)
			if len(h.subs[channel]) == 0 {
				delete(h.subs, channel)
				ctx, cancel := c.ctx(context.Background())
				_ = h.ps.Unsubscribe(ctx, channel)
				cancel()
			}
		})
	}
}

// run delivers messages until the pub/sub is closed.
func (h *hub) run(ch <-chan *redis.Message) {
	for m := range ch {
		p := m.Payload
		if len(p) < originLen || p[:originLen] == h.c.origin {
			continue
		}
		h.mu.Lock()
		fns := make([]func([]byte), 0, len(h.subs[m.Channel]))
		for _, fn := range h.subs[m.Channel] {
			fns = append(fns, fn)
		}
		h.mu.Unlock()
		payload := []byte(p[originLen:])
		for _, fn := range fns {
			fn(payload)
		}
	}
}

// close closes the pub/sub connection; run returns.
func (h *hub) close() {
	h.mu.Lock()
	ps := h.ps
	h.mu.Unlock()
	if ps != nil {
		_ = ps.Close()
	}
}

// Bus carries the MCP engine's notifications between replicas over one
// Redis channel: it satisfies mcp.Bus. Publish queues (up to busQueue
// messages) and one goroutine sends them in order, so that a notifier
// never waits for Redis.
type Bus struct {
	c       *Cluster
	channel string
	queue   chan []byte
}

// busQueue bounds the notifications waiting to be published; past it
// they are dropped (Publish says so).
const busQueue = 1024

// errBusFull is Publish's error when the queue is full (Redis slow or
// away).
var errBusFull = fmt.Errorf("cluster: notification bus: %w: %d notifications already waiting", ErrUnavailable, busQueue)

// Bus returns the notification bus of the cluster (one per Cluster).
func (c *Cluster) Bus() *Bus {
	c.busOnce.Do(func() { c.bus = c.newBus("wasmcp:bus:notify") })
	return c.bus
}

// newBus starts a queued publisher on channel.
func (c *Cluster) newBus(channel string) *Bus {
	b := &Bus{c: c, channel: channel, queue: make(chan []byte, busQueue)}
	c.wg.Go(b.run)
	return b
}

// Publish queues msg for the other replicas.
func (b *Bus) Publish(msg []byte) error {
	select {
	case b.queue <- append([]byte(nil), msg...):
		return nil
	default:
		return errBusFull
	}
}

// run publishes the queued messages until the cluster closes.
func (b *Bus) run() {
	for {
		select {
		case <-b.c.closed:
			return
		case msg := <-b.queue:
			if err := b.c.publish(context.Background(), b.channel, msg); err != nil {
				b.c.log.Warn("cluster: notification not published to the other replicas", "error", err)
			}
		}
	}
}

// Subscribe calls fn with every message another replica published until
// the returned function is called.
func (b *Bus) Subscribe(fn func(msg []byte)) (unsubscribe func()) {
	return b.c.subscribe(b.channel, fn)
}
