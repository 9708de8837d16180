package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcp/mcptest"
)

func TestStdioInitializeNegotiation(t *testing.T) {
	tests := []struct{ client, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"1999-01-01", "2025-11-25"},
	}
	for _, tt := range tests {
		t.Run(tt.client, func(t *testing.T) {
			c := startStdio(t, nil, &mcp.Options{Name: "n", Version: "v", Instructions: "be nice"})
			res := c.initialize(tt.client, nil)
			if got := field(t, res.Result, "protocolVersion"); got != tt.want {
				t.Fatalf("protocolVersion = %v, want %s", got, tt.want)
			}
			if got := field(t, res.Result, "serverInfo", "name"); got != "n" {
				t.Errorf("serverInfo.name = %v", got)
			}
			if got := field(t, res.Result, "instructions"); got != "be nice" {
				t.Errorf("instructions = %v", got)
			}
			caps := field(t, res.Result, "capabilities").(map[string]any)
			for _, k := range []string{"tools", "resources", "prompts", "logging", "completions"} {
				if caps[k] == nil {
					t.Errorf("capability %s missing in %v", k, caps)
				}
			}
			if got := field(t, res.Result, "capabilities", "resources", "subscribe"); got != true {
				t.Errorf("resources.subscribe = %v", got)
			}
			// A second initialize is refused; the session keeps working.
			again, _ := c.rpc(2, "initialize", map[string]any{"protocolVersion": tt.client, "capabilities": map[string]any{}})
			wantError(t, again, jsonrpc.CodeInvalidRequest)
			pong, _ := c.rpc(3, "ping", nil)
			if string(pong.Result) != "{}" {
				t.Fatalf("ping result = %s", pong.Result)
			}
		})
	}
}

func TestStdioBeforeInitialize(t *testing.T) {
	c := startStdio(t, nil, nil)
	pong, _ := c.rpc(1, "ping", nil)
	if string(pong.Result) != "{}" {
		t.Fatalf("ping before initialize = %s", pong.raw)
	}
	res, _ := c.rpc(2, "tools/list", nil)
	wantError(t, res, jsonrpc.CodeInvalidRequest)
	bad, _ := c.rpc(3, "initialize", map[string]any{"protocolVersion": 5})
	wantError(t, bad, jsonrpc.CodeInvalidParams)
	c.initialize("2025-11-25", nil)
	res, _ = c.rpc(4, "tools/list", nil)
	wantResult(t, res)
}

func TestStdioToolsAndErrors(t *testing.T) {
	c := startStdio(t, nil, nil)
	c.initialize("2025-06-18", nil)
	tests := []struct {
		name   string
		params any
		code   int    // expected error code, 0 for a result
		text   string // expected first text content
		isErr  bool
	}{
		{name: "echo default", params: map[string]any{"name": "echo"}, text: "hello"},
		{name: "echo text", params: map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi\nthere ✓"}}, text: "hi\nthere ✓"},
		{name: "add", params: map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 40}}, text: "42"},
		{name: "tool error passes through", params: map[string]any{"name": "fail"}, text: "this tool always fails", isErr: true},
		{name: "unknown tool", params: map[string]any{"name": "nope"}, code: jsonrpc.CodeInvalidParams},
		{name: "panic recovered", params: map[string]any{"name": "panic"}, code: jsonrpc.CodeInternalError},
		{name: "go error hidden", params: map[string]any{"name": "broken"}, code: jsonrpc.CodeInternalError},
		{name: "invalid provider JSON", params: map[string]any{"name": "bad_json"}, code: jsonrpc.CodeInternalError},
		{name: "params array", params: []any{1}, code: jsonrpc.CodeInvalidParams},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			res, _ := c.rpc(100+i, "tools/call", tt.params)
			if tt.code != 0 {
				wantError(t, res, tt.code)
				if tt.code == jsonrpc.CodeInternalError && res.Error.Message != "internal error" {
					t.Errorf("internal error leaks details: %q", res.Error.Message)
				}
				return
			}
			wantResult(t, res)
			if got := textOf(t, res.Result); got != tt.text {
				t.Errorf("text = %q, want %q", got, tt.text)
			}
			if got := field(t, res.Result, "isError") == true; got != tt.isErr {
				t.Errorf("isError = %v", got)
			}
			if field(t, res.Result, "resultType") != nil {
				t.Errorf("legacy result carries resultType: %s", res.Result)
			}
		})
	}
	c.t = t
	unknown, _ := c.rpc(200, "no/such/method", nil)
	wantError(t, unknown, jsonrpc.CodeMethodNotFound)
}

func TestStdioPagination(t *testing.T) {
	c := startStdio(t, &mcptest.Options{ExtraTools: 250}, &mcp.Options{PageSize: 100})
	c.initialize("2025-11-25", nil)
	var names []string
	cursor := any(nil)
	for page := 0; ; page++ {
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		res, _ := c.rpc(page+1, "tools/list", params)
		wantResult(t, res)
		var lr struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(res.Result, &lr); err != nil {
			t.Fatal(err)
		}
		for _, tl := range lr.Tools {
			names = append(names, tl.Name)
		}
		if lr.NextCursor == nil {
			break
		}
		if len(lr.Tools) != 100 {
			t.Fatalf("page %d has %d tools", page, len(lr.Tools))
		}
		cursor = *lr.NextCursor
	}
	tools, _ := c.prov.Tools(t.Context(), nil)
	if len(names) != len(tools) {
		t.Fatalf("paged %d tools, want %d", len(names), len(tools))
	}
	for i, tl := range tools {
		if !strings.Contains(string(tl), `"name":"`+names[i]+`"`) {
			t.Fatalf("tool %d = %s, order broken", i, names[i])
		}
	}
	for i, bad := range []any{"!!!", "b2Zmc2V0", 12, "bzEyYQ"} {
		res, _ := c.rpc(1000+i, "tools/list", map[string]any{"cursor": bad})
		wantError(t, res, jsonrpc.CodeInvalidParams)
	}
	for i, m := range []string{"resources/list", "resources/templates/list", "prompts/list"} {
		res, _ := c.rpc(2000+i, m, map[string]any{"cursor": "!!"})
		wantError(t, res, jsonrpc.CodeInvalidParams)
		res, _ = c.rpc(3000+i, m, nil)
		wantResult(t, res)
		if field(t, res.Result, "nextCursor") != nil {
			t.Errorf("%s: nextCursor on the last page", m)
		}
	}
}

func TestStdioProgress(t *testing.T) {
	c := startLegacy(t)
	for _, token := range []any{"tok-1", 77, "123456789012345678901234567890"} {
		res, before := c.rpc(mustJSON(token), "tools/call", map[string]any{
			"name": "progress", "arguments": map[string]any{"steps": 4}, "_meta": map[string]any{"progressToken": token},
		})
		wantResult(t, res)
		if len(before) != 4 {
			t.Fatalf("token %v: %d notifications before the result, want 4: %v", token, len(before), before)
		}
		last := 0.0
		for _, n := range before {
			if n.Method != "notifications/progress" {
				t.Fatalf("unexpected %s", n.raw)
			}
			var p struct {
				Token    json.RawMessage `json:"progressToken"`
				Progress float64         `json:"progress"`
				Total    float64         `json:"total"`
			}
			_ = json.Unmarshal(n.Params, &p)
			if string(p.Token) != mustJSON(token) {
				t.Errorf("token %s, want %s", p.Token, mustJSON(token))
			}
			if p.Progress <= last || p.Total != 4 {
				t.Errorf("progress %v after %v (total %v)", p.Progress, last, p.Total)
			}
			last = p.Progress
		}
	}
	// Without a token: no notifications.
	res, before := c.rpc(9, "tools/call", map[string]any{"name": "progress"})
	wantResult(t, res)
	if len(before) != 0 {
		t.Fatalf("progress without a token: %v", before[0].raw)
	}
}

func TestStdioLogging(t *testing.T) {
	c := startLegacy(t)
	res, before := c.rpc(1, "tools/call", map[string]any{"name": "log"})
	wantResult(t, res)
	if len(before) != 0 {
		t.Fatalf("logs before setLevel: %v", before[0].raw)
	}
	bad, _ := c.rpc(2, "logging/setLevel", map[string]any{"level": "loud"})
	wantError(t, bad, jsonrpc.CodeInvalidParams)
	ok, _ := c.rpc(3, "logging/setLevel", map[string]any{"level": "error"})
	wantResult(t, ok)
	res, before = c.rpc(4, "tools/call", map[string]any{"name": "log"})
	wantResult(t, res)
	var levels []string
	for _, n := range before {
		if n.Method != "notifications/message" {
			t.Fatalf("unexpected %s", n.raw)
		}
		levels = append(levels, field(t, n.Params, "level").(string))
		if field(t, n.Params, "logger") != "mcptest" || field(t, n.Params, "data", "level") == nil {
			t.Errorf("bad log params %s", n.Params)
		}
	}
	if strings.Join(levels, ",") != "error,critical,alert,emergency" {
		t.Fatalf("levels = %v", levels)
	}
}

func TestStdioCancellation(t *testing.T) {
	c := startStdio(t, nil, nil)
	started := make(chan string, 8)
	c.prov.Started = started
	c.initialize("2025-11-25", nil)
	c.send(request("slow-1", "tools/call", map[string]any{"name": "slow"}))
	if name := <-started; name != "slow" {
		t.Fatalf("started %s", name)
	}
	c.send(notification("notifications/cancelled", map[string]any{"requestId": "slow-1", "reason": "test"}))
	// Unknown and malformed cancellations are ignored.
	c.send(notification("notifications/cancelled", map[string]any{"requestId": "nope"}))
	c.send(notification("notifications/cancelled", map[string]any{"requestId": map[string]any{}}))
	before := c.pingBarrier("after")
	for _, m := range before {
		t.Errorf("unexpected message after cancellation: %s", m.raw)
	}
	if len(c.queue) != 0 {
		t.Fatalf("cancelled request answered: %s", c.queue[0].raw)
	}
	// The id is free again.
	c.send(request("slow-1", "tools/call", map[string]any{"name": "echo"}))
	res, _ := c.await("slow-1")
	wantResult(t, res)
}

func TestStdioDuplicateID(t *testing.T) {
	c, _ := slowCall(t, nil, 5)
	dup, _ := c.rpc(5, "ping", nil)
	wantError(t, dup, jsonrpc.CodeInvalidRequest)
	c.send(notification("notifications/cancelled", map[string]any{"requestId": 5}))
	c.pingBarrier(6)
}

// elicitCall opens a 2025-11-25 session declaring elicitation and sends
// request 1, a call of the elicit tool with args.
func elicitCall(t *testing.T, args map[string]any) *stdioClient {
	t.Helper()
	c := startStdio(t, nil, nil)
	c.initialize("2025-11-25", map[string]any{"elicitation": map[string]any{}})
	params := map[string]any{"name": "elicit"}
	if args != nil {
		params["arguments"] = args
	}
	c.send(request(1, "tools/call", params))
	return c
}

func TestStdioElicitation(t *testing.T) {
	t.Run("answered", func(t *testing.T) {
		c := elicitCall(t, map[string]any{"message": "name?"})
		req := c.next()
		if req.Method != "elicitation/create" || req.ID == nil {
			t.Fatalf("want elicitation/create request, got %s", req.raw)
		}
		if field(t, req.Params, "message") != "name?" {
			t.Errorf("params %s", req.Params)
		}
		// A response for an unknown id is ignored.
		c.send(`{"jsonrpc":"2.0","id":999999,"result":{}}`)
		c.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"action":"accept","content":{"name":"Bob"}}}`)
		res, _ := c.await(1)
		wantResult(t, res)
		if got := textOf(t, res.Result); got != "hello Bob" {
			t.Fatalf("text = %q", got)
		}
	})
	t.Run("client error", func(t *testing.T) {
		c := elicitCall(t, nil)
		req := c.next()
		c.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"error":{"code":-1,"message":"user said no"}}`)
		res, _ := c.await(1)
		if got := textOf(t, res.Result); got != "elicitation failed: user said no" {
			t.Fatalf("text = %q", got)
		}
	})
	t.Run("undeclared capability", func(t *testing.T) {
		c := startLegacy(t)
		res, before := c.rpc(1, "tools/call", map[string]any{"name": "elicit"})
		if len(before) != 0 {
			t.Fatalf("server sent %s without the capability", before[0].raw)
		}
		if got := textOf(t, res.Result); got != "elicitation unavailable" {
			t.Fatalf("text = %q", got)
		}
	})
	t.Run("input closed while waiting", func(t *testing.T) {
		c := elicitCall(t, nil)
		if req := c.next(); req.Method != "elicitation/create" {
			t.Fatalf("got %s", req.raw)
		}
		c.in.Close()
		if err := <-c.done; err != nil {
			t.Fatalf("ServeStdio = %v", err)
		}
		c.done <- nil
	})
}

func TestStdioResourcesAndSubscriptions(t *testing.T) {
	c := startLegacy(t)
	res, _ := c.rpc(1, "resources/read", map[string]any{"uri": "test://static-text"})
	wantResult(t, res)
	if field(t, res.Result, "resultType") != nil || field(t, res.Result, "ttlMs") != nil {
		t.Errorf("legacy read carries modern fields: %s", res.Result)
	}
	missing, _ := c.rpc(2, "resources/read", map[string]any{"uri": "test://missing"})
	wantError(t, missing, jsonrpc.CodeResourceNotFound)
	tpl, _ := c.rpc(3, "resources/read", map[string]any{"uri": "test://template/123/data"})
	wantResult(t, tpl)

	bad, _ := c.rpc(4, "resources/subscribe", map[string]any{})
	wantError(t, bad, jsonrpc.CodeInvalidParams)
	sub, _ := c.rpc(5, "resources/subscribe", map[string]any{"uri": "test://watched"})
	wantResult(t, sub)
	_, before := c.rpc(6, "tools/call", map[string]any{"name": "touch", "arguments": map[string]any{"uri": "test://watched"}})
	// The notification may race the response; collect until the barrier.
	before = append(before, c.pingBarrier(7)...)
	if len(before) != 1 || before[0].Method != "notifications/resources/updated" || field(t, before[0].Params, "uri") != "test://watched" {
		t.Fatalf("want one resources/updated, got %v", before)
	}
	_, before = c.rpc(8, "tools/call", map[string]any{"name": "touch", "arguments": map[string]any{"uri": "test://other"}})
	before = append(before, c.pingBarrier(9)...)
	if len(before) != 0 {
		t.Fatalf("update for an unsubscribed uri: %s", before[0].raw)
	}
	unsub, _ := c.rpc(10, "resources/unsubscribe", map[string]any{"uri": "test://watched"})
	wantResult(t, unsub)
	_, before = c.rpc(11, "tools/call", map[string]any{"name": "touch", "arguments": map[string]any{"uri": "test://watched"}})
	before = append(before, c.pingBarrier(12)...)
	if len(before) != 0 {
		t.Fatalf("update after unsubscribe: %s", before[0].raw)
	}
}

func TestStdioListChanged(t *testing.T) {
	c := startLegacy(t)
	_, before := c.rpc(1, "tools/call", map[string]any{"name": "change_tools"})
	before = append(before, c.pingBarrier(2)...)
	if len(before) != 1 || before[0].Method != "notifications/tools/list_changed" {
		t.Fatalf("want tools/list_changed, got %v", before)
	}
	res, _ := c.rpc(3, "tools/list", nil)
	if !strings.Contains(string(res.Result), `"transient"`) {
		t.Fatal("transient tool not listed after the change")
	}
	_, before = c.rpc(4, "tools/call", map[string]any{"name": "change_prompts"})
	before = append(before, c.pingBarrier(5)...)
	if len(before) != 1 || before[0].Method != "notifications/prompts/list_changed" {
		t.Fatalf("want prompts/list_changed, got %v", before)
	}
}

func TestStdioPromptsAndCompletion(t *testing.T) {
	c := startLegacy(t)
	res, _ := c.rpc(1, "prompts/get", map[string]any{"name": "with_args", "arguments": map[string]any{"arg1": "x"}})
	wantResult(t, res)
	if !strings.Contains(string(res.Result), "arg1=x") {
		t.Errorf("prompt = %s", res.Result)
	}
	res, _ = c.rpc(2, "prompts/get", map[string]any{"name": "with_args"})
	wantError(t, res, jsonrpc.CodeInvalidParams)
	res, _ = c.rpc(3, "completion/complete", map[string]any{
		"ref": map[string]any{"type": "ref/prompt", "name": "with_args"}, "argument": map[string]any{"name": "arg1", "value": "al"}})
	wantResult(t, res)
	if got := mustJSON(field(t, res.Result, "completion", "values")); got != `["alpha","alpine"]` {
		t.Errorf("values = %s", got)
	}
}

func TestStdioFeaturesOff(t *testing.T) {
	c := startStdio(t, &mcptest.Options{Features: &mcp.Features{Tools: true}}, nil)
	res := c.initialize("2025-11-25", nil)
	caps := field(t, res.Result, "capabilities").(map[string]any)
	if caps["resources"] != nil || caps["prompts"] != nil || caps["completions"] != nil {
		t.Fatalf("capabilities = %v", caps)
	}
	for i, m := range []string{"resources/list", "resources/read", "prompts/list", "prompts/get", "completion/complete", "resources/subscribe"} {
		r, _ := c.rpc(i+1, m, map[string]any{"uri": "x", "name": "x"})
		wantError(t, r, jsonrpc.CodeMethodNotFound)
	}
	_, before := c.rpc(50, "tools/call", map[string]any{"name": "change_tools"})
	before = append(before, c.pingBarrier(51)...)
	if len(before) != 0 {
		t.Fatalf("list_changed without the capability: %s", before[0].raw)
	}
}

func TestStdioBatches(t *testing.T) {
	batch := `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}},5]`
	t.Run("2025-03-26", func(t *testing.T) {
		c := startStdio(t, nil, nil)
		c.initialize("2025-03-26", nil)
		c.send(batch)
		m := c.next()
		var arr []map[string]any
		if err := json.Unmarshal([]byte(m.raw), &arr); err != nil {
			t.Fatalf("want an array, got %s", m.raw)
		}
		got := map[string]bool{}
		for _, r := range arr {
			switch {
			case r["result"] != nil:
				got["result "+mustJSON(r["id"])] = true
			case r["error"] != nil:
				got["error "+mustJSON(r["id"])] = true
			}
		}
		want := []string{"result 1", "result 2", "error 3", "error null"}
		for _, w := range want {
			if !got[w] {
				t.Errorf("missing %q in %s", w, m.raw)
			}
		}
		if len(arr) != len(want) {
			t.Errorf("%d responses, want %d: %s", len(arr), len(want), m.raw)
		}
		c.send(`[{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
		c.send(`[]`)
		empty := c.next()
		wantError(t, empty, jsonrpc.CodeInvalidRequest)
	})
	for _, v := range []string{"2025-06-18", "2025-11-25", ""} {
		t.Run("refused "+v, func(t *testing.T) {
			c := startStdio(t, nil, nil)
			if v != "" {
				c.initialize(v, nil)
			}
			c.send(batch)
			wantError(t, c.next(), jsonrpc.CodeInvalidRequest)
		})
	}
}

func TestStdioMalformedInput(t *testing.T) {
	c := startStdio(t, nil, &mcp.Options{MaxMessageBytes: 1 << 20})
	c.initialize("2025-11-25", nil)
	tests := []struct {
		name string
		line string
		code int
		id   string
	}{
		{"truncated", `{"jsonrpc":"2.0","id":1,"method":"tools/li`, jsonrpc.CodeParseError, "null"},
		{"binary garbage", "\x00\x01\x02\xff\xfe", jsonrpc.CodeParseError, "null"},
		{"invalid utf-8", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xc3\x28\"}}", jsonrpc.CodeParseError, "null"},
		{"deep nesting", strings.Repeat("[", 100000), jsonrpc.CodeParseError, "null"},
		{"deep object nesting", `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000) + "}", jsonrpc.CodeParseError, "null"},
		{"not an object", `"hello"`, jsonrpc.CodeInvalidRequest, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":7,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "7"},
		{"id null", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"id bool", `{"jsonrpc":"2.0","id":true,"method":"ping"}`, jsonrpc.CodeInvalidRequest, "null"},
		{"method number", `{"jsonrpc":"2.0","id":8,"method":1}`, jsonrpc.CodeInvalidRequest, "8"},
		{"params string", `{"jsonrpc":"2.0","id":9,"method":"tools/list","params":"x"}`, jsonrpc.CodeInvalidRequest, "9"},
		{"wrong param types", `{"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"cursor":{"a":1}}}`, jsonrpc.CodeInvalidParams, "10"},
		{"setLevel wrong type", `{"jsonrpc":"2.0","id":11,"method":"logging/setLevel","params":{"level":3}}`, jsonrpc.CodeInvalidParams, "11"},
		{"too long", `{"jsonrpc":"2.0","id":12,"method":"ping","params":{"x":"` + strings.Repeat("a", 2<<20) + `"}}`, jsonrpc.CodeInvalidRequest, "null"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.t = t
			c.send(tt.line)
			m := c.next()
			wantError(t, m, tt.code)
			if got := string(m.ID); (got == "" && tt.id != "null") || (got != "" && got != tt.id) {
				t.Errorf("id = %q, want %s", got, tt.id)
			}
		})
	}
	c.t = t
	// Unknown fields and huge ids are fine.
	c.send(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping","extra":{"x":[1]},"params":{"unknown":true}}`)
	m := c.next()
	if string(m.ID) != "123456789012345678901234567890" || string(m.Result) != "{}" {
		t.Fatalf("huge id answer = %s", m.raw)
	}
	// Blank lines and CRLF are tolerated.
	c.send("")
	c.send(`{"jsonrpc":"2.0","id":"crlf","method":"ping"}` + "\r")
	if m := c.next(); string(m.ID) != `"crlf"` {
		t.Fatalf("crlf = %s", m.raw)
	}
	// Still serving.
	res, _ := c.rpc(99, "tools/call", map[string]any{"name": "echo"})
	wantResult(t, res)
}

func TestStdioEOFFinishesInFlight(t *testing.T) {
	c := startLegacy(t)
	for i := range 20 {
		c.send(request(i, "tools/call", map[string]any{"name": "big", "arguments": map[string]any{"n": 10000}}))
	}
	c.in.Close()
	seen := map[string]bool{}
	for range 20 {
		m := c.next()
		wantResult(t, m)
		seen[string(m.ID)] = true
	}
	if len(seen) != 20 {
		t.Fatalf("answered %d distinct requests", len(seen))
	}
	if err := <-c.done; err != nil {
		t.Fatalf("ServeStdio = %v", err)
	}
	c.done <- nil
}

func TestStdioServerClose(t *testing.T) {
	c, _ := slowCall(t, nil, 1)
	c.srv.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("ServeStdio after Close = %v", err)
	}
	c.done <- nil
}
