package tasks_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/tasks"
)

// TestLapse: a live task whose lease passed is shown failed, with the
// error that says why; a task without a lease, with a lease ahead, or
// already ended is left as it is.
func TestLapse(t *testing.T) {
	now := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		status tasks.Status
		lease  time.Time
		lapsed bool
	}{
		{"working, lease passed", tasks.Working, now.Add(-time.Millisecond), true},
		{"input_required, lease passed", tasks.InputRequired, now.Add(-time.Hour), true},
		{"working, lease ends now", tasks.Working, now, true},
		{"working, lease ahead", tasks.Working, now.Add(time.Second), false},
		{"working, no lease", tasks.Working, time.Time{}, false},
		{"completed, lease passed", tasks.Completed, now.Add(-time.Hour), false},
		{"cancelled, lease passed", tasks.Cancelled, now.Add(-time.Hour), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := &tasks.Task{Status: tc.status, LeaseUntil: tc.lease, InputRequests: json.RawMessage(`{"a":{}}`), State: json.RawMessage(`"s"`)}
			if got := x.Lapse(now); got != tc.lapsed {
				t.Fatalf("Lapse = %v, want %v", got, tc.lapsed)
			}
			if !tc.lapsed {
				if x.Status != tc.status {
					t.Errorf("status changed to %q", x.Status)
				}
				return
			}
			var e struct {
				Code    int
				Message string
			}
			if x.Status != tasks.Failed || json.Unmarshal(x.Error, &e) != nil || e.Code != -32603 || !strings.Contains(e.Message, "lease passed") ||
				!strings.Contains(x.StatusMessage, "lease passed") || x.InputRequests != nil || x.State != nil {
				t.Errorf("lapsed task: %+v", x)
			}
		})
	}
}
