package tasks_test

import (
	"testing"

	"github.com/wasmcp/wasmcp/internal/tasks"
	"github.com/wasmcp/wasmcp/internal/tasks/taskstest"
)

// TestMemory runs the Store contract, its expiry on a fake clock (the
// store reads time.Now).
func TestMemory(t *testing.T) {
	taskstest.RunStoreTestsFakeClock(t, func(t *testing.T, lim tasks.Limits) tasks.Store { return tasks.NewMemory(lim) })
}

func TestLocal(t *testing.T) {
	taskstest.RunNotifierTests(t, func(t *testing.T) tasks.Notifier { return tasks.NewLocal() })
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		s               tasks.Status
		valid, terminal bool
	}{
		{tasks.Working, true, false},
		{tasks.InputRequired, true, false},
		{tasks.Completed, true, true},
		{tasks.Failed, true, true},
		{tasks.Cancelled, true, true},
		{"", false, false},
		{"paused", false, false},
	} {
		if tc.s.Valid() != tc.valid || tc.s.Terminal() != tc.terminal {
			t.Errorf("%q: valid %v terminal %v", tc.s, tc.s.Valid(), tc.s.Terminal())
		}
	}
}

func FuzzDecodeCursor(f *testing.F) {
	f.Add(tasks.EncodeCursor(tasks.Now(), tasks.NewID()))
	f.Add("")
	f.Add("!!")
	f.Fuzz(func(t *testing.T, c string) {
		at, id, err := tasks.DecodeCursor(c)
		if err != nil {
			return
		}
		if tasks.EncodeCursor(at, id) == "" {
			t.Fatal("empty cursor")
		}
	})
}
