package runtime

import (
	"context"
	"time"
)

// QueueHook is told when a Pool.Call made under a context carrying it
// (WithQueueHook) has to wait in its pool's queue because every instance
// is busy. A caller that bounds its own concurrency uses it to give back
// what it holds while the call only waits, and to take it again before
// the call runs.
type QueueHook interface {
	// Waiting is called once, just before the call blocks in the queue.
	// A call that finds a free instance, or a full queue, never calls it.
	Waiting()
	// Resume is called once after a call that waited got its instance,
	// before any guest code runs, with the call's context (its Timeout
	// applies). When it fails, the call gives the instance back and
	// fails: with KindDeadline or KindCanceled if the context ended,
	// otherwise with KindBusy wrapping the error. A call that fails while
	// queued (deadline, cancellation, Close) is not resumed.
	Resume(ctx context.Context) error
}

type queueHookKey struct{}

// WithQueueHook returns a copy of ctx carrying h for the Pool.Calls made
// under it.
func WithQueueHook(ctx context.Context, h QueueHook) context.Context {
	return &QueueHookContext{Context: ctx, Hook: h}
}

// QueueHookContext is a context carrying Hook for the Pool.Calls made
// under it: what WithQueueHook returns, as a type that a caller can
// allocate with its own per-call state rather than apart.
type QueueHookContext struct {
	context.Context
	Hook QueueHook
}

// Value returns Hook for the QueueHook's key and defers to the parent
// otherwise.
func (c *QueueHookContext) Value(key any) any {
	if _, ok := key.(queueHookKey); ok {
		return c.Hook
	}
	return c.Context.Value(key)
}

func queueHookFrom(ctx context.Context) QueueHook {
	h, _ := ctx.Value(queueHookKey{}).(QueueHook)
	return h
}

type callTimeoutKey struct{}

// WithCallTimeout returns a copy of ctx under which Pool.Call uses d as
// the call's deadline instead of Limits.Timeout (a background task's
// longer deadline; the other limits stay the pool's). d <= 0 changes
// nothing.
func WithCallTimeout(ctx context.Context, d time.Duration) context.Context {
	if d <= 0 {
		return ctx
	}
	return context.WithValue(ctx, callTimeoutKey{}, d)
}

// callTimeout is the deadline of a call made under ctx.
func (p *Pool) callTimeout(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(callTimeoutKey{}).(time.Duration); ok {
		return d
	}
	return p.lim.Timeout
}
