package cluster_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
	"github.com/wasmcp/wasmcp/internal/tasks"
	"github.com/wasmcp/wasmcp/internal/tasks/taskstest"
)

// TestTasksContract runs the tasks helper's Store and Notifier contracts
// against the Redis store, each subtest with a server of its own.
func TestTasksContract(t *testing.T) {
	taskstest.RunStoreTests(t, func(t *testing.T, lim tasks.Limits) tasks.Store {
		return open(t, redistest.Start(t)).Tasks(lim)
	})
	taskstest.RunNotifierTests(t, func(t *testing.T) tasks.Notifier {
		return open(t, redistest.Start(t)).TaskNotifier(tasks.Limits{})
	})
}

// TestTasksAcrossReplicas checks that a task created through one replica
// is read, listed, cancelled and counted against the caps through
// another, and that a change published on one reaches the other's
// subscribers.
func TestTasksAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t)
	ca, cb := open(t, r), open(t, r)
	lim := tasks.Limits{MaxLivePerPrincipal: 1}
	a, b := ca.Tasks(lim), cb.Tasks(lim)
	got := make(chan tasks.Change, 4)
	cb.TaskNotifier(lim).Subscribe(func(c tasks.Change) { got <- c })
	task, err := a.Create(ctx, &tasks.Task{Principal: "alice", Status: tasks.Working, TTL: time.Hour, Method: "tools/call"})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := b.Get(ctx, "alice", task.ID); err != nil || g.Method != "tools/call" {
		t.Fatalf("Get on the other replica: %+v, %v", g, err)
	}
	if _, err := b.Create(ctx, &tasks.Task{Principal: "alice", Status: tasks.Working, TTL: time.Hour}); err == nil {
		t.Fatal("the other replica ignored the per-principal cap")
	}
	if page, _, err := b.List(ctx, "alice", "", 10); err != nil || len(page) != 1 || page[0].ID != task.ID {
		t.Fatalf("List on the other replica: %v, %v", page, err)
	}
	if k, err := b.Cancel(ctx, "alice", task.ID); err != nil || k.Status != tasks.Cancelled {
		t.Fatalf("Cancel on the other replica: %+v, %v", k, err)
	}
	if g, _ := a.Get(ctx, "alice", task.ID); g.Status != tasks.Cancelled {
		t.Fatalf("status on the first replica after the cancel: %q", g.Status)
	}
	// The subscription is live once one change crossed.
	waitFor(t, "a change across replicas", func() bool {
		_ = ca.TaskNotifier(lim).Publish(ctx, tasks.Change{ID: task.ID, Principal: "alice", Status: tasks.Cancelled})
		select {
		case c := <-got:
			return c.ID == task.ID && c.Status == tasks.Cancelled
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
}

// TestTaskBusForged checks that a task change another replica did not
// send is dropped before any subscriber sees it: a forged cancel of
// alice's working task (her id, her name), a change naming another
// principal or no task, an oversized one and malformed ones. A genuine
// change published after them arrives, and pub/sub keeps order, so none
// of the forged ones was merely late.
func TestTaskBusForged(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t)
	ca, cb := open(t, r), open(t, r)
	lim := tasks.Limits{}
	a := ca.Tasks(lim)
	task, err := a.Create(ctx, &tasks.Task{Principal: "alice", Status: tasks.Working, TTL: time.Hour, Method: "tools/call"})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan tasks.Change, 64)
	cb.TaskNotifier(lim).Subscribe(func(c tasks.Change) { got <- c })
	genuine := tasks.Change{ID: task.ID, Principal: "alice", Status: tasks.Working, UpdatedAt: task.UpdatedAt}
	waitFor(t, "a genuine change across replicas", func() bool {
		_ = ca.TaskNotifier(lim).Publish(ctx, genuine)
		select {
		case c := <-got:
			return c == genuine
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	time.Sleep(200 * time.Millisecond)
	for len(got) > 0 {
		<-got
	}
	later := task.UpdatedAt.Add(time.Second).Format(time.RFC3339Nano)
	forged := []struct{ name, msg string }{
		{"cancel of a working task", `{"id":"` + task.ID + `","principal":"alice","status":"cancelled","updatedAt":"` + later + `"}`},
		{"other principal", `{"id":"` + task.ID + `","principal":"mallory","status":"working","updatedAt":"` + later + `"}`},
		{"no such task", `{"id":"AAAAAAAAAAAAAAAAAAAAAA","principal":"alice","status":"cancelled"}`},
		{"id not of NewID's shape", `{"id":"../x","principal":"alice","status":"cancelled"}`},
		{"bad status", `{"id":"` + task.ID + `","principal":"alice","status":"bogus"}`},
		{"unknown field", `{"id":"` + task.ID + `","principal":"alice","status":"working","x":1}`},
		{"trailing data", `{"id":"` + task.ID + `","principal":"alice","status":"working"} {}`},
		{"not json", `cancel`},
		{"oversized", `{"id":"` + task.ID + `","principal":"alice","status":"working","updatedAt":"` + later + `"` + strings.Repeat(" ", 64<<10) + `}`},
	}
	for _, f := range forged {
		if _, err := r.Do("PUBLISH", "wasmcp:bus:tasks", "ffffffffffffffff"+f.msg); err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
	}
	if _, err := r.Do("PUBLISH", "wasmcp:bus:tasks", "ffffffffffffffff"+`{"id":"`+task.ID+`","principal":"alice","status":"working","updatedAt":"`+task.UpdatedAt.Format(time.RFC3339Nano)+`"}`); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c != genuine {
			t.Fatalf("a forged change reached a subscriber: %+v", c)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the genuine change after the forged ones never arrived")
	}
	if g, err := cb.Tasks(tasks.Limits{}).Get(ctx, "alice", task.ID); err != nil || g.Status != tasks.Working {
		t.Fatalf("the task after the forged cancel: %+v, %v", g, err)
	}
}
