package cluster_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/hostapi/kvtest"
	"github.com/wasmcp/wasmcp/internal/cluster"
	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

const testKey = "0123456789abcdef0123456789abcdef"

// open connects a replica to r and closes it when the test ends.
func open(t *testing.T, r *redistest.Server) *cluster.Cluster {
	t.Helper()
	c, err := cluster.Open(context.Background(), cluster.Options{URL: r.URL(), Key: testKey,
		OpTimeout: 500 * time.Millisecond, ProbeInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor polls cond for up to 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, what, cond)
}

// TestKVContract runs hostapi's kv contract against the Redis store, each
// subtest in a database of its own server.
func TestKVContract(t *testing.T) {
	testutil.WallClock(t) // Redis expires keys on its own clock: the ttl checks sleep past it
	kvtest.Contract(t, func(t *testing.T, q hostapi.KVQuota) hostapi.KV {
		return open(t, redistest.Start(t)).KV(q)
	})
}

// TestKVAcrossReplicas checks that a value written through one replica
// is read, listed and deleted through another, and that the quota counts
// the namespace, not one replica's writes.
func TestKVAcrossReplicas(t *testing.T) {
	r := redistest.Start(t)
	q := hostapi.KVQuota{MaxKeys: 2}
	a := kvtest.Caller(t, "notes", open(t, r).KV(q))
	b := kvtest.Caller(t, "notes", open(t, r).KV(q))
	other := kvtest.Caller(t, "other", open(t, r).KV(q))
	steps := []struct {
		call           func(string, string) (string, int32)
		method, params string
		want           string
	}{
		{a, "kv/set", `{"key":"k","value":{"n":1}}`, `{}`},
		{b, "kv/get", `{"key":"k"}`, `{"value":{"n":1}}`},
		{other, "kv/get", `{"key":"k"}`, `{"value":null}`},
		{b, "kv/set", `{"key":"k2","value":2}`, `{}`},
		{a, "kv/list", `{}`, `{"keys":["k","k2"]}`},
		{a, "kv/set", `{"key":"k3","value":3}`, ``},
		{b, "kv/delete", `{"key":"k"}`, `{}`},
		{a, "kv/get", `{"key":"k"}`, `{"value":null}`},
		{a, "kv/set", `{"key":"k3","value":3}`, `{}`},
	}
	for i, s := range steps {
		if got, _ := s.call(s.method, s.params); got != s.want {
			t.Fatalf("step %d %s %s = %q, want %q", i, s.method, s.params, got, s.want)
		}
	}
}

// TestRedisDown checks the faults: with Redis stopped, kv calls fail
// within the operation timeout with an error saying the store is
// unavailable and Ready reports it; once Redis is back, both heal
// without reopening anything.
func TestRedisDown(t *testing.T) {
	r := redistest.Start(t)
	c := open(t, r)
	kv := c.KV(hostapi.KVQuota{})
	call := kvtest.Caller(t, "p", kv)
	waitFor(t, "ready", func() bool { return c.Ready() == nil })
	if got, _ := call("kv/set", `{"key":"k","value":1}`); got != `{}` {
		t.Fatalf("set: %s", got)
	}
	r.Stop()
	waitFor(t, "not ready", func() bool { return c.Ready() != nil })
	if err := c.Ready(); !errors.Is(err, cluster.ErrUnavailable) {
		t.Errorf("Ready: %v, want ErrUnavailable", err)
	}
	start := time.Now()
	_, _, err := kv.Get(context.Background(), "p", "k")
	if !errors.Is(err, hostapi.ErrKVUnavailable) {
		t.Errorf("Get with Redis down: %v, want ErrKVUnavailable", err)
	}
	// Bounded: a generous factor over the 500ms operation timeout.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Get with Redis down took %v", d)
	}
	res, errno := call("kv/get", `{"key":"k"}`)
	if errno == 0 || !strings.Contains(res, "kv store unavailable") {
		t.Errorf("kv/get with Redis down = %s, %d; want a failure saying the store is unavailable", res, errno)
	}
	r.Restart()
	waitFor(t, "ready again", func() bool { return c.Ready() == nil })
	waitFor(t, "kv again", func() bool {
		got, _ := call("kv/set", `{"key":"k","value":2}`)
		return got == `{}`
	})
	if got, _ := call("kv/get", `{"key":"k"}`); got != `{"value":2}` {
		t.Errorf("get after restart: %s", got)
	}
}

// TestOpen checks what Open refuses, and that an unreachable Redis is
// not refused but reported by Ready.
func TestOpen(t *testing.T) {
	for _, tc := range []struct{ url, key, want string }{
		{"redis://127.0.0.1:1/0", "", "key is required"},
		{"http://u:hunter2@h/0", testKey, "redis URL"},
	} {
		_, err := cluster.Open(context.Background(), cluster.Options{URL: tc.url, Key: tc.key})
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Open(%q): %v, want an error containing %q without the password", tc.url, err, tc.want)
		}
	}
	c, err := cluster.Open(context.Background(), cluster.Options{URL: "redis://127.0.0.1:1/0", Key: testKey, OpTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Ready(); !errors.Is(err, cluster.ErrUnavailable) {
		t.Errorf("Ready with nothing listening: %v", err)
	}
}

// TestKey checks that derived keys are stable, differ by purpose and by
// cluster key.
func TestKey(t *testing.T) {
	r := redistest.Start(t)
	a, b := open(t, r), open(t, r)
	other, err := cluster.Open(context.Background(), cluster.Options{URL: r.URL(), Key: testKey + "x"})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if string(a.Key("session")) != string(b.Key("session")) {
		t.Error("two replicas derive different keys")
	}
	if string(a.Key("session")) == string(a.Key("requestState")) {
		t.Error("two purposes share a key")
	}
	if string(a.Key("session")) == string(other.Key("session")) {
		t.Error("two cluster keys derive the same key")
	}
	if len(a.Key("x")) != 32 {
		t.Errorf("key of %d bytes", len(a.Key("x")))
	}
}

// TestBus checks that a message published on one replica reaches the
// subscribers of the others, not its own (the engine notifies its own
// clients directly), and none after unsubscribing.
func TestBus(t *testing.T) {
	testutil.WallClock(t) // waits 200 ms of real time for messages a real Redis must not deliver
	r := redistest.Start(t)
	a, b, c := open(t, r).Bus(), open(t, r).Bus(), open(t, r).Bus()
	got := map[string]chan string{"a": make(chan string, 8), "b": make(chan string, 8), "c": make(chan string, 8)}
	a.Subscribe(func(m []byte) { got["a"] <- string(m) })
	b.Subscribe(func(m []byte) { got["b"] <- string(m) })
	stopC := c.Subscribe(func(m []byte) { got["c"] <- string(m) })
	// A subscription is live once a message published after it arrives.
	waitFor(t, "subscriptions", func() bool {
		_ = a.Publish([]byte("ping"))
		select {
		case <-got["b"]:
		case <-time.After(100 * time.Millisecond):
			return false
		}
		select {
		case <-got["c"]:
			return true
		case <-time.After(100 * time.Millisecond):
			return false
		}
	})
	for k := range got {
		for len(got[k]) > 0 {
			<-got[k]
		}
	}
	stopC()
	stopC()
	if err := a.Publish([]byte("Rkitchen://static")); err != nil {
		t.Fatal(err)
	}
	for m := "ping"; m == "ping"; { // a late ping of the loop above
		select {
		case m = <-got["b"]:
			if m != "Rkitchen://static" && m != "ping" {
				t.Fatalf("b got %q", m)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("b got nothing within 10s")
		}
	}
	time.Sleep(200 * time.Millisecond)
	if len(got["a"]) != 0 || len(got["c"]) != 0 {
		t.Errorf("the publisher or an unsubscribed replica got a message: a %d, c %d", len(got["a"]), len(got["c"]))
	}
}
