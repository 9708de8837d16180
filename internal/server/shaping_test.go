package server

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/cluster/redistest"
)

// TestToolShaping checks [[plugins]] tools, hide and override through the
// real server: a tool left out is neither listed nor callable, and an
// overridden one is listed and called under its new name (after the
// prefix) with its new description, while the plugin still gets its own
// name.
func TestToolShaping(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		want       []string
	}{
		{"hide", `hide = ["loop", "panic", "exit", "hog", "flood", "slow"]`,
			[]string{"k_ask", "k_bad_output", "k_changed", "k_counter", "k_fail", "k_greeting", "k_progress", "k_rpc_error", "k_say"}},
		{"tools", `tools = ["echo", "counter", "nonesuch"]`, []string{"k_counter", "k_say"}},
		{"tools and hide", `tools = ["echo", "counter"]
hide = ["counter"]`, []string{"k_say"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := kitchenConfig + `prefix = "k_"
` + tc.keys + `
[plugins.override.echo]
name = "say"
description = "Says it back."
`
			// [plugins.override.echo] must follow the plugin's own keys;
			// its grants table came first in kitchenConfig, so move it.
			cfg = strings.Replace(cfg, "[plugins.grants]\nkv = true\nconfig = { greeting = \"hi there\" }\nelicitation = true\n", "", 1) +
				"[plugins.grants]\nkv = true\nconfig = { greeting = \"hi there\" }\nelicitation = true\n"
			c := &httpClient{t: t, url: serveHTTP(t, newTestServer(t, cfg)) + "/mcp"}
			list := c.modern("tools/list", nil)
			got := list.names(t, "tools")
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Fatalf("tools/list: %v, want %v", got, tc.want)
			}
			var res struct {
				Tools []struct{ Name, Description string } `json:"tools"`
			}
			json.Unmarshal(list.Result, &res)
			for _, tl := range res.Tools {
				if tl.Name == "k_say" && tl.Description != "Says it back." {
					t.Errorf("k_say's description %q", tl.Description)
				}
			}
			if r := c.modern("tools/call", map[string]any{"name": "k_say", "arguments": map[string]any{"text": "hey"}}); !strings.Contains(decodeTool(t, r.response).text(), "hey") {
				t.Errorf("k_say: %s", r.raw)
			}
			for _, hidden := range []string{"k_echo", "k_loop", "echo"} {
				if r := c.modern("tools/call", map[string]any{"name": hidden, "arguments": map[string]any{}}); r.Error == nil || r.Error.Code != -32602 {
					t.Errorf("%s, left out: %s, want -32602", hidden, r.raw)
				}
			}
		})
	}
}

// TestClusterToolRate checks [[plugins]] rate across two replicas sharing
// Redis: one client's calls of a tool through either replica draw on one
// bucket (a burst of 2), the call past it is refused with 429 and
// Retry-After as the principal limits are, and another tool of the
// plugin has a bucket of its own.
func TestClusterToolRate(t *testing.T) {
	r := redistest.Start(t)
	var urls []string
	for range 2 {
		cfg := strings.NewReplacer("{{redis}}", r.URL(), "{{key}}", clusterKey).Replace(clusterConfig) + "rate = \"2/m\"\n"
		cfg = strings.Replace(cfg, "[plugins.grants]\nkv = true\nelicitation = true\n", "", 1) + "[plugins.grants]\nkv = true\nelicitation = true\n"
		urls = append(urls, serveHTTP(t, newTestServer(t, cfg)))
	}
	call := func(i int, tool string) httpResult {
		c := &httpClient{t: t, url: urls[i] + "/mcp"}
		return c.modern("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"text": "x"}})
	}
	for i := range 2 {
		if res := call(i, "echo"); res.status != http.StatusOK || res.Error != nil {
			t.Fatalf("call %d within the burst, replica %d: %d %s", i, i, res.status, res.raw)
		}
	}
	for i := range 2 {
		res := call(i, "echo")
		if res.status != http.StatusTooManyRequests || res.header.Get("Retry-After") == "" || res.Error == nil || res.Error.Code != -32001 ||
			!strings.Contains(res.raw, "Rate limit") {
			t.Errorf("past the burst on replica %d: %d Retry-After=%q %s", i, res.status, res.header.Get("Retry-After"), res.raw)
		}
	}
	if res := call(1, "counter"); res.status != http.StatusOK || res.Error != nil {
		t.Errorf("another tool: %d %s", res.status, res.raw)
	}
}
