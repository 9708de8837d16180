// Package taskstest is the contract every tasks.Store and tasks.Notifier
// implementation must pass: RunStoreTests and RunNotifierTests run it
// as subtests of the caller's test.
//
//	func TestMemory(t *testing.T) {
//		taskstest.RunStoreTests(t, func(t *testing.T, lim tasks.Limits) tasks.Store {
//			return tasks.NewMemory(lim)
//		})
//	}
//
// newStore must return an empty store with the caps lim, private to the
// subtest t (a shared backend can use a key prefix per test).
package taskstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/tasks"
)

// NewStore returns an empty store with the caps lim for the test t.
type NewStore func(t *testing.T, lim tasks.Limits) tasks.Store

func newTask(principal string) *tasks.Task {
	return &tasks.Task{
		Principal:    principal,
		Status:       tasks.Working,
		TTL:          time.Hour,
		PollInterval: time.Second,
		Method:       "tools/call",
		Params:       json.RawMessage(`{"name":"slow","arguments":{"n":1}}`),
		Era:          "2026-07-28",
	}
}

func mustCreate(t *testing.T, s tasks.Store, task *tasks.Task) *tasks.Task {
	t.Helper()
	c, err := s.Create(context.Background(), task)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return c
}

func setStatus(st tasks.Status) func(*tasks.Task) error {
	return func(t *tasks.Task) error { t.Status = st; return nil }
}

// RunStoreTests runs the Store contract against the stores newStore
// returns, its expiry checks on the wall clock: for a store that keeps a
// clock of its own (Redis).
func RunStoreTests(t *testing.T, newStore NewStore) { runStoreTests(t, newStore, false) }

// RunStoreTestsFakeClock is RunStoreTests with the expiry checks on a
// fake clock (testing/synctest), to the nanosecond and taking no time:
// for a store whose expiry reads the process's clock, which a synctest
// bubble fakes.
func RunStoreTestsFakeClock(t *testing.T, newStore NewStore) { runStoreTests(t, newStore, true) }

// onClock runs f as t's body on a fake clock when fake, on the wall
// clock otherwise.
func onClock(t *testing.T, fake bool, f func(t *testing.T)) {
	if fake {
		synctest.Test(t, f)
		return
	}
	f(t)
}

func runStoreTests(t *testing.T, newStore NewStore, fake bool) {
	ctx := context.Background()
	t.Run("CreateGet", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		in := newTask("alice")
		before := time.Now().Add(-time.Second)
		c := mustCreate(t, s, in)
		if len(c.ID) != 22 || c.ID == in.ID {
			t.Fatalf("id %q: want a fresh 22-character id", c.ID)
		}
		if c.CreatedAt.Before(before) || !c.UpdatedAt.Equal(c.CreatedAt) || !c.ExpiresAt.Equal(c.CreatedAt.Add(time.Hour)) {
			t.Fatalf("times: created %v updated %v expires %v", c.CreatedAt, c.UpdatedAt, c.ExpiresAt)
		}
		g, err := s.Get(ctx, "alice", c.ID)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if !reflect.DeepEqual(normal(g), normal(c)) {
			t.Fatalf("Get = %+v, want %+v", g, c)
		}
		if string(g.Params) != string(in.Params) || g.Method != "tools/call" || g.Era != "2026-07-28" || g.PollInterval != time.Second {
			t.Fatalf("Get lost fields: %+v", g)
		}
	})
	t.Run("CreateRefuses", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		for _, tc := range []struct {
			name string
			edit func(*tasks.Task)
		}{
			{"terminal status", func(x *tasks.Task) { x.Status = tasks.Completed }},
			{"unknown status", func(x *tasks.Task) { x.Status = "paused" }},
			{"zero ttl", func(x *tasks.Task) { x.TTL = 0 }},
			{"negative ttl", func(x *tasks.Task) { x.TTL = -time.Second }},
		} {
			x := newTask("alice")
			tc.edit(x)
			if _, err := s.Create(ctx, x); err == nil {
				t.Errorf("%s: Create succeeded", tc.name)
			}
		}
	})
	t.Run("UniqueIDs", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		seen := map[string]bool{}
		for i := 0; i < 200; i++ {
			c := mustCreate(t, s, newTask("alice"))
			if seen[c.ID] {
				t.Fatalf("id %q twice", c.ID)
			}
			seen[c.ID] = true
		}
	})
	t.Run("PrincipalBinding", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		c := mustCreate(t, s, newTask("alice"))
		ops := map[string]func(principal, id string) error{
			"Get": func(p, id string) error { _, err := s.Get(ctx, p, id); return err },
			"Update": func(p, id string) error {
				_, err := s.Update(ctx, p, id, setStatus(tasks.Completed))
				return err
			},
			"Cancel": func(p, id string) error { _, err := s.Cancel(ctx, p, id); return err },
		}
		for name, op := range ops {
			for _, p := range []string{"bob", "", "alice "} {
				if err := op(p, c.ID); !errors.Is(err, tasks.ErrNotFound) {
					t.Errorf("%s by %q: %v, want ErrNotFound", name, p, err)
				}
			}
			if err := op("alice", tasks.NewID()); !errors.Is(err, tasks.ErrNotFound) {
				t.Errorf("%s of an unknown id: %v, want ErrNotFound", name, err)
			}
		}
		g, err := s.Get(ctx, "alice", c.ID)
		if err != nil || g.Status != tasks.Working {
			t.Fatalf("after the others tried: %+v, %v", g, err)
		}
		page, _, err := s.List(ctx, "bob", "", 10)
		if err != nil || len(page) != 0 {
			t.Fatalf("List of bob: %d tasks, %v", len(page), err)
		}
	})
	t.Run("Update", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		c := mustCreate(t, s, newTask("alice"))
		time.Sleep(2 * time.Millisecond)
		u, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error {
			x.Status = tasks.InputRequired
			x.StatusMessage = "waiting"
			x.InputRequests = json.RawMessage(`{"a":{"method":"elicitation/create"}}`)
			return nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		if u.Status != tasks.InputRequired || u.StatusMessage != "waiting" || !u.UpdatedAt.After(c.UpdatedAt) {
			t.Fatalf("Update = %+v", u)
		}
		g, _ := s.Get(ctx, "alice", c.ID)
		if string(g.InputRequests) != `{"a":{"method":"elicitation/create"}}` {
			t.Fatalf("Get after Update: %+v", g)
		}
		boom := errors.New("boom")
		if _, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error { x.Status = tasks.Failed; return boom }); !errors.Is(err, boom) {
			t.Fatalf("fn error: %v", err)
		}
		if g, _ := s.Get(ctx, "alice", c.ID); g.Status != tasks.InputRequired {
			t.Fatalf("a failed Update stored status %q", g.Status)
		}
		for _, tc := range []struct {
			name string
			edit func(*tasks.Task)
		}{
			{"id", func(x *tasks.Task) { x.ID = tasks.NewID() }},
			{"principal", func(x *tasks.Task) { x.Principal = "bob" }},
			{"createdAt", func(x *tasks.Task) { x.CreatedAt = x.CreatedAt.Add(-time.Hour) }},
			{"ttl", func(x *tasks.Task) { x.TTL *= 2 }},
			{"expiresAt", func(x *tasks.Task) { x.ExpiresAt = x.ExpiresAt.Add(time.Hour) }},
			{"status", func(x *tasks.Task) { x.Status = "paused" }},
		} {
			if _, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error { tc.edit(x); return nil }); err == nil {
				t.Errorf("Update changing %s succeeded", tc.name)
			}
		}
	})
	t.Run("TerminalIsFinal", func(t *testing.T) {
		for _, end := range []tasks.Status{tasks.Completed, tasks.Failed, tasks.Cancelled} {
			s := newStore(t, tasks.Limits{})
			c := mustCreate(t, s, newTask("alice"))
			if _, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error {
				x.Status = end
				x.Result = json.RawMessage(`{"content":[]}`)
				return nil
			}); err != nil {
				t.Fatalf("to %s: %v", end, err)
			}
			for _, st := range []tasks.Status{tasks.Working, tasks.InputRequired, tasks.Completed, tasks.Failed, tasks.Cancelled} {
				if st == end {
					continue
				}
				if _, err := s.Update(ctx, "alice", c.ID, setStatus(st)); !errors.Is(err, tasks.ErrTerminal) {
					t.Errorf("%s -> %s: %v, want ErrTerminal", end, st, err)
				}
			}
			k, err := s.Cancel(ctx, "alice", c.ID)
			if err != nil || k.Status != end || string(k.Result) != `{"content":[]}` {
				t.Errorf("Cancel of a %s task: %+v, %v; want it unchanged", end, k, err)
			}
		}
	})
	t.Run("Cancel", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		for _, st := range []tasks.Status{tasks.Working, tasks.InputRequired} {
			x := newTask("alice")
			x.Status = st
			c := mustCreate(t, s, x)
			k, err := s.Cancel(ctx, "alice", c.ID)
			if err != nil || k.Status != tasks.Cancelled {
				t.Fatalf("Cancel of a %s task: %+v, %v", st, k, err)
			}
			if g, _ := s.Get(ctx, "alice", c.ID); g.Status != tasks.Cancelled {
				t.Fatalf("Get after Cancel: %q", g.Status)
			}
			if k2, err := s.Cancel(ctx, "alice", c.ID); err != nil || k2.Status != tasks.Cancelled {
				t.Fatalf("second Cancel: %+v, %v", k2, err)
			}
		}
	})
	t.Run("Caps", func(t *testing.T) {
		tests := []struct {
			name string
			lim  tasks.Limits
			want error // the cap error of the third task of alice
		}{
			{"per principal", tasks.Limits{MaxLive: 100, MaxLivePerPrincipal: 2}, tasks.ErrTooManyForPrincipal},
			{"total", tasks.Limits{MaxLive: 2}, tasks.ErrTooManyTotal},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t, tc.lim)
				a := mustCreate(t, s, newTask("alice"))
				b := mustCreate(t, s, newTask("alice"))
				_, err := s.Create(ctx, newTask("alice"))
				if !errors.Is(err, tasks.ErrTooMany) || !errors.Is(err, tc.want) {
					t.Fatalf("third task: %v, want %v", err, tc.want)
				}
				if tc.lim.MaxLivePerPrincipal > 0 {
					mustCreate(t, s, newTask("bob")) // bob has his own places
				}
				// A task that ends gives its place back, and so does a
				// cancelled one; ended tasks count against no cap.
				if _, err := s.Update(ctx, "alice", a.ID, setStatus(tasks.Completed)); err != nil {
					t.Fatal(err)
				}
				c := mustCreate(t, s, newTask("alice"))
				if _, err := s.Cancel(ctx, "alice", c.ID); err != nil {
					t.Fatal(err)
				}
				mustCreate(t, s, newTask("alice"))
				if _, err := s.Create(ctx, newTask("alice")); !errors.Is(err, tasks.ErrTooMany) {
					t.Fatalf("at the cap again: %v", err)
				}
				if g, err := s.Get(ctx, "alice", b.ID); err != nil || g.Status != tasks.Working {
					t.Fatalf("the task at the cap: %+v, %v", g, err)
				}
			})
		}
	})
	t.Run("ByteBudgets", func(t *testing.T) {
		tests := []struct {
			name string
			lim  tasks.Limits
			want error // the Create error once alice's results fill the budget
		}{
			{"per principal", tasks.Limits{MaxBytes: 1 << 20, MaxBytesPerPrincipal: 10 << 10}, tasks.ErrBytesForPrincipal},
			{"total", tasks.Limits{MaxBytes: 10 << 10}, tasks.ErrBytesTotal},
		}
		result := json.RawMessage(`{"text":"` + string(make([]byte, 4<<10)) + `"}`)
		for i := range result[9 : len(result)-2] {
			result[9+i] = 'x'
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				s := newStore(t, tc.lim)
				withResult := func(x *tasks.Task) error { x.Status, x.Result = tasks.Completed, result; return nil }
				a := mustCreate(t, s, newTask("alice"))
				if _, err := s.Update(ctx, "alice", a.ID, withResult); err != nil {
					t.Fatalf("first 4 KiB result: %v", err)
				}
				b := mustCreate(t, s, newTask("alice"))
				if _, err := s.Update(ctx, "alice", b.ID, withResult); err != nil {
					t.Fatalf("second 4 KiB result: %v", err)
				}
				c := mustCreate(t, s, newTask("alice"))
				_, err := s.Update(ctx, "alice", c.ID, withResult)
				if !errors.Is(err, tasks.ErrOverBudget) {
					t.Fatalf("third 4 KiB result past a 10 KiB budget: %v", err)
				}
				if g, err := s.Get(ctx, "alice", c.ID); err != nil || g.Status != tasks.Working || g.Result != nil {
					t.Fatalf("the refused update was stored: %+v, %v", g, err)
				}
				// Arguments count too: a create that does not fit is refused.
				big := newTask("alice")
				big.Params = result
				if _, err := s.Create(ctx, big); !errors.Is(err, tc.want) || !errors.Is(err, tasks.ErrTooMany) {
					t.Fatalf("a create past the budget: %v, want %v", err, tc.want)
				}
				// Dropping a task gives its bytes back.
				if err := s.Delete(ctx, "alice", a.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := s.Update(ctx, "alice", c.ID, withResult); err != nil {
					t.Fatalf("a result after a delete freed its bytes: %v", err)
				}
			})
		}
	})
	// past sleeps until a TTL of ttl has passed: exactly, on a fake clock,
	// after checking the task is there a nanosecond before; with slack
	// for the clocks of a store elsewhere, on the wall clock.
	past := func(t *testing.T, s tasks.Store, id string, ttl time.Duration) {
		t.Helper()
		if !fake {
			time.Sleep(5 * ttl)
			return
		}
		time.Sleep(ttl - time.Nanosecond)
		if _, err := s.Get(ctx, "alice", id); err != nil {
			t.Fatalf("Get a nanosecond before the ttl passed: %v", err)
		}
		time.Sleep(time.Nanosecond)
	}
	t.Run("CapFreedByExpiry", func(t *testing.T) {
		onClock(t, fake, func(t *testing.T) {
			s := newStore(t, tasks.Limits{MaxLive: 1})
			x := newTask("alice")
			x.TTL = time.Millisecond
			c := mustCreate(t, s, x)
			past(t, s, c.ID, x.TTL)
			if _, err := s.Expire(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
			mustCreate(t, s, newTask("alice"))
		})
	})
	t.Run("Expiry", func(t *testing.T) {
		onClock(t, fake, func(t *testing.T) {
			s := newStore(t, tasks.Limits{})
			short := newTask("alice")
			short.TTL = time.Millisecond
			a := mustCreate(t, s, short)
			b := mustCreate(t, s, newTask("alice"))
			done := newTask("alice")
			done.TTL = time.Millisecond
			d := mustCreate(t, s, done)
			if _, err := s.Update(ctx, "alice", d.ID, setStatus(tasks.Completed)); err != nil && !errors.Is(err, tasks.ErrNotFound) {
				t.Fatal(err)
			}
			past(t, s, a.ID, short.TTL)
			for _, id := range []string{a.ID, d.ID} {
				if _, err := s.Get(ctx, "alice", id); !errors.Is(err, tasks.ErrNotFound) {
					t.Errorf("Get of an expired task: %v, want ErrNotFound", err)
				}
			}
			if _, err := s.Get(ctx, "alice", b.ID); err != nil {
				t.Fatalf("Get of a task within its ttl: %v", err)
			}
			if _, err := s.Expire(ctx, time.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Get(ctx, "alice", b.ID); err != nil {
				t.Fatalf("Expire dropped a task within its ttl: %v", err)
			}
			n, err := s.Expire(ctx, time.Now().Add(2*time.Hour))
			if err != nil || n < 1 {
				t.Fatalf("Expire two hours on: %d, %v", n, err)
			}
			if _, err := s.Get(ctx, "alice", b.ID); !errors.Is(err, tasks.ErrNotFound) {
				t.Fatalf("Get after Expire: %v", err)
			}
			page, _, _ := s.List(ctx, "alice", "", 10)
			if len(page) != 0 {
				t.Fatalf("List after Expire: %d tasks", len(page))
			}
		})
	})
	t.Run("Delete", func(t *testing.T) {
		s := newStore(t, tasks.Limits{MaxLive: 1})
		c := mustCreate(t, s, newTask("alice"))
		if err := s.Delete(ctx, "bob", c.ID); !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("Delete by another principal: %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "alice", c.ID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := s.Get(ctx, "alice", c.ID); !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("Get after Delete: %v", err)
		}
		if err := s.Delete(ctx, "alice", c.ID); !errors.Is(err, tasks.ErrNotFound) {
			t.Fatalf("second Delete: %v", err)
		}
		mustCreate(t, s, newTask("alice")) // the deleted task gave its place back
	})
	t.Run("List", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		var want []string
		for i := 0; i < 7; i++ {
			want = append(want, mustCreate(t, s, newTask("alice")).ID)
			mustCreate(t, s, newTask("bob"))
			time.Sleep(2 * time.Millisecond) // distinct creation times
		}
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 10 {
				t.Fatal("List does not end")
			}
			page, next, err := s.List(ctx, "alice", cursor, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) > 3 {
				t.Fatalf("page of %d tasks, limit 3", len(page))
			}
			for _, x := range page {
				if x.Principal != "alice" {
					t.Fatalf("List of alice returned a task of %q", x.Principal)
				}
				got = append(got, x.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("List order:\n got %v\nwant %v", got, want)
		}
		for _, bad := range []string{"!!", "bm90IGEgY3Vyc29y", "x"} {
			if _, _, err := s.List(ctx, "alice", bad, 3); !errors.Is(err, tasks.ErrBadCursor) {
				t.Errorf("cursor %q: %v, want ErrBadCursor", bad, err)
			}
		}
	})
	t.Run("Copies", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		in := newTask("alice")
		c := mustCreate(t, s, in)
		in.Params[0] = 'X'
		c.Params[1] = 'X'
		c.Status = tasks.Failed
		g, _ := s.Get(ctx, "alice", c.ID)
		if string(g.Params) != `{"name":"slow","arguments":{"n":1}}` || g.Status != tasks.Working {
			t.Fatalf("the store shares memory with its callers: %+v", g)
		}
	})
	t.Run("JSON", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		c := mustCreate(t, s, newTask("alice"))
		u, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error {
			x.Status = tasks.Failed
			x.Error = json.RawMessage(`{"code":-32603,"message":"boom"}`)
			x.State = json.RawMessage(`{"round":2}`)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		var back tasks.Task
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(&back), normal(u)) {
			t.Fatalf("JSON round trip:\n got %+v\nwant %+v", back, u)
		}
	})
	t.Run("ConcurrentUpdates", func(t *testing.T) {
		s := newStore(t, tasks.Limits{})
		c := mustCreate(t, s, newTask("alice"))
		const n = 20
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := s.Update(ctx, "alice", c.ID, func(x *tasks.Task) error {
					var k int
					if len(x.State) > 0 {
						if err := json.Unmarshal(x.State, &k); err != nil {
							return err
						}
					}
					x.State = json.RawMessage(fmt.Sprint(k + 1))
					return nil
				})
				if err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		g, _ := s.Get(ctx, "alice", c.ID)
		if string(g.State) != fmt.Sprint(n) {
			t.Fatalf("%d concurrent increments gave %s: an update was lost", n, g.State)
		}
	})
}

// normal makes times comparable with DeepEqual (monotonic readings and
// locations differ after a round trip).
func normal(t *tasks.Task) *tasks.Task {
	c := t.Clone()
	c.CreatedAt = c.CreatedAt.UTC().Round(0)
	c.UpdatedAt = c.UpdatedAt.UTC().Round(0)
	c.ExpiresAt = c.ExpiresAt.UTC().Round(0)
	return c
}

// RunNotifierTests runs the Notifier contract against the notifiers
// newNotifier returns (each test gets its own).
func RunNotifierTests(t *testing.T, newNotifier func(t *testing.T) tasks.Notifier) {
	ctx := context.Background()
	wait := func(t *testing.T, ch <-chan tasks.Change, want string) {
		t.Helper()
		select {
		case c := <-ch:
			if c.ID != want {
				t.Fatalf("got change of %q, want %q", c.ID, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("change of %q not delivered within 10 s", want)
		}
	}
	t.Run("Delivery", func(t *testing.T) {
		n := newNotifier(t)
		a, b := make(chan tasks.Change, 4), make(chan tasks.Change, 4)
		ua := n.Subscribe(func(c tasks.Change) { a <- c })
		ub := n.Subscribe(func(c tasks.Change) { b <- c })
		defer ub()
		c := tasks.Change{ID: "t1", Principal: "alice", Status: tasks.Cancelled, UpdatedAt: tasks.Now()}
		if err := n.Publish(ctx, c); err != nil {
			t.Fatal(err)
		}
		wait(t, a, "t1")
		wait(t, b, "t1")
		ua()
		ua() // idempotent
		if err := n.Publish(ctx, tasks.Change{ID: "t2", Status: tasks.Completed}); err != nil {
			t.Fatal(err)
		}
		wait(t, b, "t2")
		select {
		case c := <-a:
			t.Fatalf("an unsubscribed function got %+v", c)
		default:
		}
	})
}
