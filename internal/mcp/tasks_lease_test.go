package mcp_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// leaseStore is a memory store that reads tasks as a shared store does
// (a live task whose lease passed is shown failed: tasks.Task.Lapse), and
// that can be cut off from its writer (frozen: every Update fails), as a
// shared store is from a server that died.
type leaseStore struct {
	*tasks.Memory
	frozen atomic.Bool
}

func (s *leaseStore) Get(ctx context.Context, principal, id string) (*tasks.Task, error) {
	t, err := s.Memory.Get(ctx, principal, id)
	if err == nil {
		t.Lapse(tasks.Now())
	}
	return t, err
}

func (s *leaseStore) Update(ctx context.Context, principal, id string, fn func(*tasks.Task) error) (*tasks.Task, error) {
	if s.frozen.Load() {
		return nil, errors.New("leaseStore: frozen")
	}
	return s.Memory.Update(ctx, principal, id, fn)
}

// TestTaskLeaseRenewal (on a fake clock): a task's runner renews its
// lease every third of Options.TaskLease while the task lives, so that a
// reader of the store sees it alive for as long as it runs; once the
// runner can no longer write (its process died), the task is seen failed
// exactly when the last lease it wrote passes, not sooner.
func TestTaskLeaseRenewal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lease = 3 * time.Second
		store := &leaseStore{Memory: tasks.NewMemory(tasks.Limits{})}
		c := startStdio(t, &mcptest.Options{Tasks: true}, &mcp.Options{TaskStore: store, TaskLease: lease})
		t.Cleanup(func() { c.srv.Close() })
		var id string
		status := func() string {
			t.Helper()
			res, _ := c.rpc("get", "tasks/get", withMeta(map[string]any{"taskId": id}, withTasks))
			wantResult(t, res)
			return field(t, res.Result, "status").(string)
		}
		id = createTask(t, c) // task_ask: waits for input, its call alive
		created := time.Now()

		steps := []struct {
			at     time.Duration // after the task's creation
			freeze bool          // cut the runner off the store first
			want   string
		}{
			{lease / 2, false, "input_required"},
			{10*lease + lease/6, false, "input_required"}, // renewed ten times; the last at 10 leases
			{10*lease + lease/6, true, "input_required"},  // cut off now
			{11*lease - lease/6, false, "input_required"}, // the last lease written has not passed
			{11*lease + lease/6, false, "failed"},         // it has
		}
		for _, st := range steps {
			time.Sleep(time.Until(created.Add(st.at)))
			synctest.Wait()
			if st.freeze {
				store.frozen.Store(true)
			}
			if got := status(); got != st.want {
				t.Fatalf("at %v (lease %v, frozen %v): status %q, want %q", st.at, lease, store.frozen.Load(), got, st.want)
			}
		}
	})
}
