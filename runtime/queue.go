package runtime

import (
	"context"
	"time"
)

// QueueHook is told when a Pool.Call made with it (CallOptions.Queue) has
// to wait in its pool's queue because every instance
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

// CallOptions are the options of one call of a Pool (Call, CallExport,
// CallComponent) beyond its context, input and Host. A nil *CallOptions
// is the zero value: the pool's Limits, no hook.
type CallOptions struct {
	// Timeout, when positive, is the call's deadline instead of
	// Limits.Timeout (a background task's longer deadline; the other
	// limits stay the pool's).
	Timeout time.Duration
	// Queue, when set, is told if the call has to wait in the pool's
	// queue because every instance is busy.
	Queue QueueHook
}

// timeout is the deadline of a call made with opts.
func (p *Pool) timeout(opts *CallOptions) time.Duration {
	if opts != nil && opts.Timeout > 0 {
		return opts.Timeout
	}
	return p.lim.Timeout
}
