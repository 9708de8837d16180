package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

func modernBody(id any, method string, params map[string]any, meta map[string]any) string {
	return request(id, method, withMeta(params, meta))
}

func TestHTTPModernPrecedence(t *testing.T) {
	e := startHTTP(t, nil, nil)
	noVersion := metaWithout("io.modelcontextprotocol/protocolVersion")
	noCaps := metaWithout("io.modelcontextprotocol/clientCapabilities")
	v999 := map[string]any{"io.modelcontextprotocol/protocolVersion": "v999.0.0"}
	tests := []struct {
		name   string
		body   string
		hdr    map[string]string
		status int
		code   int
	}{
		{"discover without _meta", request(101, "server/discover", map[string]any{}), modernHeaders("server/discover", ""), 400, jsonrpc.CodeInvalidParams},
		{"missing protocolVersion", request(102, "server/discover", map[string]any{"_meta": noVersion}), modernHeaders("server/discover", ""), 400, jsonrpc.CodeInvalidParams},
		{"missing clientCapabilities", request(104, "server/discover", map[string]any{"_meta": noCaps}), modernHeaders("server/discover", ""), 400, jsonrpc.CodeInvalidParams},
		{"header/body version mismatch", modernBody(302, "server/discover", nil, v999), modernHeaders("server/discover", ""), 400, jsonrpc.CodeHeaderMismatch},
		{"unsupported version", modernBody(301, "server/discover", nil, v999), map[string]string{"MCP-Protocol-Version": "v999.0.0", "Mcp-Method": "server/discover"}, 400, jsonrpc.CodeUnsupportedVersion},
		{"initialize removed", modernBody(500, "initialize", nil, nil), modernHeaders("initialize", ""), 404, jsonrpc.CodeMethodNotFound},
		{"ping removed", modernBody(500, "ping", nil, nil), modernHeaders("ping", ""), 404, jsonrpc.CodeMethodNotFound},
		{"setLevel removed", modernBody(500, "logging/setLevel", map[string]any{"level": "info"}, nil), modernHeaders("logging/setLevel", ""), 404, jsonrpc.CodeMethodNotFound},
		{"subscribe removed", modernBody(500, "resources/subscribe", map[string]any{"uri": "x"}, nil), modernHeaders("resources/subscribe", ""), 404, jsonrpc.CodeMethodNotFound},
		{"unsubscribe removed", modernBody(500, "resources/unsubscribe", map[string]any{"uri": "x"}, nil), modernHeaders("resources/unsubscribe", ""), 404, jsonrpc.CodeMethodNotFound},
		{"unknown method", modernBody(601, "unknown/method", nil, nil), modernHeaders("unknown/method", ""), 404, jsonrpc.CodeMethodNotFound},
		{"missing capability", modernBody(401, "tools/call", map[string]any{"name": "missing_capability"}, nil), modernHeaders("tools/call", "missing_capability"), 400, jsonrpc.CodeMissingClientCapability},
		{"resource not found", modernBody(7, "resources/read", map[string]any{"uri": "test://nope"}, nil), modernHeaders("resources/read", "test://nope"), 200, jsonrpc.CodeInvalidParams},
		{"unknown tool", modernBody(8, "tools/call", map[string]any{"name": "nope"}, nil), modernHeaders("tools/call", "nope"), 200, jsonrpc.CodeInvalidParams},
		{"clientInfo optional", request(105, "server/discover", map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}), modernHeaders("server/discover", ""), 200, 0},
		{"stale session id ignored", modernBody(9, "server/discover", nil, nil), map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover", "Mcp-Session-Id": "stale"}, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			resp := e.post(tt.body, tt.hdr)
			if resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
			if resp.Header.Get("Mcp-Session-Id") != "" {
				t.Error("session id minted on the stateless path")
			}
			m := lastMsg(t, resp)
			want := mustJSON(decodeJSON(t, tt.body)["id"])
			if string(m.ID) != want {
				t.Errorf("id %s, want %s", m.ID, want)
			}
			if tt.code == 0 {
				wantResult(t, m)
				if field(t, m.Result, "resultType") != "complete" {
					t.Errorf("no resultType in %s", m.Result)
				}
				return
			}
			wantError(t, m, tt.code)
			if tt.code == jsonrpc.CodeUnsupportedVersion {
				var d struct {
					Supported []string
					Requested string
				}
				_ = json.Unmarshal(m.Error.Data, &d)
				if d.Requested != "v999.0.0" || len(d.Supported) != 5 {
					t.Errorf("data = %s", m.Error.Data)
				}
			}
		})
	}
}

func TestHTTPModernHeaderValidation(t *testing.T) {
	e := startHTTP(t, nil, nil)
	call := func(args map[string]any) string {
		return modernBody(1, "tools/call", map[string]any{"name": "header", "arguments": args}, nil)
	}
	list := modernBody(1, "tools/list", nil, nil)
	echo := modernBody(1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{}}, nil)
	hdr := func(kv ...string) map[string]string {
		h := map[string]string{"MCP-Protocol-Version": "2026-07-28"}
		for i := 0; i+1 < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}
	tests := []struct {
		name   string
		body   string
		hdr    map[string]string
		accept bool
	}{
		{"mismatched method", list, hdr("Mcp-Method", "prompts/list"), false},
		{"missing method", list, hdr(), false},
		{"method value case", list, hdr("Mcp-Method", "TOOLS/LIST"), false},
		{"lower-case header name", list, hdr("mcp-method", "tools/list"), true},
		{"upper-case header name", list, hdr("MCP-METHOD", "tools/list"), true},
		{"missing version header", list, map[string]string{"Mcp-Method": "tools/list"}, false},
		{"mismatched name", echo, hdr("Mcp-Method", "tools/call", "Mcp-Name", "wrong_tool_name"), false},
		{"whitespace around name", echo, hdr("Mcp-Method", "tools/call", "Mcp-Name", "  echo  "), true},
		{"missing name", echo, hdr("Mcp-Method", "tools/call"), false},
		{"base64 name", echo, hdr("Mcp-Method", "tools/call", "Mcp-Name", "=?base64?ZWNobw==?="), true},
		{"non-ascii raw name", echo, hdr("Mcp-Method", "tools/call", "Mcp-Name", "ech\xc3\xb6"), false},
		{"resources/read name", modernBody(1, "resources/read", map[string]any{"uri": "test://static-text"}, nil), hdr("Mcp-Method", "resources/read", "Mcp-Name", "test://static-text"), true},
		{"prompts/get wrong name", modernBody(1, "prompts/get", map[string]any{"name": "simple"}, nil), hdr("Mcp-Method", "prompts/get", "Mcp-Name", "other"), false},
		{"param base64", call(map[string]any{"region": "Hello"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "=?base64?SGVsbG8=?="), true},
		{"param bad padding", call(map[string]any{"region": "Hello"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "=?base64?SGVsbG8?="), false},
		{"param bad chars", call(map[string]any{"region": "Hello"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "=?base64?SGVs!!!bG8=?="), false},
		{"param literal base64-looking", call(map[string]any{"region": "SGVsbG8="}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "SGVsbG8="), true},
		{"param literal half sentinel", call(map[string]any{"region": "=?base64?SGVsbG8="}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "=?base64?SGVsbG8="), true},
		{"param missing", call(map[string]any{"region": "test-value"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header"), false},
		{"param mismatch", call(map[string]any{"region": "a"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "b"), false},
		{"param null needs no header", call(map[string]any{"region": nil}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header"), true},
		{"param header without argument", call(map[string]any{}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Region", "x"), false},
		{"integer compared numerically", call(map[string]any{"level": 42}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Level", "042"), true},
		{"integer mismatch", call(map[string]any{"level": 42}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Level", "43"), false},
		{"boolean", call(map[string]any{"flag": true}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "mcp-param-flag", "true"), true},
		{"boolean mismatch", call(map[string]any{"flag": true}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header", "Mcp-Param-Flag", "false"), false},
		{"unannotated argument", call(map[string]any{"note": "x"}), hdr("Mcp-Method", "tools/call", "Mcp-Name", "header"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			resp := e.post(tt.body, tt.hdr)
			ct := resp.Header.Get("Content-Type")
			m := lastMsg(t, resp)
			if tt.accept {
				if resp.StatusCode >= 400 || m.Error != nil {
					t.Fatalf("refused: %d %s", resp.StatusCode, m.raw)
				}
				return
			}
			if resp.StatusCode != 400 || ct != "application/json" {
				t.Fatalf("status %d %s, want 400 JSON", resp.StatusCode, ct)
			}
			wantError(t, m, jsonrpc.CodeHeaderMismatch)
			if string(m.ID) != "1" {
				t.Errorf("id = %s", m.ID)
			}
		})
	}
}

func TestHTTPModernStreaming(t *testing.T) {
	e := startHTTP(t, nil, nil)
	// Progress and logs come as SSE events before the result.
	resp := e.post(modernBody(1, "tools/call", map[string]any{"name": "progress"}, map[string]any{"progressToken": "progress-test-1"}),
		modernHeaders("tools/call", "progress"))
	if resp.Header.Get("Content-Type") != "text/event-stream" || resp.Header.Get("X-Accel-Buffering") != "no" {
		t.Fatalf("headers %v", resp.Header)
	}
	ms := messages(t, resp)
	if len(ms) != 4 || ms[0].Method != "notifications/progress" || field(t, ms[3].Result, "resultType") != "complete" {
		t.Fatalf("messages = %v", ms)
	}
	if field(t, ms[0].Params, "progressToken") != "progress-test-1" {
		t.Errorf("token = %s", ms[0].Params)
	}
	// No log notifications without _meta logLevel.
	ms = messages(t, e.post(modernBody(2, "tools/call", map[string]any{"name": "log"}, nil), modernHeaders("tools/call", "log")))
	if len(ms) != 1 {
		t.Fatalf("logs without logLevel: %v", ms)
	}
	ms = messages(t, e.post(modernBody(3, "tools/call", map[string]any{"name": "log"}, map[string]any{"io.modelcontextprotocol/logLevel": "critical"}), modernHeaders("tools/call", "log")))
	if len(ms) != 4 {
		t.Fatalf("logs at critical+: %d", len(ms))
	}
	// Elicitation is input_required, never a server request.
	ms = messages(t, e.post(modernBody(4, "tools/call", map[string]any{"name": "elicit"}, map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{"elicitation": map[string]any{}}}), modernHeaders("tools/call", "elicit")))
	if len(ms) != 1 || field(t, ms[0].Result, "resultType") != "input_required" {
		t.Fatalf("elicit = %v", ms)
	}
	// Caching fields.
	for _, m := range []string{"tools/list", "resources/list", "resources/templates/list", "prompts/list"} {
		r := lastMsg(t, e.post(modernBody(5, m, nil, nil), modernHeaders(m, "")))
		if field(t, r.Result, "ttlMs") == nil || field(t, r.Result, "cacheScope") == nil || field(t, r.Result, "resultType") != "complete" {
			t.Errorf("%s = %s", m, r.raw)
		}
	}
}

func TestHTTPModernCancelOnClose(t *testing.T) {
	e := startHTTP(t, nil, nil)
	started, stopped := make(chan string, 1), make(chan string, 1)
	e.prov.Started, e.prov.Stopped = started, stopped
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(modernBody(1, "tools/call", map[string]any{"name": "slow"}, nil)))
	for k, v := range modernHeaders("tools/call", "slow") {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		resp, err := e.ts.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	cancel()
	<-errc
	<-stopped // the handler's context ended with the connection
}

func TestHTTPModernListen(t *testing.T) {
	e := startHTTP(t, nil, nil)
	open := func(id string, filter map[string]any) (*http.Response, *sseReader) {
		resp := e.post(modernBody(id, "subscriptions/listen", map[string]any{"notifications": filter}, nil), modernHeaders("subscriptions/listen", ""))
		if resp.Header.Get("Content-Type") != "text/event-stream" {
			t.Fatalf("listen reply %s", resp.Header.Get("Content-Type"))
		}
		rd := newSSEReader(resp.Body)
		ev, ok := rd.next()
		if !ok {
			t.Fatal("listen stream ended")
		}
		m := decodeLine(t, ev.data+"\n")
		if m.Method != "notifications/subscriptions/acknowledged" || field(t, m.Params, "_meta", "io.modelcontextprotocol/subscriptionId") != id {
			t.Fatalf("ack = %s", m.raw)
		}
		return resp, rd
	}
	toolsResp, tools := open("t", map[string]any{"toolsListChanged": true})
	promptsResp, prompts := open("p", map[string]any{"promptsListChanged": true})
	defer promptsResp.Body.Close()
	lastMsg(t, e.post(modernBody(1, "tools/call", map[string]any{"name": "change_tools"}, nil), modernHeaders("tools/call", "change_tools")))
	lastMsg(t, e.post(modernBody(2, "tools/call", map[string]any{"name": "change_prompts"}, nil), modernHeaders("tools/call", "change_prompts")))
	ev, _ := tools.next()
	if m := decodeLine(t, ev.data+"\n"); m.Method != "notifications/tools/list_changed" || field(t, m.Params, "_meta", "io.modelcontextprotocol/subscriptionId") != "t" {
		t.Fatalf("tools stream got %s", ev.data)
	}
	ev, _ = prompts.next()
	if m := decodeLine(t, ev.data+"\n"); m.Method != "notifications/prompts/list_changed" {
		t.Fatalf("prompts stream got %s (filter not honoured?)", ev.data)
	}
	// Closing a listen stream ends it; the server keeps serving.
	toolsResp.Body.Close()
	lastMsg(t, e.post(modernBody(3, "tools/call", map[string]any{"name": "change_tools"}, nil), modernHeaders("tools/call", "change_tools")))
	// Closing the server ends the other with a completion result.
	e.srv.Close()
	for {
		ev, ok := prompts.next()
		if !ok {
			t.Fatal("no completion result")
		}
		m := decodeLine(t, ev.data+"\n")
		if m.isResponse() {
			if string(m.ID) != `"p"` || field(t, m.Result, "resultType") != "complete" {
				t.Fatalf("end = %s", m.raw)
			}
			return
		}
	}
}

func TestHTTPModernNotification(t *testing.T) {
	e := startHTTP(t, nil, nil)
	resp := e.post(notification("notifications/cancelled", map[string]any{"requestId": 1}), modernHeaders("notifications/cancelled", ""))
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || len(b) != 0 {
		t.Fatalf("notification: %d %q", resp.StatusCode, b)
	}
}
