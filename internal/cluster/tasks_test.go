package cluster_test

import (
	"context"
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
		return open(t, redistest.Start(t)).TaskNotifier()
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
	cb.TaskNotifier().Subscribe(func(c tasks.Change) { got <- c })
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
		_ = ca.TaskNotifier().Publish(ctx, tasks.Change{ID: task.ID, Principal: "alice", Status: tasks.Cancelled})
		select {
		case c := <-got:
			return c.ID == task.ID && c.Status == tasks.Cancelled
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
}
