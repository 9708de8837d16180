package mcp_test

import (
	"runtime/metrics"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// TestStdioConcurrencyBound checks that a stdio connection runs at most
// MaxConcurrency requests at once, not counting requests waiting for the
// client.
func TestStdioConcurrencyBound(t *testing.T) {
	c := startStdio(t, nil, &mcp.Options{MaxConcurrency: 2})
	started := make(chan string, 8)
	c.prov.Started = started
	c.initialize("2025-11-25", map[string]any{"elicitation": map[string]any{}})
	c.send(request(1, "tools/call", map[string]any{"name": "slow"}))
	c.send(request(2, "tools/call", map[string]any{"name": "elicit"}))
	if req := c.next(); req.Method != "elicitation/create" {
		t.Fatalf("want elicitation/create, got %s", req.raw)
	}
	// The elicitation waits for the client without its slot: a second
	// slow call runs beside the first.
	c.send(request(3, "tools/call", map[string]any{"name": "slow"}))
	for range 3 {
		select {
		case <-started:
		case <-time.After(wait):
			t.Fatal("a request did not start")
		}
	}
	// Both slots are taken: the next request waits.
	c.send(request(4, "tools/call", map[string]any{"name": "echo"}))
	select {
	case name := <-started:
		t.Fatalf("%s started beyond MaxConcurrency", name)
	case line := <-c.lines:
		t.Fatalf("answered beyond MaxConcurrency: %s", line)
	case <-time.After(200 * time.Millisecond):
	}
}

// TestStdioWorkersReused checks that sequential requests reuse the same
// worker goroutines instead of starting one each.
func TestStdioWorkersReused(t *testing.T) {
	c := startLegacy(t)
	const n = 200
	before := goroutinesCreated()
	for i := range n {
		res, _ := c.rpc(i+1, "tools/call", map[string]any{"name": "echo"})
		wantResult(t, res)
	}
	if created := goroutinesCreated() - before; created > n/4 {
		t.Fatalf("%d goroutines created for %d sequential requests", created, n)
	}
}

func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
