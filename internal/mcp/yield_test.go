package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// fakePool is a plugin's instance pool as the limiter sees it: a call
// takes one of its instances, queueing (with its run slot yielded, as the
// runtime's QueueHook does) while none is free.
type fakePool struct {
	inst  chan struct{}
	gate  chan struct{} // when set, a call holds its instance until it is closed
	after chan struct{} // when set, a call then holds its run slot until it is closed
	sleep bool          // a call holds its instance for 0–1 ms
}

// queueProvider serves tools/call on fake pools, by tool name.
type queueProvider struct {
	constProvider
	pools    map[string]*fakePool
	s        *Server
	started  chan string  // a call got its instance and its slot
	inflight atomic.Int64 // CallTool invocations not returned
	running  atomic.Int64 // calls holding an instance past ResumeSlot
	yielded  atomic.Int64 // calls that queued for an instance
	bad      atomic.Value // first invariant violation (string)
}

func (p *queueProvider) Features() Features { return Features{Tools: true} }

func (p *queueProvider) CallTool(ctx context.Context, r *Request) (json.RawMessage, error) {
	p.inflight.Add(1)
	defer p.inflight.Add(-1)
	var params struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(r.Params, &params)
	fp := p.pools[params.Name]
	if fp == nil {
		return nil, invalidParams("unknown tool " + params.Name)
	}
	select {
	case fp.inst <- struct{}{}:
	default:
		p.yielded.Add(1)
		r.YieldSlot()
		select {
		case fp.inst <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if err := r.ResumeSlot(ctx); err != nil {
			<-fp.inst
			return nil, err
		}
	}
	// Every call that runs holds a run slot: no more run than the limit.
	if n := p.running.Add(1); n > p.s.limit.max {
		p.bad.CompareAndSwap(nil, fmt.Sprintf("%d calls ran at once, limit %d", n, p.s.limit.max))
	}
	if n := p.s.limit.admitted.Load(); n > p.s.limit.capacity {
		p.bad.CompareAndSwap(nil, fmt.Sprintf("%d calls admitted, capacity %d", n, p.s.limit.capacity))
	}
	if p.started != nil {
		p.started <- params.Name
	}
	var err error
	switch {
	case fp.gate != nil:
		select {
		case <-fp.gate:
		case <-ctx.Done():
			err = ctx.Err()
		}
	case fp.sleep:
		time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
	}
	p.running.Add(-1)
	<-fp.inst
	if err == nil && fp.after != nil {
		select {
		case <-fp.after:
		case <-ctx.Done():
			err = ctx.Err()
		}
	}
	if err != nil {
		return nil, err
	}
	return constResult, nil
}

// yieldClient drives a stdio Server over pipes.
type yieldClient struct {
	t    *testing.T
	s    *Server
	p    *queueProvider
	in   *io.PipeWriter
	wmu  sync.Mutex
	mu   sync.Mutex
	got  map[int]yieldResponse
	cond *sync.Cond
	stop context.CancelFunc
	done chan struct{}
}

type yieldResponse struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int             `json:"code"`
		Data json.RawMessage `json:"data"`
	} `json:"error"`
}

func startYield(t *testing.T, opts *Options, pools map[string]*fakePool) *yieldClient {
	t.Helper()
	p := &queueProvider{pools: pools, started: make(chan string, 64)}
	s := NewServer(p, opts)
	p.s = s
	cr, cw := io.Pipe()
	sr, sw := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	c := &yieldClient{t: t, s: s, p: p, in: cw, got: map[int]yieldResponse{}, stop: stop, done: make(chan struct{})}
	c.cond = sync.NewCond(&c.mu)
	go func() {
		_ = s.ServeStdio(ctx, cr, sw)
		sw.Close()
		close(c.done)
	}()
	go func() {
		br := bufio.NewReaderSize(sr, 1<<16)
		for {
			line, err := br.ReadString('\n')
			if line != "" {
				var m struct {
					ID *int `json:"id"`
					yieldResponse
				}
				if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
					c.mu.Lock()
					if _, dup := c.got[*m.ID]; dup {
						t.Errorf("two responses to id %d", *m.ID)
					}
					c.got[*m.ID] = m.yieldResponse
					c.cond.Broadcast()
					c.mu.Unlock()
				}
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cw.Close()
		stop()
		<-c.done
		s.Close()
	})
	c.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	c.await(0, 10*time.Second)
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *yieldClient) send(line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Errorf("write: %v", err)
	}
}

func (c *yieldClient) call(id int, tool string) {
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q}}`, id, tool))
}

func (c *yieldClient) cancel(id int) {
	c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id))
}

// await returns the response to id, failing the test after timeout.
func (c *yieldClient) await(id int, timeout time.Duration) yieldResponse {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	wake := time.AfterFunc(timeout, func() { c.mu.Lock(); c.cond.Broadcast(); c.mu.Unlock() })
	defer wake.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for {
		if r, ok := c.got[id]; ok {
			return r
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no response to id %d in %v", id, timeout)
		}
		c.cond.Wait()
	}
}

// yieldSecond calls tool as requests 1 and 2 and waits until 1 runs and
// 2 has yielded its run slot, queued in the plugin.
func (c *yieldClient) yieldSecond(t *testing.T, tool string) {
	t.Helper()
	c.call(1, tool)
	<-c.p.started
	c.call(2, tool)
	until(t, "second call yielded", c.limiterAt(1, 2))
}

// awaitOK waits for the answers to ids, each of which must be a result.
func (c *yieldClient) awaitOK(t *testing.T, what string, ids ...int) {
	t.Helper()
	for _, id := range ids {
		if r := c.await(id, 10*time.Second); r.Error != nil {
			t.Errorf("%s %d: error %d", what, id, r.Error.Code)
		}
	}
}

func (c *yieldClient) answered(id int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.got[id]
	return ok
}

// until polls cond for up to 10 s.
func until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 10*time.Second, what, cond)
}

// limiterAt reports whether the limiter holds running run slots and
// admitted places, and nobody waits for a slot.
func (c *yieldClient) limiterAt(running, admitted int64) func() bool {
	return func() bool {
		l := c.s.limit
		return l.running.Load() == running && l.admitted.Load() == admitted && l.nwait.Load() == 0
	}
}

func (c *yieldClient) checkIdle(t *testing.T) {
	t.Helper()
	until(t, "provider calls returned", func() bool { return c.p.inflight.Load() == 0 })
	until(t, "limiter back to zero", c.limiterAt(0, 0))
	l := c.s.limit
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.waiters) != 0 || l.nfirst != 0 {
		t.Fatalf("limiter queue not empty: %d waiters, nfirst %d", len(l.waiters), l.nfirst)
	}
	if v := c.p.bad.Load(); v != nil {
		t.Fatal(v)
	}
}

// TestYieldSlot: a call waiting for an instance of its plugin gives its
// run slot back and keeps its admitted place; it takes a slot again
// (ahead of new calls) before it runs, and every way out (result, busy,
// cancellation) leaves the limiter exact. Each case runs on a fake clock
// (the server's pipes and pools are in memory), so a wait timeout passes
// exactly and only when every goroutine waits.
func TestYieldSlot(t *testing.T) {
	const busyCode = -32001
	tests := []struct {
		name string
		// max run slots and wait timeout of the server's call limiter
		max  int
		wait time.Duration
		run  func(t *testing.T, c *yieldClient, gate, after chan struct{})
	}{
		{
			name: "a call queued behind a slow plugin holds no run slot",
			max:  2, wait: 300 * time.Millisecond,
			run: func(t *testing.T, c *yieldClient, gate, after chan struct{}) {
				c.yieldSecond(t, "slow") // the second queues in the plugin
				c.call(3, "fast")        // would wait for a slot (and time out busy) if the queued call held one
				if r := c.await(3, 10*time.Second); r.Error != nil {
					t.Fatalf("fast call beside a queued slow one: error %d %s", r.Error.Code, r.Error.Data)
				}
				close(gate)
				c.awaitOK(t, "slow call", 1, 2)
			},
		},
		{
			name: "resuming waits at most the wait timeout, then answers busy",
			max:  2, wait: 100 * time.Millisecond,
			run: func(t *testing.T, c *yieldClient, gate, after chan struct{}) {
				c.yieldSecond(t, "slowafter") // slowafter keeps its slot after its instance
				c.call(3, "hold")             // takes the yielded slot
				<-c.p.started
				start := time.Now()
				close(gate) // call 2 gets the instance; calls 1 and 3 keep both slots
				r := c.await(2, 10*time.Second)
				if r.Error == nil || r.Error.Code != busyCode || !strings.Contains(string(r.Error.Data), `"busy":true`) {
					t.Fatalf("resume past the wait timeout: %+v, want -32001 busy", r)
				}
				if d := time.Since(start); d != 100*time.Millisecond {
					t.Errorf("busy after %v, want the wait timeout (100ms)", d)
				}
				until(t, "busy call gave its place back", c.limiterAt(2, 2))
				close(after)
				c.awaitOK(t, "call", 1, 3)
			},
		},
		{
			name: "cancelled while queued in the plugin",
			max:  2, wait: 10 * time.Second,
			run: func(t *testing.T, c *yieldClient, gate, after chan struct{}) {
				c.yieldSecond(t, "slow")
				c.cancel(2)
				until(t, "cancelled call gave its place back", c.limiterAt(1, 1))
				close(gate)
				c.await(1, 10*time.Second)
				if c.answered(2) {
					t.Error("the cancelled call was answered")
				}
			},
		},
		{
			name: "cancelled while resuming",
			max:  2, wait: 10 * time.Second,
			run: func(t *testing.T, c *yieldClient, gate, after chan struct{}) {
				c.yieldSecond(t, "slowafter")
				c.call(3, "hold")
				<-c.p.started
				close(gate) // call 2 gets the instance and waits for a slot
				until(t, "second call resuming", func() bool { return c.s.limit.nwait.Load() == 1 })
				c.cancel(2)
				until(t, "cancelled call gave its place back", c.limiterAt(2, 2))
				close(after)
				c.await(1, 10*time.Second)
				c.await(3, 10*time.Second)
				if c.answered(2) {
					t.Error("the cancelled call was answered")
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				gate, after := make(chan struct{}), make(chan struct{})
				c := startYield(t, &Options{MaxConcurrentCalls: tt.max, MaxWaitingCalls: 8, CallWaitTimeout: tt.wait}, map[string]*fakePool{
					"slow":      {inst: make(chan struct{}, 1), gate: gate},
					"slowafter": {inst: make(chan struct{}, 1), gate: gate, after: after},
					"fast":      {inst: make(chan struct{}, 4)},
					"hold":      {inst: make(chan struct{}, 1), gate: after},
				})
				tt.run(t, c, gate, after)
				c.checkIdle(t)
			})
		})
	}
}

// TestYieldSlotHammer: many concurrent calls to small fake pools, a
// quarter of them cancelled at random moments, some refused busy; the
// limiter never lets more run than its limit and ends at zero running,
// zero admitted and zero waiting, including after a shutdown with calls
// in flight.
func TestYieldSlotHammer(t *testing.T) {
	c := startYield(t, &Options{MaxConcurrentCalls: 3, MaxWaitingCalls: 100, CallWaitTimeout: 5 * time.Millisecond, MaxConcurrency: 512, DrainTimeout: 10 * time.Millisecond},
		map[string]*fakePool{
			"a": {inst: make(chan struct{}, 2), sleep: true},
			"b": {inst: make(chan struct{}, 1), sleep: true},
			"c": {inst: make(chan struct{}, 4), sleep: true},
		})
	c.p.started = nil
	tools := []string{"a", "b", "c"}
	const n = 3000
	const workers = 64
	var cancelled sync.Map
	var wg sync.WaitGroup
	for g := range workers {
		wg.Go(func() {
			for i := g + 1; i <= n; i += workers {
				c.call(i, tools[rand.IntN(len(tools))])
				if rand.IntN(4) != 0 {
					c.await(i, 30*time.Second)
					continue
				}
				cancelled.Store(i, true)
				if rand.IntN(2) == 0 {
					time.Sleep(time.Duration(rand.IntN(500)) * time.Microsecond)
				}
				c.cancel(i)
			}
		})
	}
	wg.Wait()
	c.checkIdle(t)
	var ok, busy int
	c.mu.Lock()
	for _, r := range c.got {
		switch {
		case r.Error == nil:
			ok++
		case r.Error.Code == -32001:
			busy++
		}
	}
	c.mu.Unlock()
	t.Logf("%d calls: %d results, %d busy, %d queued for an instance", n, ok, busy, c.p.yielded.Load())
	if ok == 0 || c.p.yielded.Load() == 0 {
		t.Fatal("no call succeeded, or none queued for an instance")
	}

	// Shutdown with calls queued, resuming and running.
	for i := n + 1; i <= n+200; i++ {
		c.call(i, tools[rand.IntN(len(tools))])
	}
	c.in.Close()
	c.stop()
	<-c.done
	c.s.Close()
	c.checkIdle(t)
}
