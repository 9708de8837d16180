package server

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/plugins"
)

// TestQueuedCallHoldsNoRunSlot: with max_concurrent = 2, one looping call
// runs on the runaway plugin's only instance and a second one waits in
// that plugin's queue. The queued call gives its server-wide run slot
// back, so a call to the good plugin runs at once instead of waiting for
// the loop's deadline.
func TestQueuedCallHoldsNoRunSlot(t *testing.T) {
	testutil.WallClock(t) // the good call must answer before spinning guests reach their real deadlines
	e := longHostileEnv(t, "runs a guest loop to its 2 s deadline")
	srv, err := newHostileServer(t, e, memKV+`[limits]
timeout = "5s"
max_concurrent = 2
max_waiting = 8
plugin_concurrent = 2   # the runaway plugin may hold both slots: the test is about the queued one

`+corpusTOML(t, "good", "[plugins.grants]", "kv = true", "fs = [{ host = "+quote(e.mount)+`, guest = "/data" }]`)+
		corpusTOML(t, "runaway", `prefix = "runaway_"`, `timeout = "2s"`, "instances = 1"))
	if err != nil {
		t.Fatal(err)
	}
	var runaway *plugins.Plugin
	for _, pl := range srv.reg.Plugins() {
		if pl.Name() == "runaway" {
			runaway = pl
		}
	}
	if runaway == nil {
		t.Fatal("no runaway plugin")
	}
	c := startSession(t, srv)

	var loopsDone atomic.Int32
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Go(func() {
			r, err := c.tryCall("tools/call", tool("runaway_spin", nil), 30*time.Second)
			loopsDone.Add(1)
			if err != nil {
				t.Error(err)
				return
			}
			if r.Error != nil {
				codes[i] = r.Error.Code
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := runaway.Stats(); s.Busy != 1 || s.Waiting != 1; s = runaway.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("runaway stats %+v, want 1 busy and 1 queued", s)
		}
		time.Sleep(time.Millisecond)
	}
	start := time.Now()
	r := c.call("tools/call", tool("echo", map[string]any{"text": "beside"}))
	took := time.Since(start)
	done := loopsDone.Load()
	if msg := goodFailure(r, "beside"); msg != "" {
		t.Fatalf("echo beside a queued loop: %s", msg)
	}
	if done != 0 {
		t.Errorf("echo answered after %v, once %d looping calls had ended: it waited for their run slots", took, done)
	}
	t.Logf("echo beside a running and a queued loop: %v", took)
	wg.Wait()
	for i, code := range codes {
		if code != -32001 {
			t.Errorf("looping call %d: code %d, want -32001 (timed out)", i, code)
		}
	}
}
