package mcp_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// Tests of hostile HTTP clients: each fails if the protection it names is
// removed.

// runEnv is a server behind RunHTTP (the real listener, http.Server and
// connection limit) on loopback.
type runEnv struct {
	srv    *mcp.Server
	prov   *mcptest.Provider
	addr   string
	url    string
	cancel context.CancelFunc
	done   chan error
}

func startRun(t *testing.T, sopts *mcp.Options, hopts *mcp.HTTPOptions) *runEnv {
	t.Helper()
	p := mcptest.New(nil)
	s := mcp.NewServer(p, sopts)
	p.SetServer(s)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e := &runEnv{srv: s, prov: p, addr: ln.Addr().String(), url: "http://" + ln.Addr().String() + "/mcp", cancel: cancel, done: make(chan error, 1)}
	go func() { e.done <- s.RunHTTP(ctx, ln, hopts) }()
	t.Cleanup(func() {
		cancel()
		testutil.AwaitReturn(t, e.done, wait, "RunHTTP")
		s.Close()
	})
	return e
}

// waitReturned waits for RunHTTP to return, and fails the test unless it
// returns nil; it leaves the result for the cleanup.
func (e *runEnv) waitReturned(t *testing.T) {
	t.Helper()
	select {
	case err := <-e.done:
		e.done <- err
		if err != nil {
			t.Fatalf("RunHTTP = %v", err)
		}
	case <-time.After(wait):
		t.Fatal("RunHTTP did not return")
	}
}

// discover posts a server/discover and reports the status.
func discover(t *testing.T, url string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(modernBody(1, "server/discover", nil, nil)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range modernHeaders("server/discover", "") {
		req.Header.Set(k, v)
	}
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: wait}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// readUntilClosed reads c until EOF or an error and reports how long that
// took; it fails the test if the server kept the connection open for max.
func readUntilClosed(t *testing.T, c net.Conn, max time.Duration) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	c.SetReadDeadline(start.Add(max))
	b, err := io.ReadAll(c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v (%d bytes read)", max, len(b))
	}
	return string(b), time.Since(start)
}

func TestHTTPSlowHeaders(t *testing.T) {
	e := startRun(t, nil, &mcp.HTTPOptions{ReadHeaderTimeout: 300 * time.Millisecond})
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Slowloris: one header byte every 50 ms, never finishing.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	_, took := readUntilClosed(t, c, 5*time.Second)
	if took > 3*time.Second {
		t.Fatalf("slow headers cut after %v", took)
	}
	if st := discover(t, e.url); st != 200 {
		t.Fatalf("server after slowloris: %d", st)
	}
}

func TestHTTPSlowBody(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{ReadTimeout: 300 * time.Millisecond})
	sse := openSSEClient(t, e)
	// Streamable HTTP and the HTTP+SSE messages endpoint read bodies the
	// same way.
	for name, path := range map[string]string{"streamable": "/mcp", "messages": strings.TrimPrefix(sse.endpoint, e.ts.URL)} {
		t.Run(name, func(t *testing.T) { slowBody(t, e, path) })
	}
}

// slowBody posts a body to path one byte every 50 ms: the server must
// cut it off (400 or a closed connection) well before it ends.
func slowBody(t *testing.T, e *httpEnv, path string) {
	c, err := net.Dial("tcp", e.ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	body := modernBody(1, "server/discover", nil, nil)
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, len(body)+1000)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				if _, err := c.Write([]byte{body[i%len(body)]}); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	c.SetReadDeadline(start.Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a slow body held the request for 5s")
		}
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("status %d, want 400", resp.StatusCode)
		}
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("slow body cut after %v", took)
	}
}

func TestHTTPOversizedHeaders(t *testing.T) {
	e := startRun(t, nil, &mcp.HTTPOptions{MaxHeaderBytes: 8 << 10})
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: %s\r\n\r\n", strings.Repeat("a", 100<<10))
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no response to oversized headers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d, want 431", resp.StatusCode)
	}
}

func TestHTTPIdleConnections(t *testing.T) {
	const max = 20
	base := countGoroutines()
	e := startRun(t, &mcp.Options{MaxConcurrentCalls: 2 * max}, &mcp.HTTPOptions{MaxConns: max, ReadHeaderTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	started := make(chan string, max)
	e.prov.Started = started

	// A connection that sends nothing is closed after ReadHeaderTimeout;
	// one that made a request and went idle, after IdleTimeout.
	ic, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, took := readUntilClosed(t, ic, 5*time.Second); took > 3*time.Second {
		t.Errorf("silent connection closed after %v", took)
	}
	ic.Close()
	kc, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	body := modernBody(1, "server/discover", nil, nil)
	fmt.Fprintf(kc, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMcp-Method: server/discover\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	resp, err := http.ReadResponse(bufio.NewReader(kc), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive request: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if _, took := readUntilClosed(t, kc, 5*time.Second); took > 3*time.Second {
		t.Errorf("idle keep-alive connection closed after %v", took)
	}
	kc.Close()

	// max connections busy with calls that never end hold every place.
	call := modernBody(2, "tools/call", map[string]any{"name": "slow"}, nil)
	var held []net.Conn
	for range max {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMcp-Method: tools/call\r\nMcp-Name: slow\r\nMCP-Protocol-Version: 2026-07-28\r\nContent-Length: %d\r\n\r\n%s", len(call), call)
	}
	for range max {
		select {
		case <-started:
		case <-time.After(wait):
			t.Fatal("the held calls did not start")
		}
	}
	// Thousands of connections more: refused and closed, goroutines stay
	// bounded.
	conns := make([]net.Conn, 0, 2000)
	for range 2000 {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			break // the backlog is full: also bounded
		}
		conns = append(conns, c)
	}
	time.Sleep(1500 * time.Millisecond) // refusals finish (1 s deadline)
	if n := runtime.NumGoroutine(); n > base+3*max+40 {
		t.Errorf("%d goroutines with %d extra connections (base %d, limit %d)", n, len(conns), base, max)
	}
	for _, c := range conns {
		c.Close()
	}
	// A request beyond the limit gets 503 with Retry-After.
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err = http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("over the limit: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	c.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(b), `"code":-32001`) {
		t.Fatalf("over the limit: %d Retry-After=%q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	// Places come back when connections close.
	for _, c := range held {
		c.Close()
	}
	deadline := time.Now().Add(wait)
	for discover(t, e.url) != 200 {
		if time.Now().After(deadline) {
			t.Fatal("the server never served again")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestHTTPFlood(t *testing.T) {
	const running = 4
	e := startHTTPWith(t, &mcp.Options{MaxConcurrentCalls: running, MaxWaitingCalls: -1}, nil, nil)
	started := make(chan string, 100)
	e.prov.Started = started
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
	post := func(id int, name string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(modernBody(id, "tools/call", map[string]any{"name": name}, nil)))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range modernHeaders("tools/call", name) {
			req.Header.Set(k, v)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
	}
	// Fill the running slots with calls that never end.
	var held sync.WaitGroup
	for i := range running {
		held.Add(1)
		go func() { defer held.Done(); post(i, "slow") }()
	}
	for range running {
		<-started
	}

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// The flood: 5000 more calls, 100 at a time. Every one is refused at
	// once with 503, Retry-After and -32001.
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	bad := ""
	sem := make(chan struct{}, 100)
	for i := range 5000 {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			st, ra, body := post(1000+i, "echo")
			mu.Lock()
			statuses[st]++
			if st != http.StatusServiceUnavailable || ra != "1" || !strings.Contains(body, `"code":-32001`) || !strings.Contains(body, `"busy":true`) {
				bad = fmt.Sprintf("%d Retry-After=%q %s", st, ra, body)
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if bad != "" {
		t.Fatalf("flood answers %v; e.g. %s", statuses, bad)
	}
	growth := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use: %d KiB before, %d KiB after 5000 refused calls (%+d KiB); goroutines %d",
		before.HeapInuse>>10, after.HeapInuse>>10, growth>>10, runtime.NumGoroutine())
	if growth > 8<<20 {
		t.Errorf("heap grew by %d KiB under the flood", growth>>10)
	}
	// Lists are not limited; the server still answers them.
	resp := e.post(modernBody(2, "tools/list", nil, nil), modernHeaders("tools/list", ""))
	wantResult(t, lastMsg(t, resp))
	// Legacy sessions are refused the same way.
	h := e.legacySession("2025-11-25", nil)
	lresp := e.post(request(3, "tools/call", map[string]any{"name": "echo"}), h)
	if lresp.StatusCode != http.StatusServiceUnavailable || lresp.Header.Get("Retry-After") == "" {
		t.Fatalf("legacy call when full: %d", lresp.StatusCode)
	}
	wantError(t, lastMsg(t, lresp), jsonrpc.CodeRequestTimeout)
	// Once the held calls end, calls run again.
	e.srv.Close()
	held.Wait()
	client.CloseIdleConnections()
}

// TestHTTPCancelStorm: thousands of cancellations of requests that do
// not run, on a legacy session over HTTP, are each accepted (202) and the
// session still answers (TestCancelStorm is the same storm on stdio).
func TestHTTPCancelStorm(t *testing.T) {
	e := startHTTP(t, nil, nil)
	h := e.legacySession("2025-11-25", nil)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 250 {
				resp := e.post(notification("notifications/cancelled", map[string]any{"requestId": w*1000 + i}), h)
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("cancel: status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
	wantResult(t, lastMsg(t, e.post(request(9, "ping", nil), h)))
}

// rawPost sends a POST on a fresh connection and returns it after reading
// the response headers.
func rawPost(t *testing.T, addr, body string, hdr map[string]string) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", len(body))
	for k, v := range hdr {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n" + body)
	if _, err := io.WriteString(c, b.String()); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReaderSize(c, 512)
	c.SetReadDeadline(time.Now().Add(wait))
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, br, resp
}

func TestHTTPClientNeverReads(t *testing.T) {
	base := countGoroutines()
	e := startHTTP(t, nil, &mcp.HTTPOptions{WriteTimeout: 200 * time.Millisecond, KeepAlive: -1})
	addr := e.ts.Listener.Addr().String()
	// 7 KiB notifications (URIs are bounded to 8 KiB), each for another
	// URI (those of one URI coalesce): far more than socket buffers hold.
	uri := "file:///big/" + strings.Repeat("x", 7<<10)
	flood := func(d time.Duration) {
		for i, end := 0, time.Now().Add(d); time.Now().Before(end); {
			for range 10 {
				i++
				e.srv.NotifyResourceUpdated(uri + strconv.Itoa(i))
			}
			runtime.Gosched()
		}
	}
	t.Run("listen stream", func(t *testing.T) {
		c, br, resp := rawPost(t, addr, modernBody("l", "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourceSubscriptions": []string{"file:///big/"}}}, nil),
			modernHeaders("subscriptions/listen", ""))
		defer c.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("listen: %d", resp.StatusCode)
		}
		br.ReadString('\n') // the acknowledgement is on its way
		// The client stops reading while notifications pour in.
		flood(1500 * time.Millisecond)
		// The server gave up on the stream: the connection ends.
		readUntilClosed(t, c, 5*time.Second)
	})
	t.Run("standalone stream", func(t *testing.T) {
		h := e.legacySession("2025-11-25", nil)
		wantResult(t, lastMsg(t, e.post(request(2, "resources/subscribe", map[string]any{"uri": "file:///big/"}), h)))
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\nMCP-Protocol-Version: 2025-11-25\r\n\r\n", h["Mcp-Session-Id"])
		resp, err := http.ReadResponse(bufio.NewReaderSize(c, 512), nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		flood(1500 * time.Millisecond)
		readUntilClosed(t, c, 5*time.Second)
		// The session survives; its retained events are bounded.
		wantResult(t, lastMsg(t, e.post(request(5, "ping", nil), h)))
	})
	t.Run("large response", func(t *testing.T) {
		c, _, resp := rawPost(t, addr, modernBody(1, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": 64 << 20}}, nil),
			modernHeaders("tools/call", "big"))
		defer c.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("big: %d", resp.StatusCode)
		}
		time.Sleep(time.Second) // the client reads nothing
		readUntilClosed(t, c, 5*time.Second)
	})
	if st := lastMsg(t, e.post(modernBody(2, "tools/list", nil, nil), modernHeaders("tools/list", ""))); st.Error != nil {
		t.Fatalf("server after stuck clients: %s", st.raw)
	}
	e.srv.Close()
	e.ts.Close()
	waitGoroutines(t, base)
}

// identityMiddleware authenticates by the X-User header (for tests).
func identityMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u := r.Header.Get("X-User"); u != "" {
			r = r.WithContext(mcp.ContextWithIdentity(r.Context(), mcp.Identity{Principal: u, Scopes: []string{"s"}}))
		}
		next.ServeHTTP(w, r)
	})
}

func TestHTTPForgedSessions(t *testing.T) {
	e := startHTTP(t, nil, &mcp.HTTPOptions{Middleware: identityMiddleware})
	// Forged ids: random, empty-looking, huge, other encodings.
	for _, sid := range []string{"AAAAAAAAAAAAAAAAAAAAAA", "../../etc", strings.Repeat("x", 4000), "1"} {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			var resp *http.Response
			if method == http.MethodPost {
				resp = e.post(request(1, "tools/list", nil), map[string]string{"Mcp-Session-Id": sid})
			} else {
				resp = e.do(method, map[string]string{"Mcp-Session-Id": sid})
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusNotFound {
				t.Errorf("%s with forged session %.20q: %d, want 404", method, sid, resp.StatusCode)
			}
		}
	}
	// A session belongs to the principal that opened it.
	resp := e.post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}}), map[string]string{"X-User": "alice"})
	sid := resp.Header.Get("Mcp-Session-Id")
	resp.Body.Close()
	h := map[string]string{"X-User": "alice", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	wantResult(t, lastMsg(t, e.post(request(2, "ping", nil), h)))
	bob := map[string]string{"X-User": "bob", "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	resp = e.post(request(3, "ping", nil), bob)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob using alice's session: %d, want 404", resp.StatusCode)
	}
	anon := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	resp = e.post(request(3, "ping", nil), anon)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("anonymous use of alice's session: %d, want 404", resp.StatusCode)
	}
	// Replayed after DELETE.
	del := e.do(http.MethodDelete, h)
	del.Body.Close()
	resp = e.post(request(4, "ping", nil), h)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("replayed session after DELETE: %d, want 404", resp.StatusCode)
	}
	// Authenticated 2026-07-28 results are private to the caller.
	m := lastMsg(t, e.post(modernBody(5, "tools/list", nil, nil), map[string]string{"X-User": "alice", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}))
	if got := field(t, m.Result, "cacheScope"); got != "private" {
		t.Errorf("authenticated tools/list cacheScope = %v, want private", got)
	}
	m = lastMsg(t, e.post(modernBody(6, "tools/list", nil, nil), modernHeaders("tools/list", "")))
	if got := field(t, m.Result, "cacheScope"); got != "public" {
		t.Errorf("anonymous tools/list cacheScope = %v, want public", got)
	}
}

// The hostile-client tests of the HTTP+SSE transport: what
// http_hostile_test.go and flood_test.go do to Streamable HTTP.

// TestSSEFlood: with the run slots held, a flood of calls over one
// HTTP+SSE session is refused at once, each on the stream with -32001,
// and memory stays flat; a cancellation still gets through.
func TestSSEFlood(t *testing.T) {
	const running = 4
	e := startHTTPWith(t, &mcp.Options{MaxConcurrentCalls: running, MaxWaitingCalls: -1}, nil, nil)
	started := make(chan string, 100)
	e.prov.Started = started
	c := openSSEClient(t, e)
	c.initialize("2025-03-26")
	for i := range running {
		resp := c.post(request(fmt.Sprintf("slow-%d", i), "tools/call", map[string]any{"name": "slow"}), nil)
		resp.Body.Close()
	}
	for range running {
		<-started
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 3000
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 100}}
	defer client.CloseIdleConnections()
	var wg sync.WaitGroup
	sem := make(chan struct{}, 50)
	var statusErr error
	var mu sync.Mutex
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			body := request(1000+i, "tools/call", map[string]any{"name": "echo"})
			if i%10 == 0 { // batches too
				body = "[" + body + "]"
			}
			req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					err = fmt.Errorf("status %d", resp.StatusCode)
				}
			}
			if err != nil {
				mu.Lock()
				statusErr = err
				mu.Unlock()
			}
		}()
	}
	busy := 0
	for busy < n {
		line := c.recv()
		if strings.Count(line, `"code":-32001`) != 1 || !strings.Contains(line, `"busy":true`) {
			t.Fatalf("flood answer %s", line)
		}
		busy++
	}
	wg.Wait()
	if statusErr != nil {
		t.Fatal(statusErr)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapInuse) - int64(before.HeapInuse)
	t.Logf("heap in use %+d KiB after %d refused calls", growth>>10, n)
	if growth > 8<<20 {
		t.Errorf("heap grew by %d KiB under the flood", growth>>10)
	}
	// Cancelling the held calls frees the slots.
	for i := range running {
		resp := c.post(notification("notifications/cancelled", map[string]any{"requestId": fmt.Sprintf("slow-%d", i)}), nil)
		resp.Body.Close()
	}
	m, _ := c.rpc("after", "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "again"}})
	if textOf(t, m.Result) != "again" {
		t.Fatalf("after the flood: %s", m.raw)
	}
}

// TestSSESessionSlots: a session runs at most Options.MaxConcurrency
// requests; the next POST waits for a slot, while notifications (the
// cancellation that frees one) still get through.
func TestSSESessionSlots(t *testing.T) {
	e := startHTTPWith(t, &mcp.Options{MaxConcurrency: 2}, nil, nil)
	started := make(chan string, 10)
	e.prov.Started = started
	c := openSSEClient(t, e)
	c.initialize("2025-11-25")
	for _, id := range []string{"a", "b"} {
		resp := c.post(request(id, "tools/call", map[string]any{"name": "slow"}), nil)
		resp.Body.Close()
		<-started
	}
	third := make(chan int, 1)
	go func() {
		resp := c.post(request("c", "tools/call", map[string]any{"name": "echo"}), nil)
		resp.Body.Close()
		third <- resp.StatusCode
	}()
	select {
	case name := <-started:
		t.Fatalf("%s started beyond the session's 2 slots", name)
	case st := <-third:
		t.Fatalf("the third POST was answered (%d) while both slots were held", st)
	case <-time.After(200 * time.Millisecond): // can only miss a failure, never flake one
	}
	resp := c.post(notification("notifications/cancelled", map[string]any{"requestId": "a"}), nil)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("cancellation with the slots full: %d", resp.StatusCode)
	}
	if st := <-third; st != http.StatusAccepted {
		t.Fatalf("third POST: %d", st)
	}
	m, _ := c.await("c")
	wantResult(t, m)
}

// TestSSEClientNeverReads: a client that stops reading its stream while
// answers and notifications pour in loses it (and its session) after the
// write timeout; the server goes on, and every goroutine ends.
func TestSSEClientNeverReads(t *testing.T) {
	base := countGoroutines()
	e := startHTTP(t, nil, &mcp.HTTPOptions{WriteTimeout: 200 * time.Millisecond, KeepAlive: -1})
	addr := e.ts.Listener.Addr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
	br := bufio.NewReaderSize(conn, 512)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET /sse: %v %v", resp, err)
	}
	rd := newSSEReader(resp.Body)
	ev, ok := rd.next()
	if !ok || ev.event != "endpoint" {
		t.Fatalf("endpoint event %+v", ev)
	}
	endpoint := "http://" + addr + ev.data
	post := func(body string) int {
		req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	if st := post(request(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}})); st != http.StatusAccepted {
		t.Fatalf("initialize: %d", st)
	}
	post(request(2, "resources/subscribe", map[string]any{"uri": "file:///big/"}))
	// The client reads nothing more: large answers and notifications
	// (7 KiB URIs, each another) fill the socket buffers.
	uri := "file:///big/" + strings.Repeat("x", 7<<10)
	for i, end := 0, time.Now().Add(1500*time.Millisecond); time.Now().Before(end); i++ {
		e.srv.NotifyResourceUpdated(uri + strconv.Itoa(i))
		if i%50 == 0 {
			if post(request(100+i, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": 1 << 20}})) != http.StatusAccepted {
				break // the session is gone already
			}
		}
		runtime.Gosched()
	}
	readUntilClosed(t, conn, 5*time.Second)
	// The session ended with its stream.
	eventually(t, "the session outlived its stuck stream", func() bool { return post(request(3, "ping", nil)) == http.StatusNotFound })
	if m := lastMsg(t, e.post(modernBody(4, "tools/list", nil, nil), modernHeaders("tools/list", ""))); m.Error != nil {
		t.Fatalf("server after a stuck client: %s", m.raw)
	}
	http.DefaultClient.CloseIdleConnections()
	e.srv.Close()
	e.ts.Close()
	waitGoroutines(t, base)
}

// TestSSEShutdown: on Shutdown the stream refuses new requests and ends
// once the requests in flight have answered on it.
func TestSSEShutdown(t *testing.T) {
	e := startHTTP(t, nil, nil)
	c := openSSEClient(t, e)
	c.initialize("2025-11-25")
	done := make(chan error, 1)
	go func() { done <- e.srv.Shutdown(t.Context()) }()
	// New requests are refused on the stream until it ends.
	for {
		resp := c.post(request(2, "tools/list", nil), nil)
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			break
		}
		ev, ok := <-c.events
		if !ok {
			break
		}
		if strings.Contains(ev.data, `"result"`) {
			continue // Shutdown has not begun yet
		}
		m := decodeLine(t, ev.data+"\n")
		wantError(t, m, jsonrpc.CodeInternalError)
		break
	}
	for range c.events { // the stream ends
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
