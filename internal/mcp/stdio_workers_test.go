package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

// TestStdioConcurrencyBound checks that a stdio connection runs at most
// MaxConcurrency requests at once, not counting requests waiting for the
// client. It runs on a fake clock: once every goroutine of the server
// waits (synctest.Wait), a request beyond the bound has had every chance
// to start.
func TestStdioConcurrencyBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		synctest.Wait()
		if n := len(started); n != 3 {
			t.Fatalf("%d requests started, want 3", n)
		}
		for range 3 {
			<-started
		}
		// Both slots are taken: the next request waits.
		c.send(request(4, "tools/call", map[string]any{"name": "echo"}))
		synctest.Wait()
		select {
		case name := <-started:
			t.Fatalf("%s started beyond MaxConcurrency", name)
		case line := <-c.lines:
			t.Fatalf("answered beyond MaxConcurrency: %s", line)
		default:
		}
	})
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

// TestStdioInlineTakeover checks that a request the reader runs inline
// cannot stop the connection: a slow call sent between two quick ones in
// one write is taken over, both quick calls are answered while it runs
// (the first one's answer, held while the reader had input buffered, is
// written at the takeover, one to two watchdog ticks after the call
// started), and its cancellation still reaches it. On a fake clock: the
// ticks pass only while the slow call blocks.
func TestStdioInlineTakeover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := startStdio(t, nil, nil)
		started, stopped := make(chan string, 4), make(chan string, 4)
		c.prov.Started, c.prov.Stopped = started, stopped
		c.initialize("2025-11-25", nil)
		echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
		c.send(strings.Join([]string{
			request(1, "tools/call", echo),
			request(2, "tools/call", map[string]any{"name": "slow"}),
			request(3, "tools/call", echo),
		}, "\n"))
		sent := time.Now()
		for _, id := range []int{1, 3} {
			res, _ := c.await(id)
			wantResult(t, res)
		}
		if d := time.Since(sent); d < mcp.InlineTick || d > 2*mcp.InlineTick {
			t.Errorf("the slow call was taken over after %v, want one to two ticks of %v", d, mcp.InlineTick)
		}
		select {
		case <-stopped:
			t.Fatal("the slow call ended before it was cancelled")
		default:
		}
		c.send(notification("notifications/cancelled", map[string]any{"requestId": 2}))
		select {
		case <-stopped:
		case <-time.After(wait):
			t.Fatal("the cancellation did not reach the slow call")
		}
		c.pingBarrier("barrier")
		for _, m := range c.queue {
			if string(m.ID) == "2" {
				t.Fatalf("a cancelled call was answered: %s", m.raw)
			}
		}
	})
}

// countingWriter counts the Write calls made on it.
type countingWriter struct {
	mu     sync.Mutex
	writes int
	buf    bytes.Buffer
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

// TestStdioInlineHoldsOutput checks that the answers to requests a client
// sent together are written together: n quick calls read in one piece
// take far fewer than n writes, and every one is answered once. It runs
// on a fake clock (the server's input and output are in memory): a quick
// call takes no time there, so the watchdog never takes one over, as a
// pause of the test process could make it do on the wall clock, and the
// count of writes is the same on every run.
func TestStdioInlineHoldsOutput(t *testing.T) {
	const n = 32
	var in strings.Builder
	in.WriteString(request("init", "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}) + "\n")
	in.WriteString(notification("notifications/initialized", nil) + "\n")
	for i := range n {
		in.WriteString(request(i, "tools/call", map[string]any{"name": "echo"}) + "\n")
	}
	synctest.Test(t, func(t *testing.T) {
		if writes := serveCounted(t, in.String(), n+1); writes > (n+1)/2 {
			t.Fatalf("%d writes for %d answers to requests read together, want at most %d", writes, n+1, (n+1)/2)
		} else {
			t.Logf("%d writes", writes)
		}
	})
}

// serveCounted serves input on a fresh server and returns how many writes
// its output took, checking that it is want distinct results.
func serveCounted(t *testing.T, input string, want int) int {
	t.Helper()
	p := mcptest.New(nil)
	s := mcp.NewServer(p, nil)
	defer s.Close()
	p.SetServer(s)
	var out countingWriter
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := s.ServeStdio(ctx, strings.NewReader(input), &out); err != nil {
		t.Fatalf("ServeStdio: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.buf.String()), "\n") {
		var m msg
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		if m.Error != nil || m.Result == nil {
			t.Fatalf("not a result: %s", line)
		}
		if seen[string(m.ID)] {
			t.Fatalf("answered twice: %s", line)
		}
		seen[string(m.ID)] = true
	}
	if len(seen) != want {
		t.Fatalf("%d answers, want %d", len(seen), want)
	}
	return out.writes
}

// TestStdioInlineStrikes (on a fake clock) checks the strikes of a
// target whose inline run was taken over: its requests go to workers for
// SlowFor, then are tried inline again, and a second takeover soon after
// sends them to workers for twice as long, and so on; a strike long
// after the last counts as a first one. What shows where a slow call
// ran is a quick call sent behind it in one write: answered at once when
// the slow one went to a worker, one to two watchdog ticks later when the
// reader ran it inline and had to be taken over. The targets' averages
// are kept out of it (SetInlineMax).
func TestStdioInlineStrikes(t *testing.T) {
	mcp.SetInlineMax(t, time.Hour)
	synctest.Test(t, func(t *testing.T) {
		c := startStdio(t, nil, nil)
		stopped := make(chan string, 8)
		c.prov.Stopped = stopped
		c.initialize("2025-11-25", nil)
		echo := map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}
		id := 0
		// behindSlow sends a slow call and a quick one in one write and
		// returns how long the quick one took to be answered; then it
		// cancels the slow one.
		behindSlow := func() time.Duration {
			t.Helper()
			id += 2
			start := time.Now()
			c.send(request(id, "tools/call", map[string]any{"name": "slow"}) + "\n" + request(id+1, "tools/call", echo))
			res, _ := c.await(id + 1)
			wantResult(t, res)
			d := time.Since(start)
			c.send(notification("notifications/cancelled", map[string]any{"requestId": id}))
			<-stopped
			return d
		}
		inline := func(d time.Duration) bool { return d >= mcp.InlineTick && d <= 2*mcp.InlineTick }
		var struck time.Time
		steps := []struct {
			after  time.Duration // since the last takeover
			inline bool          // the slow call runs inline (and is taken over)
		}{
			{0, true},                               // a new target: inline
			{0, false},                              // struck: on workers for SlowFor
			{mcp.SlowFor - time.Millisecond, false}, // still
			{mcp.SlowFor, true},                     // tried inline again, and struck again soon: twice as long
			{mcp.SlowFor, false},
			{2*mcp.SlowFor - time.Millisecond, false},
			{2 * mcp.SlowFor, true}, // struck a third time: four times as long
			{4*mcp.SlowFor - time.Millisecond, false},
			{time.Hour, true},   // long after: a first strike again
			{mcp.SlowFor, true}, // so on workers for SlowFor only
		}
		for i, s := range steps {
			if i > 0 {
				time.Sleep(time.Until(struck.Add(s.after)))
			}
			at := time.Now()
			d := behindSlow()
			if inline(d) != s.inline || !s.inline && d != 0 {
				t.Fatalf("step %d, %v after the last takeover: the quick call was answered after %v; want the slow call inline %v", i, s.after, d, s.inline)
			}
			if s.inline {
				struck = at.Add(d) // the takeover, when the quick call's answer went out
			}
		}
	})
}
