package mcp

import (
	"testing"
	"time"
)

// TestOptionsPositiveDefaults: a count, size or timeout of Options that is
// zero or negative takes its default; a positive one is kept.
func TestOptionsPositiveDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Options
		want Options // the fields checked below
	}{
		{"zero", Options{},
			Options{PageSize: 100, MaxBatchBytes: 16 << 20, CallWaitTimeout: 10 * time.Second, TaskStartWait: 500 * time.Millisecond}},
		{"negative", Options{PageSize: -1, MaxBatchBytes: -1, CallWaitTimeout: -time.Second, TaskStartWait: -1},
			Options{PageSize: 100, MaxBatchBytes: 16 << 20, CallWaitTimeout: 10 * time.Second, TaskStartWait: 500 * time.Millisecond}},
		{"set", Options{PageSize: 7, MaxBatchBytes: 1 << 10, CallWaitTimeout: time.Second, TaskStartWait: time.Millisecond},
			Options{PageSize: 7, MaxBatchBytes: 1 << 10, CallWaitTimeout: time.Second, TaskStartWait: time.Millisecond}},
	} {
		got := tc.in.withDefaults()
		if got.PageSize != tc.want.PageSize || got.MaxBatchBytes != tc.want.MaxBatchBytes ||
			got.CallWaitTimeout != tc.want.CallWaitTimeout || got.TaskStartWait != tc.want.TaskStartWait {
			t.Errorf("%s: PageSize %d, MaxBatchBytes %d, CallWaitTimeout %v, TaskStartWait %v; want %d, %d, %v, %v", tc.name,
				got.PageSize, got.MaxBatchBytes, got.CallWaitTimeout, got.TaskStartWait,
				tc.want.PageSize, tc.want.MaxBatchBytes, tc.want.CallWaitTimeout, tc.want.TaskStartWait)
		}
	}
}
