package tasks

import (
	"context"
	"sync"
)

// Local is the Notifier of one process: Publish calls every subscriber
// in turn, on the publisher's goroutine.
type Local struct {
	mu   sync.Mutex
	next int
	subs map[int]func(Change)
}

// NewLocal returns a Local notifier with no subscribers.
func NewLocal() *Local { return &Local{subs: map[int]func(Change){}} }

var _ Notifier = (*Local)(nil)

// Publish implements Notifier.
func (l *Local) Publish(_ context.Context, c Change) error {
	l.mu.Lock()
	fns := make([]func(Change), 0, len(l.subs))
	for _, fn := range l.subs {
		fns = append(fns, fn)
	}
	l.mu.Unlock()
	for _, fn := range fns {
		fn(c)
	}
	return nil
}

// Subscribe implements Notifier.
func (l *Local) Subscribe(fn func(Change)) func() {
	l.mu.Lock()
	id := l.next
	l.next++
	l.subs[id] = fn
	l.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.subs, id)
			l.mu.Unlock()
		})
	}
}
