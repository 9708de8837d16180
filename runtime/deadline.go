package runtime

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// deadlineCtx is the context of one Pool.Call: the caller's context with
// the call's deadline. context.WithDeadline would start a timer, register
// with the parent and allocate a channel for every call, yet most calls
// never wait on their context: the interrupter stops running guest code
// at the deadline by itself. So deadlineCtx answers Deadline and Err from
// the deadline and the parent, and derives the context.WithDeadline only
// when something asks for Done (a host call that blocks, a call queued
// for an instance, the scheduler parking a call, wazero's watcher on the
// fallback runtime). Err and Done agree: until Done has been asked for,
// Err reads the clock (and Done, asked for then, is closed at once);
// afterwards it is the derived context's. Err never blocks: a caller that
// must see a deadline the clock has passed before the derived context's
// timer fires waits for Done itself (settle).
type deadlineCtx struct {
	parent   context.Context
	d        time.Time     // the earlier of the call's and the parent's deadline
	timeout  time.Duration // the call's own timeout (Error.Timeout); d is at most its start plus it
	st       *callState    // the guest call's state, set before it runs (stateOf); nil before
	mu       sync.Mutex
	derived  atomic.Pointer[derivedCtx] // set once by Done
	released atomic.Bool                // the call is over (release)
	expired  atomic.Bool                // Err answered DeadlineExceeded by the clock
}

type derivedCtx struct {
	ctx    context.Context
	cancel context.CancelFunc
}

// withCallDeadline returns parent with the deadline d (or the parent's,
// if earlier) and the function that releases it, as context.WithDeadline
// does, without its timer until Done is called.
func withCallDeadline(parent context.Context, d time.Time) *deadlineCtx {
	if pd, ok := parent.Deadline(); ok && pd.Before(d) {
		d = pd
	}
	return &deadlineCtx{parent: parent, d: d}
}

// Deadline returns the call's deadline.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.d, true }

// Done returns the channel closed at the deadline or when the parent is
// done, deriving the context that closes it on first use.
func (c *deadlineCtx) Done() <-chan struct{} { return c.ctx().Done() }

// Err returns context.DeadlineExceeded once the deadline has passed, the
// parent's error once it is done, and nil before.
func (c *deadlineCtx) Err() error { return c.errAt(time.Time{}) }

// errAt is Err at now (zero for the clock's time). Once Done has been
// asked for, it is the derived context's error, as context.WithDeadline's
// (nil until its timer fires, even when the clock has passed the
// deadline). Before, it answers from the parent, the release and the
// clock; once it has answered DeadlineExceeded by the clock it always
// does, as a context's Err must, and a Done asked for afterwards is
// derived so that it agrees (ctx).
func (c *deadlineCtx) errAt(now time.Time) error {
	if dc := c.derived.Load(); dc != nil {
		return dc.ctx.Err()
	}
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if c.released.Load() {
		return context.Canceled
	}
	if now.IsZero() {
		now = time.Now()
	}
	if now.Before(c.d) {
		return nil
	}
	// Past the deadline: decide under mu, so that a Done derived at the
	// same moment and this answer agree.
	c.mu.Lock()
	defer c.mu.Unlock()
	if dc := c.derived.Load(); dc != nil {
		return dc.ctx.Err()
	}
	c.expired.Store(true)
	return context.DeadlineExceeded
}

// settle waits, for a guest call that ended at end (zero: now) at or past
// ctx's deadline, until ctx is done: its timer is due and may lag the
// clock by a moment, while the interrupter (or the scheduler's probe,
// which reads the clock) may have stopped the guest already. A call its
// deadline stopped is then classified as such (ctx.Err), never as a trap
// or a success.
//
// It reads the clock only when end is zero: on the success path of every
// call it costs a comparison.
func settle(ctx context.Context, end time.Time) {
	d, ok := ctx.Deadline()
	if !ok {
		return
	}
	if end.IsZero() {
		end = time.Now()
	}
	if !end.Before(d) {
		<-ctx.Done() // due, so closed at once or in a moment
	}
}

// Value returns the guest call's state for stateKey, once set, and
// defers to the parent otherwise.
func (c *deadlineCtx) Value(key any) any {
	if _, ok := key.(stateKey); ok && c.st != nil {
		return c.st
	}
	return c.parent.Value(key)
}

// AfterFunc arranges for f to run when c is done, as context.AfterFunc
// does; the context package calls it for contexts derived from c instead
// of starting a goroutine to watch Done.
func (c *deadlineCtx) AfterFunc(f func()) func() bool { return context.AfterFunc(c.ctx(), f) }

// ctx returns the derived context, deriving it on first use.
func (c *deadlineCtx) ctx() context.Context {
	if dc := c.derived.Load(); dc != nil {
		return dc.ctx
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if dc := c.derived.Load(); dc != nil {
		return dc.ctx
	}
	parent := c.parent
	if c.expired.Load() {
		// Err has answered DeadlineExceeded: so must the derived context,
		// whatever becomes of the parent (its deadline is past, so it is
		// done at once).
		parent = context.WithoutCancel(parent)
	}
	ctx, cancel := context.WithDeadline(parent, c.d)
	if c.released.Load() {
		cancel()
	}
	c.derived.Store(&derivedCtx{ctx: ctx, cancel: cancel})
	return ctx
}

// release ends the call's context, as the CancelFunc of
// context.WithDeadline does: it is done from now on (context.Canceled
// unless the parent is done or Err has answered DeadlineExceeded; unlike
// a cancelled context.WithDeadline it does not remember a deadline that
// passed unseen, which nothing asks once the call is over), and the
// derived context's timer, if any, is stopped.
func (c *deadlineCtx) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.released.Store(true)
	if dc := c.derived.Load(); dc != nil {
		dc.cancel()
	}
}
