package mcp_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// Tests of hostile stdio clients: each fails if the protection it names is
// removed (http_hostile_test.go holds those of HTTP clients).

// TestStdioCallQueue: with the run slot held, one call waits in the queue
// and the next is refused at once; the waiting call gives up after
// CallWaitTimeout.
func TestStdioCallQueue(t *testing.T) {
	c, _ := slowCall(t, &mcp.Options{MaxConcurrentCalls: 1, MaxWaitingCalls: 1, CallWaitTimeout: 300 * time.Millisecond}, "slow")
	c.send(request("queued", "tools/call", map[string]any{"name": "echo"}))
	// The queue holds one: the next call is refused at once.
	m, _ := c.rpc("refused", "tools/call", map[string]any{"name": "echo"})
	wantError(t, m, jsonrpc.CodeRequestTimeout)
	if !strings.Contains(m.Error.Message, "queue is full") {
		t.Errorf("refused: %s", m.raw)
	}
	// The queued call gives up after CallWaitTimeout.
	m, _ = c.await("queued")
	wantError(t, m, jsonrpc.CodeRequestTimeout)
	if !strings.Contains(m.Error.Message, "in time") {
		t.Errorf("queued: %s", m.raw)
	}
	c.send(notification("notifications/cancelled", map[string]any{"requestId": "slow"}))
}

// TestStdioBusy: with the run slot held and no queue, a call is refused
// busy at once, other requests are answered, and the slot serves calls
// again once the held call is cancelled.
func TestStdioBusy(t *testing.T) {
	c, _ := slowCall(t, &mcp.Options{MaxConcurrentCalls: 1, MaxWaitingCalls: -1}, 2)
	m, _ := c.rpc(3, "tools/call", map[string]any{"name": "echo"})
	wantError(t, m, jsonrpc.CodeRequestTimeout)
	if !strings.Contains(string(m.Error.Data), `"busy":true`) {
		t.Errorf("busy error data = %s", m.Error.Data)
	}
	m, _ = c.rpc(4, "tools/list", nil)
	wantResult(t, m)
	c.send(notification("notifications/cancelled", map[string]any{"requestId": 2}))
	// The slot is free again.
	deadline := time.Now().Add(wait)
	for id := 5; ; id++ {
		m, _ = c.rpc(id, "tools/call", map[string]any{"name": "echo"})
		if m.Error == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot never freed: %s", m.raw)
		}
	}
}

// TestCancelStorm: a storm of cancellations (of unknown ids, of the
// request in flight again and again, of ids that are not ids) stops the
// request it names, answers nothing for it, and leaves no goroutines
// behind (TestHTTPCancelStorm is the same storm over HTTP).
func TestCancelStorm(t *testing.T) {
	base := countGoroutines()
	c, stopped := slowCall(t, nil, "slow")
	var b strings.Builder
	for i := range 20000 {
		var id any = i
		switch i % 4 {
		case 1:
			id = fmt.Sprintf("unknown-%d", i)
		case 2:
			id = "slow" // the same in-flight request, again and again
		case 3:
			id = map[string]any{"bad": i} // not an id at all
		}
		b.WriteString(notification("notifications/cancelled", map[string]any{"requestId": id, "reason": "storm"}))
		b.WriteByte('\n')
	}
	c.send(strings.TrimSuffix(b.String(), "\n"))
	select {
	case <-stopped:
	case <-time.After(wait):
		t.Fatal("the cancelled request kept running")
	}
	// The server answers, and the cancelled request got no response.
	for _, m := range c.pingBarrier("after") {
		if m.isResponse() && string(m.ID) == `"slow"` {
			t.Fatalf("cancelled request answered: %s", m.raw)
		}
	}
	m, _ := c.rpc("echo", "tools/call", map[string]any{"name": "echo"})
	wantResult(t, m)
	if n := runtime.NumGoroutine(); n > base+20 {
		t.Errorf("%d goroutines after the storm (base %d)", n, base)
	}
}
