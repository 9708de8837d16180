package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

func TestModernDiscover(t *testing.T) {
	c := startStdio(t, nil, &mcp.Options{Name: "srv", Version: "1.2", Instructions: "hi"})
	res, _ := c.rpc(1, "server/discover", withMeta(nil, nil))
	wantResult(t, res)
	var d struct {
		ResultType        string         `json:"resultType"`
		SupportedVersions []string       `json:"supportedVersions"`
		Capabilities      map[string]any `json:"capabilities"`
		TTL               *int           `json:"ttlMs"`
		CacheScope        string         `json:"cacheScope"`
		Instructions      string         `json:"instructions"`
		Meta              map[string]struct {
			Name, Version string
		} `json:"_meta"`
	}
	if err := json.Unmarshal(res.Result, &d); err != nil {
		t.Fatal(err)
	}
	if d.ResultType != "complete" || d.TTL == nil || *d.TTL < 0 || d.CacheScope != "public" || d.Instructions != "hi" {
		t.Errorf("discover = %s", res.Result)
	}
	if strings.Join(d.SupportedVersions, ",") != "2026-07-28,2025-11-25,2025-06-18,2025-03-26,2024-11-05" {
		t.Errorf("supportedVersions = %v", d.SupportedVersions)
	}
	if si := d.Meta["io.modelcontextprotocol/serverInfo"]; si.Name != "srv" || si.Version != "1.2" {
		t.Errorf("serverInfo = %+v", si)
	}
	if d.Capabilities["tools"] == nil || d.Capabilities["resources"] == nil {
		t.Errorf("capabilities = %v", d.Capabilities)
	}
}

func TestModernValidation(t *testing.T) {
	c := startStdio(t, nil, nil)
	noVersion := metaWithout("io.modelcontextprotocol/protocolVersion")
	noCaps := metaWithout("io.modelcontextprotocol/clientCapabilities")
	noInfo := modernMeta(nil)
	delete(noInfo, "io.modelcontextprotocol/clientInfo")
	tests := []struct {
		name   string
		method string
		params any
		code   int
	}{
		{"discover without params", "server/discover", nil, jsonrpc.CodeInvalidParams},
		{"discover empty params", "server/discover", map[string]any{}, jsonrpc.CodeInvalidParams},
		{"missing protocolVersion", "tools/list", map[string]any{"_meta": noVersion}, jsonrpc.CodeInvalidParams},
		{"missing clientCapabilities", "tools/list", map[string]any{"_meta": noCaps}, jsonrpc.CodeInvalidParams},
		{"caps not an object", "tools/list", map[string]any{"_meta": modernMeta(map[string]any{"io.modelcontextprotocol/clientCapabilities": 1})}, jsonrpc.CodeInvalidParams},
		{"invalid logLevel", "tools/list", withMeta(nil, map[string]any{"io.modelcontextprotocol/logLevel": "loud"}), jsonrpc.CodeInvalidParams},
		{"clientInfo optional", "tools/list", map[string]any{"_meta": noInfo}, 0},
		{"unknown version", "tools/list", withMeta(nil, map[string]any{"io.modelcontextprotocol/protocolVersion": "v999.0.0"}), jsonrpc.CodeUnsupportedVersion},
		{"legacy version in _meta", "tools/list", withMeta(nil, map[string]any{"io.modelcontextprotocol/protocolVersion": "2025-11-25"}), jsonrpc.CodeUnsupportedVersion},
		{"initialize removed", "initialize", withMeta(nil, nil), jsonrpc.CodeMethodNotFound},
		{"ping removed", "ping", withMeta(nil, nil), jsonrpc.CodeMethodNotFound},
		{"setLevel removed", "logging/setLevel", withMeta(map[string]any{"level": "info"}, nil), jsonrpc.CodeMethodNotFound},
		{"subscribe removed", "resources/subscribe", withMeta(map[string]any{"uri": "test://watched"}, nil), jsonrpc.CodeMethodNotFound},
		{"unsubscribe removed", "resources/unsubscribe", withMeta(map[string]any{"uri": "test://watched"}, nil), jsonrpc.CodeMethodNotFound},
		{"unknown method", "unknown/method", withMeta(nil, nil), jsonrpc.CodeMethodNotFound},
		{"resource not found is -32602", "resources/read", withMeta(map[string]any{"uri": "test://nope"}, nil), jsonrpc.CodeInvalidParams},
		{"missing capability", "tools/call", withMeta(map[string]any{"name": "missing_capability"}, nil), jsonrpc.CodeMissingClientCapability},
		{"unknown tool", "tools/call", withMeta(map[string]any{"name": "nope"}, nil), jsonrpc.CodeInvalidParams},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			res, _ := c.rpc(i+1, tt.method, tt.params)
			if tt.code == 0 {
				wantResult(t, res)
				return
			}
			wantError(t, res, tt.code)
			switch tt.code {
			case jsonrpc.CodeUnsupportedVersion:
				var d struct {
					Supported []string `json:"supported"`
					Requested string   `json:"requested"`
				}
				_ = json.Unmarshal(res.Error.Data, &d)
				if len(d.Supported) == 0 || d.Requested == "" {
					t.Errorf("data = %s", res.Error.Data)
				}
			case jsonrpc.CodeMissingClientCapability:
				if field(t, res.Error.Data, "requiredCapabilities", "sampling") == nil {
					t.Errorf("data = %s", res.Error.Data)
				}
			}
			if tt.method == "resources/read" && field(t, res.Error.Data, "uri") != "test://nope" {
				t.Errorf("data = %s", res.Error.Data)
			}
		})
	}
}

func TestModernResults(t *testing.T) {
	c := startStdio(t, nil, nil)
	tests := []struct {
		method    string
		params    map[string]any
		cacheable bool
	}{
		{"tools/list", nil, true},
		{"resources/list", nil, true},
		{"resources/templates/list", nil, true},
		{"prompts/list", nil, true},
		{"resources/read", map[string]any{"uri": "test://static-text"}, true},
		{"tools/call", map[string]any{"name": "echo"}, false},
		{"tools/call", map[string]any{"name": "fail"}, false},
		{"prompts/get", map[string]any{"name": "simple"}, false},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "with_args"}, "argument": map[string]any{"name": "arg1", "value": ""}}, false},
	}
	for i, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			c.t = t
			res, _ := c.rpc(i+1, tt.method, withMeta(tt.params, nil))
			wantResult(t, res)
			if rt := field(t, res.Result, "resultType"); rt != "complete" {
				t.Errorf("resultType = %v in %s", rt, res.Result)
			}
			ttl, scope := field(t, res.Result, "ttlMs"), field(t, res.Result, "cacheScope")
			if tt.cacheable && (ttl == nil || scope != "public") {
				t.Errorf("cache fields missing in %s", res.Result)
			}
			if !tt.cacheable && ttl != nil {
				t.Errorf("ttlMs on %s", tt.method)
			}
		})
	}
}

func TestModernInputRequired(t *testing.T) {
	c := startStdio(t, nil, nil)
	res, before := c.rpc(1, "tools/call", withMeta(map[string]any{"name": "elicit"}, map[string]any{
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}))
	wantResult(t, res)
	if len(before) != 0 {
		t.Fatalf("server sent %s on a stateless request", before[0].raw)
	}
	if field(t, res.Result, "resultType") != "input_required" || field(t, res.Result, "inputRequests", "name", "method") != "elicitation/create" {
		t.Fatalf("result = %s", res.Result)
	}
	res, _ = c.rpc(2, "tools/call", withMeta(map[string]any{"name": "elicit", "inputResponses": map[string]any{
		"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}}}}, nil))
	if textOf(t, res.Result) != "hello Ann" || field(t, res.Result, "resultType") != "complete" {
		t.Fatalf("retry = %s", res.Result)
	}
}

func TestModernLoggingAndProgress(t *testing.T) {
	c := startStdio(t, nil, nil)
	// A legacy session on the same connection sets its level: modern
	// requests must not inherit it.
	c.initialize("2025-11-25", nil)
	c.rpc("lvl", "logging/setLevel", map[string]any{"level": "debug"})
	res, before := c.rpc(1, "tools/call", withMeta(map[string]any{"name": "log"}, nil))
	wantResult(t, res)
	if len(before) != 0 {
		t.Fatalf("log without _meta logLevel: %s", before[0].raw)
	}
	res, before = c.rpc(2, "tools/call", withMeta(map[string]any{"name": "log"}, map[string]any{"io.modelcontextprotocol/logLevel": "alert"}))
	wantResult(t, res)
	if len(before) != 2 || field(t, before[0].Params, "level") != "alert" || field(t, before[1].Params, "level") != "emergency" {
		t.Fatalf("logs = %v", before)
	}
	res, before = c.rpc(3, "tools/call", withMeta(map[string]any{"name": "progress"}, map[string]any{"progressToken": "p"}))
	wantResult(t, res)
	if len(before) != 3 || before[2].Method != "notifications/progress" {
		t.Fatalf("progress = %v", before)
	}
	// The legacy session still logs at its own level.
	_, before = c.rpc(4, "tools/call", map[string]any{"name": "log"})
	if len(before) != 8 {
		t.Fatalf("legacy logs = %d", len(before))
	}
}

func TestModernCancellation(t *testing.T) {
	c := startStdio(t, nil, nil)
	started := make(chan string, 4)
	c.prov.Started = started
	c.send(request("s", "tools/call", withMeta(map[string]any{"name": "slow"}, nil)))
	<-started
	c.send(notification("notifications/cancelled", map[string]any{"requestId": "s"}))
	res, before := c.rpc("d", "server/discover", withMeta(nil, nil))
	wantResult(t, res)
	if len(before) != 0 || len(c.queue) != 0 {
		t.Fatal("cancelled request answered")
	}
}

func TestModernListen(t *testing.T) {
	c := startStdio(t, nil, nil)
	listen := func(id string, filter map[string]any) {
		c.t.Helper()
		c.send(request(id, "subscriptions/listen", withMeta(map[string]any{"notifications": filter}, nil)))
		ack := c.next()
		if ack.Method != "notifications/subscriptions/acknowledged" {
			c.t.Fatalf("first message = %s", ack.raw)
		}
		if got := field(c.t, ack.Params, "_meta", "io.modelcontextprotocol/subscriptionId"); got != id {
			c.t.Fatalf("ack subscriptionId = %v", got)
		}
	}
	// taskIds need the tasks extension (SEP-2663): -32021 without it.
	res, _ := c.rpc("tasks-sub", "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}, nil))
	wantError(t, res, -32021)
	listen("tools-sub", map[string]any{"toolsListChanged": true})
	listen("prompts-sub", map[string]any{"promptsListChanged": true, "resourceSubscriptions": []string{"test://watched"}})
	res, before := c.rpc(1, "tools/call", withMeta(map[string]any{"name": "change_tools"}, nil))
	wantResult(t, res)
	before = append(before, c.pingBarrierModern(2)...)
	if len(before) != 1 || before[0].Method != "notifications/tools/list_changed" ||
		field(t, before[0].Params, "_meta", "io.modelcontextprotocol/subscriptionId") != "tools-sub" {
		t.Fatalf("tools change = %v", before)
	}
	_, before = c.rpc(3, "tools/call", withMeta(map[string]any{"name": "touch", "arguments": map[string]any{"uri": "test://watched"}}, nil))
	before = append(before, c.pingBarrierModern(4)...)
	if len(before) != 1 || before[0].Method != "notifications/resources/updated" ||
		field(t, before[0].Params, "uri") != "test://watched" ||
		field(t, before[0].Params, "_meta", "io.modelcontextprotocol/subscriptionId") != "prompts-sub" {
		t.Fatalf("resource update = %v", before)
	}
	// Cancelling a listen ends it without a response.
	c.send(notification("notifications/cancelled", map[string]any{"requestId": "tools-sub"}))
	_, before = c.rpc(5, "tools/call", withMeta(map[string]any{"name": "change_tools"}, nil))
	before = append(before, c.pingBarrierModern(6)...)
	if len(before) != 0 {
		t.Fatalf("after cancel: %v", before)
	}
	// Closing the server ends the remaining listen with a completion result.
	c.srv.Close()
	m := c.next()
	if string(m.ID) != `"prompts-sub"` || field(t, m.Result, "resultType") != "complete" ||
		field(t, m.Result, "_meta", "io.modelcontextprotocol/subscriptionId") != "prompts-sub" {
		t.Fatalf("listen end = %s", m.raw)
	}
}

// pingBarrierModern is a round trip that needs no session.
func (c *stdioClient) pingBarrierModern(id any) []*msg {
	c.t.Helper()
	_, before := c.rpc(id, "server/discover", withMeta(nil, nil))
	return before
}

func TestModernListenRefused(t *testing.T) {
	c := startStdio(t, nil, nil)
	res, _ := c.rpc(1, "subscriptions/listen", withMeta(map[string]any{"notifications": "x"}, nil))
	wantError(t, res, jsonrpc.CodeInvalidParams)
	off := startStdio(t, &mcptest.Options{Features: &mcp.Features{Tools: true}}, nil)
	res, _ = off.rpc(1, "subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, nil))
	wantError(t, res, jsonrpc.CodeMethodNotFound)
}

func TestInputRequiredGating(t *testing.T) {
	c := startStdio(t, nil, nil)
	res, _ := c.rpc(1, "tools/call", withMeta(map[string]any{"name": "needs_input"}, nil))
	if field(t, res.Result, "resultType") != "input_required" || field(t, res.Result, "ttlMs") != nil {
		t.Fatalf("stateless tools/call = %s", res.raw)
	}
	complete := map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "with_args"}, "argument": map[string]any{"name": "arg1", "value": "input_required"}}
	res, _ = c.rpc(2, "completion/complete", withMeta(complete, nil))
	wantError(t, res, jsonrpc.CodeInternalError)
	c.initialize("2025-11-25", nil)
	res, _ = c.rpc(3, "tools/call", map[string]any{"name": "needs_input"})
	wantError(t, res, jsonrpc.CodeInternalError)
}
