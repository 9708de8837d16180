package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
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
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within 15s", what)
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
