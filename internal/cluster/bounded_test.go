package cluster_test

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
	"github.com/wasmcp/wasmcp/internal/tasks"
)

// allocated returns how many bytes f allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestTaskRecordsBounded checks that task records read back from Redis
// are not read whole when some other writer of Redis made them longer
// than any task may be: a 32 MiB record planted over a task's is ignored
// by Get and List without being brought into memory, List goes on past
// records that fill its reads, and a key of another type is no task.
func TestTaskRecordsBounded(t *testing.T) {
	ctx := context.Background()
	r := redistest.Start(t)
	s := open(t, r).Tasks(tasks.Limits{MaxBytesPerPrincipal: 256 << 10}) // records of 576 KiB at most
	var ids []string
	for range 13 {
		task, err := s.Create(ctx, &tasks.Task{Principal: "alice", Status: tasks.Working, TTL: time.Hour, Method: "tools/call"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	key := func(id string) string { return "{wasmcp:tasks}:t:" + id }
	// Ten records of 400 KiB that do not parse: each is read, and
	// together they take List past one read's bound.
	junk := strings.Repeat("x", 400<<10)
	for _, id := range ids[:10] {
		if _, err := r.Do("SET", key(id), junk, "KEEPTTL"); err != nil {
			t.Fatal(err)
		}
	}
	huge := ids[10]
	if _, err := r.Do("SET", key(huge), strings.Repeat("y", 32<<20), "KEEPTTL"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Do("DEL", key(ids[11])); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Do("HSET", key(ids[11]), "status", "working"); err != nil {
		t.Fatal(err)
	}
	good := ids[12]

	var err error
	if n := allocated(func() { _, err = s.Get(ctx, "alice", huge) }); n > 8<<20 {
		t.Errorf("Get of a 32 MiB record allocated %d bytes", n)
	}
	if !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Get of a 32 MiB record: %v, want ErrNotFound", err)
	}
	if _, err := s.Get(ctx, "alice", ids[11]); !errors.Is(err, tasks.ErrNotFound) {
		t.Errorf("Get of a hash: %v, want ErrNotFound", err)
	}
	if g, err := s.Get(ctx, "alice", good); err != nil || g.ID != good {
		t.Errorf("Get of an intact record: %+v, %v", g, err)
	}
	var page []*tasks.Task
	if n := allocated(func() { page, _, err = s.List(ctx, "alice", "", 100) }); n > 24<<20 {
		t.Errorf("List allocated %d bytes", n)
	}
	if err != nil || len(page) != 1 || page[0].ID != good {
		got := make([]string, len(page))
		for i, p := range page {
			got[i] = p.ID
		}
		t.Errorf("List: %v, %v; want only %s", got, err, good)
	}
	// A task of the most bytes a principal may keep is stored and read.
	big, err := s.Create(ctx, &tasks.Task{Principal: "bob", Status: tasks.Working, TTL: time.Hour, Method: "tools/call",
		Params: []byte(`{"s":"` + strings.Repeat("<", 200<<10) + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := s.Get(ctx, "bob", big.ID); err != nil {
		t.Errorf("Get of a large task: %v", err)
	} else if string(g.Params) != string(big.Params) {
		t.Errorf("Get of a large task: params of %d bytes, want the %d stored", len(g.Params), len(big.Params))
	}
}

// TestSessionRecordsBounded checks that Load reads at most max+1 bytes
// of a session record, extends its expiry, and takes a key of another
// type for no session.
func TestSessionRecordsBounded(t *testing.T) {
	r := redistest.Start(t)
	s := open(t, r).Sessions()
	if err := s.Save("a", []byte(`{"v":1}`), time.Minute); err != nil {
		t.Fatal(err)
	}
	if b, found, err := s.Load("a", time.Hour, 100); err != nil || !found || string(b) != `{"v":1}` {
		t.Fatalf("Load: %q, %v, %v", b, found, err)
	}
	ttl, err := r.Do("PTTL", "wasmcp:session:a")
	if n, _ := strconv.Atoi(ttl); err != nil || n < int(time.Minute/time.Millisecond) {
		t.Errorf("expiry after Load: %q ms, %v; want about an hour", ttl, err)
	}
	if _, err := r.Do("SET", "wasmcp:session:b", strings.Repeat("z", 32<<20)); err != nil {
		t.Fatal(err)
	}
	var b []byte
	var found bool
	if n := allocated(func() { b, found, err = s.Load("b", time.Hour, 1000) }); n > 4<<20 {
		t.Errorf("Load of a 32 MiB record allocated %d bytes", n)
	}
	if err != nil || !found || len(b) != 1001 {
		t.Errorf("Load of a 32 MiB record: %d bytes, %v, %v; want 1001", len(b), found, err)
	}
	if _, err := r.Do("HSET", "wasmcp:session:c", "v", "1"); err != nil {
		t.Fatal(err)
	}
	if _, found, err := s.Load("c", time.Hour, 1000); err != nil || found {
		t.Errorf("Load of a hash: found %v, %v; want not found", found, err)
	}
	if _, found, err := s.Load("none", time.Hour, 1000); err != nil || found {
		t.Errorf("Load of nothing: found %v, %v", found, err)
	}
}
