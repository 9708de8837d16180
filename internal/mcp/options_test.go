package mcp

import (
	"reflect"
	"testing"
)

// TestOptionsNegativeIsDefault: every count, size and timeout of Options
// whose zero means the default takes that default when it is negative
// too, and a positive one is kept.
func TestOptionsNegativeIsDefault(t *testing.T) {
	neg := Options{PageSize: -1, MaxConcurrency: -1, MaxMessageBytes: -1, MaxConcurrentCalls: -1,
		CallWaitTimeout: -1, PrincipalBurst: -1, MaxBatch: -1, MaxBatchBytes: -1, MaxSubscriptions: -1,
		MaxURIBytes: -1, NotifyQueueBytes: -1, MaxTasks: -1, MaxTasksPerPrincipal: -1,
		TaskTimeout: -1, TaskTTL: -1, TaskPollInterval: -1, TaskStartWait: -1}
	got, want := neg.withDefaults(), (&Options{}).withDefaults()
	got.TaskStore, got.TaskNotifier, want.TaskStore, want.TaskNotifier = nil, nil, nil, nil // fresh per call
	if !reflect.DeepEqual(got, want) {
		t.Errorf("negative values: got\n%+v\nwant the defaults\n%+v", got, want)
	}
	if set := (&Options{PageSize: 7, MaxBatchBytes: 1 << 10, TaskStartWait: 3}).withDefaults(); set.PageSize != 7 || set.MaxBatchBytes != 1<<10 || set.TaskStartWait != 3 {
		t.Errorf("positive values not kept: PageSize %d, MaxBatchBytes %d, TaskStartWait %v", set.PageSize, set.MaxBatchBytes, set.TaskStartWait)
	}
}
