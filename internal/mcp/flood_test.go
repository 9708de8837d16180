package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// Tests of clients that flood the host with work or output: each fails if
// the bound it names is removed.

// batchOf returns a 2025-03-26 batch of n requests made by req(i).
func batchOf(n int, req func(i int) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(req(i))
	}
	b.WriteByte(']')
	return b.String()
}

// batchResponses decodes a batch response.
func batchResponses(t *testing.T, raw string) []*msg {
	t.Helper()
	var arr []*msg
	if err := json.Unmarshal([]byte(raw), &arr); err != nil {
		t.Fatalf("want a batch response, got %.300s", raw)
	}
	return arr
}

// checkBigBatch checks the answer to a batch of 20 "big" calls of 100 KB
// each under a 256 KiB response bound: every request is answered, the
// responses past the bound are -32600 errors, and the whole stays near the
// bound.
func checkBigBatch(t *testing.T, raw string) {
	t.Helper()
	arr := batchResponses(t, raw)
	if len(arr) != 20 {
		t.Fatalf("%d responses, want 20", len(arr))
	}
	refused := 0
	for _, m := range arr {
		if m.Error != nil {
			if m.Error.Code != jsonrpc.CodeInvalidRequest || !strings.Contains(m.Error.Message, "batch") {
				t.Fatalf("error %d %q", m.Error.Code, m.Error.Message)
			}
			refused++
		}
	}
	if refused == 0 || refused == 20 {
		t.Errorf("%d of 20 responses refused, want some", refused)
	}
	if len(raw) > 256<<10+200<<10 {
		t.Errorf("batch response of %d bytes under a 256 KiB bound", len(raw))
	}
}

func bigCall(i int) string {
	return request(i, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": 100000}})
}

func TestStdioBatchBounds(t *testing.T) {
	t.Run("length", func(t *testing.T) {
		c := startStdio(t, nil, nil) // default: 100
		c.initialize("2025-03-26", nil)
		c.send(batchOf(101, func(i int) string { return request(i, "tools/list", nil) }))
		m := c.next()
		if m.Method == "(batch)" {
			t.Fatalf("a batch of 101 was served: %.200s", m.raw)
		}
		wantError(t, m, jsonrpc.CodeInvalidRequest)
		if !strings.Contains(m.Error.Message, "at most 100") {
			t.Errorf("message %q", m.Error.Message)
		}
		// The session goes on, batches within the bound too.
		c.send(batchOf(100, func(i int) string { return request(i, "ping", nil) }))
		if arr := batchResponses(t, c.next().raw); len(arr) != 100 {
			t.Fatalf("%d responses to a batch of 100", len(arr))
		}
		m, _ = c.rpc("after", "ping", nil)
		wantResult(t, m)
	})
	t.Run("response size", func(t *testing.T) {
		c := startStdio(t, nil, &mcp.Options{MaxBatchBytes: 256 << 10})
		c.initialize("2025-03-26", nil)
		c.send(batchOf(20, bigCall))
		checkBigBatch(t, c.next().raw)
		m, _ := c.rpc("after", "ping", nil)
		wantResult(t, m)
	})
}

func TestHTTPBatchBounds(t *testing.T) {
	e := startHTTPWith(t, &mcp.Options{MaxBatchBytes: 256 << 10}, nil, nil)
	h := e.legacySession("2025-03-26", nil)
	resp := e.post(batchOf(101, func(i int) string { return request(i, "tools/list", nil) }), h)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), `"code":-32600`) || !strings.Contains(string(b), "at most 100") {
		t.Fatalf("batch of 101: %d %.300s", resp.StatusCode, b)
	}
	resp = e.post(batchOf(20, bigCall), h)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("batch of big calls: %d %.300s", resp.StatusCode, b)
	}
	checkBigBatch(t, string(b))
	// The session survives.
	resp = e.post(request("after", "ping", nil), h)
	wantResult(t, lastMsg(t, resp))
}

func TestSubscriptionBounds(t *testing.T) {
	c := startStdio(t, nil, nil) // defaults: 100 subscriptions, 8 KiB URIs
	c.initialize("2025-11-25", nil)
	long := "test://long/" + strings.Repeat("x", 8<<10)
	m, _ := c.rpc("long", "resources/subscribe", map[string]any{"uri": long})
	wantError(t, m, jsonrpc.CodeInvalidParams)
	for i := range 100 {
		m, _ := c.rpc(i, "resources/subscribe", map[string]any{"uri": fmt.Sprintf("test://r/%d", i)})
		wantResult(t, m)
	}
	m, _ = c.rpc("again", "resources/subscribe", map[string]any{"uri": "test://r/7"})
	wantResult(t, m)
	m, _ = c.rpc("101st", "resources/subscribe", map[string]any{"uri": "test://r/100"})
	wantError(t, m, jsonrpc.CodeInvalidParams)
	if !strings.Contains(m.Error.Message, "100 subscriptions") {
		t.Errorf("message %q", m.Error.Message)
	}
	m, _ = c.rpc("unsub", "resources/unsubscribe", map[string]any{"uri": "test://r/0"})
	wantResult(t, m)
	m, _ = c.rpc("room", "resources/subscribe", map[string]any{"uri": "test://r/100"})
	wantResult(t, m)

	// The same bounds on a 2026-07-28 listen stream.
	uris := make([]string, 101)
	for i := range uris {
		uris[i] = fmt.Sprintf("test://r/%d", i)
	}
	m, _ = c.rpc("listen", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourceSubscriptions": uris}}, nil))
	wantError(t, m, jsonrpc.CodeInvalidParams)
	m, _ = c.rpc("listen long", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{long}}}, nil))
	wantError(t, m, jsonrpc.CodeInvalidParams)
}

// flood calls the hidden flood tool.
func flood(id any, args map[string]any) string {
	return request(id, "tools/call", map[string]any{"name": "flood", "arguments": args})
}

func TestNotifiedURIBound(t *testing.T) {
	c := startLegacy(t)
	m, _ := c.rpc(1, "resources/subscribe", map[string]any{"uri": "test://big/"})
	wantResult(t, m)
	// A 2 MB URI is dropped; a short one arrives.
	c.send(flood(2, map[string]any{"uri": "test://big/", "size": 2 << 20}))
	_, before := c.await(2)
	before = append(before, c.pingBarrier(3)...)
	if len(before) != 0 {
		t.Fatalf("notification of a 2 MB URI delivered (%d bytes)", len(before[0].raw))
	}
	c.send(flood(4, map[string]any{"uri": "test://big/", "size": 100}))
	_, before = c.await(4)
	before = append(before, c.pingBarrier(5)...)
	if len(before) != 1 || before[0].Method != "notifications/resources/updated" {
		t.Fatalf("short URI: %v", before)
	}
}

// sseUntil reads the events of an SSE body until one whose data contains
// marker, returning them.
func sseUntil(t *testing.T, resp *http.Response, marker string) []sseEvent {
	t.Helper()
	r := newSSEReader(resp.Body)
	var evs []sseEvent
	for {
		ev, ok := r.next()
		if !ok {
			t.Fatalf("stream ended before %q (%d events)", marker, len(evs))
		}
		evs = append(evs, ev)
		if strings.Contains(ev.data, marker) {
			return evs
		}
	}
}

func TestHTTPReplayBytes(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{KeepAlive: -1}) // default: 1 MiB
	h := e.legacySession("2025-11-25", nil)
	wantResult(t, lastMsg(t, e.post(request(1, "resources/subscribe", map[string]any{"uri": "test://r/"}), h)))
	// 300 notifications of 7 KB URIs on the standalone stream, which no
	// client reads.
	wantResult(t, lastMsg(t, e.post(flood(2, map[string]any{"uri": "test://r/", "n": 300, "size": 7000}), h)))
	get := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"], "Last-Event-ID": "0.0"})
	defer get.Body.Close()
	evs := sseUntil(t, get, "test://r/299")
	n := 0
	for _, ev := range evs {
		n += len(ev.data)
	}
	t.Logf("replayed %d events, %d bytes", len(evs), n)
	if n > 1<<20+8<<10 {
		t.Fatalf("replayed %d bytes (%d events), more than the 1 MiB replay buffer", n, len(evs))
	}
}

func TestHTTPListChangedCoalesced(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{KeepAlive: -1})
	h := e.legacySession("2025-11-25", nil)
	// 10000 tools/list_changed while no client reads the session's
	// stream: one waits for it.
	wantResult(t, lastMsg(t, e.post(flood(1, map[string]any{"kind": "tools", "n": 10000}), h)))
	wantResult(t, lastMsg(t, e.post(request(2, "tools/call", map[string]any{"name": "change_prompts"}), h)))
	get := e.do(http.MethodGet, map[string]string{"Mcp-Session-Id": h["Mcp-Session-Id"]})
	defer get.Body.Close()
	tools := 0
	for _, ev := range sseUntil(t, get, "prompts/list_changed") {
		if strings.Contains(ev.data, "tools/list_changed") {
			tools++
		}
	}
	if tools != 1 {
		t.Fatalf("%d tools/list_changed pending, want 1", tools)
	}
	// Once delivered, the next change is notified again.
	wantResult(t, lastMsg(t, e.post(flood(3, map[string]any{"kind": "tools", "n": 3}), h)))
	sseUntil(t, get, "tools/list_changed")
}

// TestStdioNotifyBlockedClient floods notifications at a stdio client that
// stopped reading: the notifier is not blocked (the tool call returns) and
// what is queued stays bounded.
func TestStdioNotifyBlockedClient(t *testing.T) {
	p := mcptest.New(nil)
	s := mcp.NewServer(p, nil)
	p.SetServer(s)
	finished := make(chan string, 1)
	p.Finished = finished
	cw, sr, done := mcptest.ServeStdio(context.Background(), s)
	t.Cleanup(func() {
		cw.Close()
		sr.Close() // the blocked writes fail
		testutil.AwaitReturn(t, done, wait, "ServeStdio")
		s.Close()
	})
	br := bufio.NewReader(sr)
	send := func(line string) {
		if _, err := io.WriteString(cw, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	br.ReadString('\n')
	send(request(2, "resources/subscribe", map[string]any{"uri": "test://b/"}))
	br.ReadString('\n')
	// The client stops reading. 3000 notifications of 7 KB (21 MB).
	send(flood(3, map[string]any{"uri": "test://b/", "n": 3000, "size": 7000}))
	select {
	case <-finished:
	case <-time.After(wait):
		t.Fatal("the notifier is blocked by a client that does not read")
	}
}

// TestSlotShares saturates the run slots with calls of one share key (a
// plugin whose instances spin): they hold at most half of them (the
// default), and a call of another key runs at once. On a fake clock, so
// that a lost wake-up shows at once as a deadlock.
func TestSlotShares(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := startStdio(t, nil, &mcp.Options{MaxConcurrentCalls: 4, MaxWaitingCalls: 16, CallWaitTimeout: time.Minute})
		started := make(chan string, 16)
		c.prov.Started = started
		next := func() string { // the next call to start, failing rather than hanging
			select {
			case name := <-started:
				return name
			case <-time.After(30 * time.Second):
				t.Fatal("no call started")
				return ""
			}
		}
		c.initialize("2025-11-25", nil)
		spin := func(i int) {
			c.send(request(fmt.Sprintf("spin%d", i), "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"share": "spinner"}}))
		}
		// spin0 and spin1 take the share's two slots before the others come:
		// stdio runs requests on several workers, so with all six sent at once
		// spin0 could be a waiting one, and cancelling it would free no slot
		// (the test hung so about once in a hundred runs).
		spin(0)
		spin(1)
		next()
		next()
		for i := 2; i < 6; i++ {
			spin(i)
		}
		// Every slot would be taken without shares; another key runs now.
		c.send(request("other", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"share": "other"}}))
		m, _ := c.await("other")
		wantResult(t, m)
		if name := next(); name != "echo" {
			t.Fatalf("started %q", name)
		}
		// The spinner's waiting calls run as its running ones end.
		c.send(notification("notifications/cancelled", map[string]any{"requestId": "spin0"}))
		if name := next(); name != "slow" {
			t.Fatalf("started %q", name)
		}
		for i := range 6 {
			c.send(notification("notifications/cancelled", map[string]any{"requestId": fmt.Sprintf("spin%d", i)}))
		}
	})
}

// principalPost posts a 2026-07-28 tools/call as user under ctx and
// returns the status, Retry-After and body.
func principalPost(ctx context.Context, url, user, tool string, args map[string]any) (int, string, string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(modernBody(1, "tools/call", map[string]any{"name": tool, "arguments": args}, nil)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-User", user)
	for k, v := range modernHeaders("tools/call", tool) {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b), nil
}

// principalServe is principalPost served by h in the calling goroutine
// (bubblePost), for tests on a fake clock.
func principalServe(ctx context.Context, h http.Handler, user, tool string) (int, string, string) {
	hdr := modernHeaders("tools/call", tool)
	hdr["X-User"] = user
	w := bubblePost(ctx, h, modernBody(1, "tools/call", map[string]any{"name": tool}, nil), hdr)
	return w.Code, w.Header().Get("Retry-After"), w.Body.String()
}

// principalHandler starts a server with opts and returns its HTTP
// handler, which takes the principal from the X-User header.
func principalHandler(t *testing.T, opts *mcp.Options) http.Handler {
	t.Helper()
	return bubbleHandler(t, opts, &mcp.HTTPOptions{Middleware: identityMiddleware})
}

// TestPrincipalShare: one principal fills the server's admission budget
// (running and waiting calls); it is refused (429) at its share, and
// another principal is still admitted. On a fake clock: bob is known to
// be waiting once every goroutine is.
func TestPrincipalShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// 16 places; by default one principal holds at most 14.
		h := principalHandler(t, &mcp.Options{MaxConcurrentCalls: 8, MaxWaitingCalls: 8, CallWaitTimeout: time.Minute})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		type answer struct {
			status      int
			retry, body string
		}
		answers := make(chan answer, 16)
		for range 16 {
			go func() {
				st, ra, body := principalServe(ctx, h, "alice", "slow")
				answers <- answer{st, ra, body}
			}()
		}
		synctest.Wait()
		if n := len(answers); n != 2 {
			t.Fatalf("%d of alice's 16 calls answered while the others wait, want 2", n)
		}
		for range 2 {
			a := <-answers
			if a.status != http.StatusTooManyRequests || a.retry == "" || !strings.Contains(a.body, `"code":-32001`) {
				t.Fatalf("alice's calls past her share: %d Retry-After=%q %s", a.status, a.retry, a.body)
			}
		}
		// Bob is admitted: he waits for a run slot and runs once alice's
		// calls end.
		bob := make(chan answer, 1)
		go func() {
			st, ra, body := principalServe(context.Background(), h, "bob", "echo")
			bob <- answer{st, ra, body}
		}()
		synctest.Wait()
		select {
		case a := <-bob:
			t.Fatalf("bob answered while alice holds every slot: %d %s", a.status, a.body)
		default:
		}
		cancel()
		if a := <-bob; a.status != http.StatusOK || !strings.Contains(a.body, "hello") {
			t.Fatalf("bob: %d %s", a.status, a.body)
		}
		for range 14 {
			<-answers
		}
	})
}

// TestPrincipalRate (on a fake clock): a principal's calls past its burst
// are refused with the wait its token bucket names, other principals are
// not, and the bucket refills at the rate.
func TestPrincipalRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate = 0.01 // a call every 100 s
		h := principalHandler(t, &mcp.Options{PrincipalRate: rate, PrincipalBurst: 3})
		call := func(user string) (int, string, string) {
			return principalServe(context.Background(), h, user, "echo")
		}
		for i := range 3 {
			if st, _, body := call("carol"); st != http.StatusOK {
				t.Fatalf("call %d within the burst: %d %s", i, st, body)
			}
		}
		st, ra, body := call("carol")
		if st != http.StatusTooManyRequests || ra != "100" || !strings.Contains(body, "Rate limit") {
			t.Fatalf("call past the burst: %d Retry-After=%q %s; want 429, 100", st, ra, body)
		}
		if st, _, body := call("dave"); st != http.StatusOK {
			t.Fatalf("another principal: %d %s", st, body)
		}
		time.Sleep(99500 * time.Millisecond)
		if st, ra, _ := call("carol"); st != http.StatusTooManyRequests || ra != "1" {
			t.Fatalf("0.5 s before a token is back: %d Retry-After=%q; want 429, 1", st, ra)
		}
		time.Sleep(500 * time.Millisecond)
		if st, _, body := call("carol"); st != http.StatusOK {
			t.Fatalf("once a token is back: %d %s", st, body)
		}
		if st, _, _ := call("carol"); st != http.StatusTooManyRequests {
			t.Fatalf("the refill gave more than one call: %d", st)
		}
	})
}
