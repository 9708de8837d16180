package server

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// clusterConfig is kitchenConfig's plugin behind a [cluster] table whose
// redis URL is {{redis}} and key {{key}}.
const clusterConfig = `
[server]
name = "test"
[limits]
timeout = "5s"
memory = "32MiB"
[cluster]
redis = "{{redis}}"
key = "{{key}}"
[[plugins]]
name = "kitchen"
path = "kitchen.wasm"
[plugins.grants]
kv = true
elicitation = true
`

const clusterKey = "cluster-test-key-0123456789abcdef"

// replicas starts n servers sharing Redis r, each on an HTTP test server,
// and returns their base URLs. key overrides the cluster key of each
// replica when given.
func replicas(t *testing.T, r *redistest.Server, n int, keys ...string) []string {
	t.Helper()
	var urls []string
	for i := range n {
		key := clusterKey
		if i < len(keys) {
			key = keys[i]
		}
		cfg := strings.NewReplacer("{{redis}}", r.URL(), "{{key}}", key).Replace(clusterConfig)
		urls = append(urls, serveHTTP(t, newTestServer(t, cfg)))
	}
	return urls
}

// readyz returns the status of GET base/readyz.
func readyz(t *testing.T, base string) (int, string) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Eventually(t, 15*time.Second, what, cond)
}

// TestClusterKV checks that plugin kv written through one replica is
// read through the others (the kitchen counter counts across them).
func TestClusterKV(t *testing.T) {
	urls := replicas(t, redistest.Start(t), 3)
	for i, want := range []string{"1", "2", "3", "4"} {
		c := &httpClient{t: t, url: urls[i%3] + "/mcp"}
		r := c.modern("tools/call", map[string]any{"name": "counter"})
		if got := decodeTool(t, r.response).text(); got != want {
			t.Fatalf("counter on replica %d = %q (%s), want %s", i%3, got, r.raw, want)
		}
	}
}

// TestClusterRequestState checks that a requestState sealed by one
// replica is accepted by another with the same cluster key, and refused
// by one with a different key.
func TestClusterRequestState(t *testing.T) {
	urls := replicas(t, redistest.Start(t), 3, clusterKey, clusterKey, "another-cluster-key-0123456789abcdef")
	c1 := &httpClient{t: t, url: urls[0] + "/mcp"}
	tr := decodeTool(t, c1.modern("tools/call", map[string]any{"name": "ask"}).response)
	if tr.ResultType != "input_required" || tr.RequestState == "" {
		t.Fatalf("round 1: %+v", tr)
	}
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}}
	round2 := func(base string) httpResult {
		c := &httpClient{t: t, url: base + "/mcp"}
		return c.modern("tools/call", map[string]any{"name": "ask", "inputResponses": answer, "requestState": tr.RequestState})
	}
	if r := round2(urls[1]); !strings.Contains(decodeTool(t, r.response).text(), "Hello, Bo! state=asked-1") {
		t.Errorf("round 2 on another replica: %s", r.raw)
	}
	if r := round2(urls[2]); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("round 2 on a replica with another key: %s, want -32602", r.raw)
	}
}

// TestClusterRedisDown checks the faults at the server: with Redis
// stopped /readyz is 503 and kv calls fail saying the store is
// unavailable while tools without kv answer; restarted, both heal
// without restarting the server.
func TestClusterRedisDown(t *testing.T) {
	r := redistest.Start(t)
	base := replicas(t, r, 1)[0]
	c := &httpClient{t: t, url: base + "/mcp"}
	eventually(t, "ready", func() bool { code, _ := readyz(t, base); return code == 200 })
	if got := decodeTool(t, c.modern("tools/call", map[string]any{"name": "counter"}).response).text(); got != "1" {
		t.Fatalf("counter: %q", got)
	}
	r.Stop()
	eventually(t, "not ready", func() bool { code, _ := readyz(t, base); return code == 503 })
	if _, body := readyz(t, base); !strings.Contains(body, "kv store unavailable") {
		t.Errorf("/readyz body %q does not say why", body)
	}
	start := time.Now()
	res := c.modern("tools/call", map[string]any{"name": "counter"})
	all := res.raw
	if tr := decodeTool(t, res.response); !tr.IsError && res.Error == nil || !strings.Contains(all, "unavailable") {
		t.Errorf("counter with Redis down: %s; want an error saying kv is unavailable", all)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("counter with Redis down answered after %v", d)
	}
	if got := decodeTool(t, c.modern("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hey"}}).response).text(); !strings.Contains(got, `"length":3`) {
		t.Errorf("echo with Redis down: %q", got)
	}
	r.Restart()
	eventually(t, "ready again", func() bool { code, _ := readyz(t, base); return code == 200 })
	if got := decodeTool(t, c.modern("tools/call", map[string]any{"name": "counter"}).response).text(); got != "1" {
		t.Errorf("counter after restart (Redis lost its data): %q", got)
	}
}

// listenStream opens a 2026-07-28 subscriptions/listen stream on base for
// the resource uri and returns the data lines of its events after the
// acknowledgement.
func listenStream(t *testing.T, base, uri string) <-chan string {
	t.Helper()
	return listenWith(t, base, map[string]any{"resourceSubscriptions": []string{uri}}, map[string]any{})
}

// listenWith opens a listen stream with the notifications filter and
// the client capabilities caps.
func listenWith(t *testing.T, base string, filter, caps map[string]any) <-chan string {
	t.Helper()
	params := map[string]any{"notifications": filter, "_meta": modernMeta(caps)}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "l1", "method": "subscriptions/listen", "params": params})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				lines <- d
			}
		}
	}()
	select {
	case ack := <-lines:
		if !strings.Contains(ack, "notifications/subscriptions/acknowledged") {
			t.Fatalf("listen: first event %s", ack)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("listen: no acknowledgement within 10s")
	}
	return lines
}

// TestClusterListen checks that a listen stream on one replica receives
// the resources/updated a plugin call causes on another (the kitchen
// counter notifies kitchen://static).
func TestClusterListen(t *testing.T) {
	urls := replicas(t, redistest.Start(t), 2)
	lines := listenStream(t, urls[0], "kitchen://static")
	c := &httpClient{t: t, url: urls[1] + "/mcp"}
	// The bus subscription of a new replica is live within a moment:
	// call until a notification arrives, then measure one.
	eventually(t, "first notification across replicas", func() bool {
		c.modern("tools/call", map[string]any{"name": "counter"})
		select {
		case <-lines:
			return true
		case <-time.After(200 * time.Millisecond):
			return false
		}
	})
	for len(lines) > 0 {
		<-lines
	}
	start := time.Now()
	c.modern("tools/call", map[string]any{"name": "counter"})
	select {
	case d := <-lines:
		if !strings.Contains(d, `"method":"notifications/resources/updated"`) || !strings.Contains(d, `"uri":"kitchen://static"`) || !strings.Contains(d, `"l1"`) {
			t.Fatalf("listen stream got %s", d)
		}
		t.Logf("resources/updated reached the other replica %v after the call started", time.Since(start))
	case <-time.After(10 * time.Second):
		t.Fatal("no resources/updated on replica 0 within 10s of a change on replica 1")
	}
}
