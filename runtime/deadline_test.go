package runtime

import (
	"context"
	"errors"
	goruntime "runtime"
	"testing"
	"testing/synctest"
	"time"
)

// TestDeadlineCtx checks that a call's context behaves as
// context.WithDeadline would, whether or not Done was asked for before
// its deadline passed, its parent was cancelled or the call released it.
// Each case runs on a fake clock: the deadline passes exactly when the
// test sleeps past it.
func TestDeadlineCtx(t *testing.T) {
	type key struct{}
	const wait = 5 * time.Second // generous: only a broken context waits this long
	for _, tc := range []struct {
		name     string
		timeout  time.Duration // from now
		done     bool          // ask for Done first
		cancel   bool          // cancel the parent
		release  bool          // release the call's context
		want     error         // Err at the end
		wantDone bool          // Done is closed at the end
	}{
		{name: "running", timeout: time.Hour},
		{name: "running, Done asked", timeout: time.Hour, done: true},
		{name: "past deadline", timeout: time.Millisecond, want: context.DeadlineExceeded, wantDone: true},
		{name: "past deadline, Done asked", timeout: time.Millisecond, done: true, want: context.DeadlineExceeded, wantDone: true},
		{name: "parent cancelled", timeout: time.Hour, cancel: true, want: context.Canceled, wantDone: true},
		{name: "parent cancelled, Done asked", timeout: time.Hour, done: true, cancel: true, want: context.Canceled, wantDone: true},
		{name: "released", timeout: time.Hour, release: true, want: context.Canceled, wantDone: true},
		{name: "released, Done asked", timeout: time.Hour, done: true, release: true, want: context.Canceled, wantDone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
				defer cancel()
				d := time.Now().Add(tc.timeout)
				c := withCallDeadline(parent, d)
				if got, ok := c.Deadline(); !ok || !got.Equal(d) {
					t.Errorf("Deadline() = %v, %v; want %v, true", got, ok, d)
				}
				if c.Value(key{}) != "v" {
					t.Error("Value does not reach the parent's values")
				}
				if tc.done {
					_ = c.Done()
				}
				if tc.cancel {
					cancel()
				}
				if tc.release {
					c.release()
				}
				if tc.want == context.DeadlineExceeded {
					time.Sleep(time.Until(d) - time.Nanosecond)
					if err := c.Err(); err != nil {
						t.Errorf("Err() a nanosecond before the deadline = %v", err)
					}
					time.Sleep(time.Nanosecond)
				}
				wantErr := func(when string) {
					t.Helper()
					if err := c.Err(); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
						t.Errorf("Err() %s = %v, want %v", when, err, tc.want)
					}
				}
				if !tc.done {
					// Before anything derives Done, Err answers from the
					// parent, the release and the clock.
					wantErr("before Done is asked for")
				}
				child, stop := context.WithCancel(c) // through AfterFunc, not a goroutine (and so asks for Done)
				defer stop()
				if tc.wantDone {
					for _, ch := range []<-chan struct{}{c.Done(), child.Done()} {
						select {
						case <-ch:
						case <-time.After(wait):
							t.Fatal("Done (or a child's) not closed")
						}
					}
					if late := time.Since(d); tc.want == context.DeadlineExceeded && late != 0 {
						t.Errorf("Done closed %v after the deadline", late)
					}
				} else {
					select {
					case <-c.Done():
						t.Fatal("Done closed")
					case <-child.Done():
						t.Fatal("a child's Done closed")
					default:
					}
				}
				wantErr("once Done is asked for")
				c.release()
				if c.Err() == nil {
					t.Error("Err() = nil after release")
				}
			})
		})
	}
}

// TestDeadlineCtxErrSticks: once Err has answered, it answers the same
// (as the context.Context contract has it): a deadline seen to have passed
// stays DeadlineExceeded when the parent is cancelled afterwards or the
// call is released, whether Done is asked for before, between or never.
func TestDeadlineCtxErrSticks(t *testing.T) {
	for _, tc := range []struct {
		name       string
		doneBefore bool // ask for Done before the deadline
		doneAfter  bool // ask for Done after the parent is cancelled
		release    bool // release instead of cancelling the parent
	}{
		{name: "cancelled"},
		{name: "cancelled, Done asked before", doneBefore: true},
		{name: "cancelled, Done asked after", doneAfter: true},
		{name: "released", release: true},
		{name: "released, Done asked after", release: true, doneAfter: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.Background())
				defer cancel()
				d := time.Now().Add(time.Millisecond)
				c := withCallDeadline(parent, d)
				defer c.release()
				if tc.doneBefore {
					_ = c.Done()
				}
				time.Sleep(time.Until(d))
				if tc.doneBefore {
					// As context.WithDeadline's: nil until its timer fires,
					// which may lag the clock by a moment.
					<-c.Done()
				}
				if err := c.Err(); err != context.DeadlineExceeded {
					t.Fatalf("Err() past the deadline = %v", err)
				}
				if tc.release {
					c.release()
				} else {
					cancel()
				}
				if tc.doneAfter {
					<-c.Done()
				}
				if err := c.Err(); err != context.DeadlineExceeded {
					t.Errorf("Err() = %v after DeadlineExceeded, want DeadlineExceeded again", err)
				}
			})
		})
	}
}

// TestDeadlineCtxParentDeadline checks that an earlier deadline of the
// parent is the call's.
func TestDeadlineCtxParentDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pd := time.Now().Add(time.Minute)
		parent, cancel := context.WithDeadline(context.Background(), pd)
		defer cancel()
		c := withCallDeadline(parent, pd.Add(time.Hour))
		defer c.release()
		if d, _ := c.Deadline(); !d.Equal(pd) {
			t.Errorf("Deadline() = %v, want the parent's %v", d, pd)
		}
		if err := c.errAt(pd); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("errAt(the parent's deadline) = %v, want DeadlineExceeded", err)
		}
	})
}

// TestDerivedContextsStartNoGoroutine: contexts that host functions derive
// from a call's context register with it rather than each starting a
// goroutine to watch it, and the call's context ends with its parent.
func TestDerivedContextsStartNoGoroutine(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := withCallDeadline(parent, time.Now().Add(time.Hour))
	defer c.release()
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{
		{"deadlineCtx", c},
		{"callCtx", &callCtx{Context: c, st: &callState{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 100
			before := goruntime.NumGoroutine()
			children := make([]context.Context, n)
			for i := range children {
				var stop context.CancelFunc
				children[i], stop = context.WithTimeout(tc.ctx, time.Hour)
				defer stop()
			}
			if d := goruntime.NumGoroutine() - before; d >= n/2 {
				t.Errorf("%d child contexts started %d goroutines", n, d)
			}
		})
	}
	cancel()
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the call's context not done after its parent was cancelled")
	}
}

// TestDeadlineCtxErrNeverBlocks: Err answers at once, as a context's Err
// must, even when the clock (here errAt's now) is past the deadline and
// the derived context's timer has not fired: it answers what Done says
// (nil, not closed yet). settle is what waits for a due deadline. Before,
// errAt waited for the derived context's timer.
func TestDeadlineCtxErrNeverBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := withCallDeadline(context.Background(), time.Now().Add(time.Hour))
		defer c.release()
		_ = c.Done()
		got := make(chan error, 1)
		go func() { got <- c.errAt(time.Now().Add(2 * time.Hour)) }()
		select {
		case err := <-got:
			if err != nil {
				t.Errorf("errAt past the deadline, Done not closed: %v, want nil (Err agrees with Done)", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("errAt blocked")
		}

		d := time.Now().Add(20 * time.Millisecond)
		c2 := withCallDeadline(context.Background(), d)
		defer c2.release()
		_ = c2.Done()
		settle(c2, d) // a call that ended at its deadline
		select {
		case <-c2.Done():
		default:
			t.Fatal("settle returned before Done was closed")
		}
		if err := c2.Err(); err != context.DeadlineExceeded {
			t.Errorf("Err after settle = %v, want DeadlineExceeded", err)
		}
	})
}
