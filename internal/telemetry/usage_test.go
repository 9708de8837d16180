package telemetry_test

import (
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/internal/telemetry"
)

// TestUsageInMeta: with usage_in_meta each tool result's _meta carries
// what the call cost under io.wasmcp/usage; without it, nothing is added.
func TestUsageInMeta(t *testing.T) {
	noOTEL(t)
	w := newWeb(t)
	usage := func(resp json.RawMessage) *telemetry.Usage {
		var m struct {
			Result struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"result"`
		}
		if err := json.Unmarshal(resp, &m); err != nil {
			t.Fatal(err)
		}
		raw, ok := m.Result.Meta[telemetry.UsageKey]
		if !ok {
			return nil
		}
		var u telemetry.Usage
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatalf("usage %s: %v", raw, err)
		}
		return &u
	}
	for _, on := range []bool{true, false} {
		extra := ""
		if on {
			extra = "usage_in_meta = true"
		}
		srv, _ := newServer(t, testConfig(w, extra))
		c := startStdio(t, srv)
		c.initialize()
		echo := c.call("tools/call", tool("echo", map[string]any{"text": "x"}, nil))
		fetch := c.call("tools/call", tool("fetch", map[string]any{"url": "http://public.test:" + w.port + "/"}, nil))
		if text(t, echo) != "x" {
			t.Fatalf("echo: %s", echo)
		}
		ue, uf := usage(echo), usage(fetch)
		if !on {
			if ue != nil || uf != nil {
				t.Errorf("usage without usage_in_meta: %+v %+v", ue, uf)
			}
			continue
		}
		if ue == nil || uf == nil {
			t.Fatalf("no usage: %s / %s", echo, fetch)
		}
		if ue.WallMs <= 0 || ue.PluginCalls != 1 || ue.HostCalls != 0 || ue.HTTPRequests != 0 || ue.RunMs > ue.WallMs {
			t.Errorf("echo usage %+v", ue)
		}
		if uf.PluginCalls != 1 || uf.HostCalls != 1 || uf.HTTPRequests != 1 || uf.HTTPSent <= 0 || uf.HTTPReceived <= int64(len("hello from the web")) {
			t.Errorf("fetch usage %+v", uf)
		}
	}
}
