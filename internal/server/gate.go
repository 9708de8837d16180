package server

import (
	"context"
	"sync"
	"sync/atomic"
)

// startGate holds the lists and calls of a server started with
// Options.Background until its first load is done (or its wait is over),
// so that a client that lists at once still sees every plugin that loads
// in time, while initialize is answered without waiting for any.
type startGate struct {
	ready atomic.Bool
	once  sync.Once
	ch    chan struct{}
}

func newStartGate() *startGate { return &startGate{ch: make(chan struct{})} }

// open lets everything through, for good; it may be called more than once.
func (g *startGate) open() {
	g.once.Do(func() {
		g.ready.Store(true)
		close(g.ch)
	})
}

// wait returns when the gate is open or ctx is done (then ctx's error).
// A nil gate is open.
func (g *startGate) wait(ctx context.Context) error {
	if g == nil || g.ready.Load() {
		return nil
	}
	select {
	case <-g.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
