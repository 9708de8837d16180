package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/runtime"
)

// forEachSDK runs f once per SDK fixture, in parallel subtests.
func forEachSDK(t *testing.T, f func(t *testing.T, p *runtime.Pool)) {
	forEachSDKWith(t, runtime.Limits{}, f)
}

// forEachSDKWith is forEachSDK with pools of the given limits.
func forEachSDKWith(t *testing.T, l runtime.Limits, f func(t *testing.T, p *runtime.Pool)) {
	langs := make([]string, 0, len(fixtures))
	for l := range fixtures {
		langs = append(langs, l)
	}
	sort.Strings(langs)
	for _, lang := range langs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			f(t, newPool(t, fixtures[lang], l))
		})
	}
}

func TestDescribe(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		status, m := call(t, p, nil, envelope("wasmcp/describe", obj{}, nil))
		if status != 0 {
			t.Fatalf("status %d: %v", status, m)
		}
		if fmt.Sprint(m["abi"]) != "1" || m["name"] != "fixture" || m["version"] != "0.0.1" || m["completions"] != true {
			t.Errorf("manifest header: %v", m)
		}
		var names []string
		for _, tl := range m["tools"].([]any) {
			tool := tl.(obj)
			names = append(names, tool["name"].(string))
			if _, ok := tool["inputSchema"].(obj); !ok {
				t.Errorf("tool %v has no inputSchema object", tool["name"])
			}
		}
		want := []string{"echo", "config", "kv", "http", "notify", "confirm", "big", "rpc_error", "roundtrip", "task"}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("tools = %v, want %v", names, want)
		}
		res := m["resources"].([]any)[0].(obj)
		tmpl := m["resourceTemplates"].([]any)[0].(obj)
		prompt := m["prompts"].([]any)[0].(obj)
		if res["uri"] != "fixture://static" || res["mimeType"] != "text/plain" || tmpl["uriTemplate"] != "fixture://item/{id}" ||
			prompt["name"] != "greet" || prompt["arguments"].([]any)[0].(obj)["required"] != true {
			t.Errorf("resources/templates/prompts: %v %v %v", res, tmpl, prompt)
		}
		caps := m["capabilities"].(obj)
		if caps["kv"] != true || caps["http"].([]any)[0] != "https://example.com/" {
			t.Errorf("capabilities = %v", caps)
		}
	})
}

func TestToolResults(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		const s = "héllo \"q\"\n\t\\ 😀 \u0001"
		got, sc := toolText(t, p, nil, "echo", obj{"text": s})
		if got != s || sc["text"] != s || sc["protocolVersion"] != "2025-11-25" {
			t.Errorf("echo: text %q, structured %v", got, sc)
		}
		if msg := toolError(t, p, nil, "echo", obj{}); msg != "text is required" {
			t.Errorf("echo without text: %q", msg)
		}
		// No context at all: protocolVersion is absent or null, not an error.
		status, r := call(t, p, nil, []byte(`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`))
		if status != 0 || text(t, r) != "x" {
			t.Errorf("echo without context: %d %v", status, r)
		}
	})
}

// TestJSONRoundTrip sends random numbers and strings through each SDK's
// JSON parser and serializer: numbers must come back as the same float64
// (bit for bit, except that -0 may become 0) and strings unchanged.
func TestJSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var numbers []float64
	for len(numbers) < 1500 {
		f := math.Float64frombits(rng.Uint64())
		if !math.IsNaN(f) && !math.IsInf(f, 0) {
			numbers = append(numbers, f)
		}
	}
	numbers = append(numbers, 0, 1, -1, 0.1+0.2, 1e21, 1e-7, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		2.2250738585072014e-308, 9007199254740993, -9007199254740992, 5e-324, 1.7976931348623157e308, 0.5, 1e300*1e8/1e8)
	for range 300 {
		numbers = append(numbers, rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)))
	}
	var strs []string
	pool := []rune("aZ09 \"\\/\b\f\n\r\t\u0000\u0001\u001f\u007f\u0080é€\u2028\u2029\ufeff😀𝄞\uffff")
	for range 200 {
		r := make([]rune, rng.IntN(20))
		for i := range r {
			r[i] = pool[rng.IntN(len(pool))]
		}
		strs = append(strs, string(r))
	}
	// A generous deadline: the AssemblyScript fixture takes seconds for
	// these 1,816 numbers on a loaded machine (its exact float parser and
	// printer work on big integers), and more under -race.
	forEachSDKWith(t, runtime.Limits{Timeout: 2 * time.Minute}, func(t *testing.T, p *runtime.Pool) {
		_, sc := toolText(t, p, nil, "roundtrip", obj{"numbers": numbers, "strings": strs})
		gotN, _ := sc["numbers"].([]any)
		gotS, _ := sc["strings"].([]any)
		if len(gotN) != len(numbers) || len(gotS) != len(strs) {
			t.Fatalf("got %d numbers and %d strings, want %d and %d", len(gotN), len(gotS), len(numbers), len(strs))
		}
		bad := 0
		for i, want := range numbers {
			f, err := strconv.ParseFloat(fmt.Sprint(gotN[i]), 64)
			if err != nil || (math.Float64bits(f) != math.Float64bits(want) && !(f == 0 && want == 0)) {
				if bad++; bad <= 5 {
					t.Errorf("number %v came back as %v", want, gotN[i])
				}
			}
		}
		for i, want := range strs {
			if gotS[i] != want {
				if bad++; bad <= 10 {
					t.Errorf("string %q came back as %q", want, gotS[i])
				}
			}
		}
	})
}

func TestErrors(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		status, e := tool(t, p, nil, "rpc_error", obj{})
		if status != 1 || fmt.Sprint(e["code"]) != "-32602" || e["message"] != "bad thing" || e["data"].(obj)["why"] != "test" {
			t.Errorf("rpc_error: %d %v", status, e)
		}
		status, e = tool(t, p, nil, "nope", obj{})
		if status != 1 || fmt.Sprint(e["code"]) != "-32602" {
			t.Errorf("unknown tool: %d %v", status, e)
		}
		status, e = call(t, p, nil, envelope("sampling/createMessage", obj{}, nil))
		if status != 1 || fmt.Sprint(e["code"]) != "-32601" {
			t.Errorf("unknown method: %d %v", status, e)
		}
		// Envelopes each SDK's JSON reader must refuse: -32600.
		deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
		for _, env := range []string{
			`{"method":`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x",}}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text" "x"}}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"]}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{1:"x"}}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","a":[1,2}}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","a":[1,]}}}`,
			`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"x","a":` + deep + `}}}`,
		} {
			status, e = call(t, p, nil, []byte(env))
			if status != 1 || fmt.Sprint(e["code"]) != "-32600" {
				t.Errorf("broken envelope %.60s: %d %v", env, status, e)
			}
		}
		// The same readers take nested objects and arrays, empty or not.
		status, r := call(t, p, nil, []byte(`{"method":"tools/call","params":{"name":"echo","arguments":{"a":{},"b":[],"c":[{"d":[1,{}]}],"text":"ok"}}}`))
		if status != 0 || text(t, r) != "ok" {
			t.Errorf("nested arguments: %d %v", status, r)
		}
	})
}

// TestHostMethods checks every host call wrapper: the params the SDK sends,
// how it reads results, and that each errno surfaces as a typed error the
// plugin turns into a readable tool error.
func TestHostMethods(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		h := newHost(map[string]answer{"config/get": {result: `{"value":"hi there"}`}})
		if got, _ := toolText(t, p, h, "config", obj{"key": "greeting"}); got != "hi there" {
			t.Errorf("config: %q", got)
		}
		calls, _ := h.seen()
		if len(calls) != 1 || calls[0].Method != "config/get" || calls[0].Params["key"] != "greeting" {
			t.Errorf("config calls: %v", calls)
		}

		for errno, want := range map[int32]string{
			-1: "config/get failed: denied (not granted by the operator)",
			-2: "config/get failed: bad params",
			-3: "config/get failed: canceled or past the deadline",
			-4: "config/get failed: too big",
			-6: "config/get failed: unsupported by this client or connection",
			-7: "config/get failed: unknown method",
		} {
			h := newHost(map[string]answer{"config/get": {errno: errno}})
			if got := toolError(t, p, h, "config", obj{"key": "greeting"}); got != want {
				t.Errorf("errno %d: %q, want %q", errno, got, want)
			}
		}
		h = newHost(map[string]answer{"config/get": {errno: -5, result: `{"code":404,"message":"no such key"}`}})
		if got := toolError(t, p, h, "config", obj{"key": "greeting"}); got != "config/get failed: no such key (code 404)" {
			t.Errorf("errno -5: %q", got)
		}

		h = newHost(nil)
		if got, _ := toolText(t, p, h, "kv", obj{"key": "k1", "value": "v1 ü"}); got != "v1 ü keys=1 after_delete=0" {
			t.Errorf("kv: %q", got)
		}
		calls, _ = h.seen()
		var methods []string
		for _, c := range calls {
			methods = append(methods, c.Method)
		}
		if strings.Join(methods, " ") != "kv/set kv/get kv/list kv/delete kv/get" || fmt.Sprint(calls[0].Params["ttl_s"]) != "60" ||
			calls[0].Params["value"] != "v1 ü" {
			t.Errorf("kv calls: %v", calls)
		}
		h = newHost(map[string]answer{"kv/set": {errno: -1}})
		if got := toolError(t, p, h, "kv", obj{"key": "k", "value": "v"}); got != "kv/set failed: denied (not granted by the operator)" {
			t.Errorf("kv denied: %q", got)
		}

		for _, res := range []string{`{"status":200,"headers":{"a":"b"},"body":"pong"}`, `{"status":200,"headers":{},"body_base64":"cG9uZw=="}`} {
			h = newHost(map[string]answer{"http/fetch": {result: res}})
			if got, _ := toolText(t, p, h, "http", obj{"url": "https://example.com/x"}); got != "200 pong" {
				t.Errorf("http %s: %q", res, got)
			}
			calls, _ = h.seen()
			cp := calls[0].Params
			if cp["method"] != "POST" || cp["url"] != "https://example.com/x" || cp["body"] != "ping" || cp["headers"].(obj)["x-test"] != "1" {
				t.Errorf("http params: %v", cp)
			}
		}
		h = newHost(map[string]answer{"http/fetch": {errno: -5, result: `{"code":-32603,"message":"connection refused"}`}})
		if got := toolError(t, p, h, "http", obj{"url": "https://example.com/x"}); got != "http/fetch failed: connection refused (code -32603)" {
			t.Errorf("http failed: %q", got)
		}
		h = newHost(map[string]answer{"http/fetch": {result: `{"status":200,"body":`}})
		if got := toolError(t, p, h, "http", obj{"url": "https://example.com/x"}); !strings.Contains(got, "http/fetch failed: unexpected answer from the host") {
			t.Errorf("http with a broken answer: %q", got)
		}

		h = newHost(map[string]answer{
			"progress": {result: `{}`}, "log": {result: `{}`},
			"notify/list_changed": {result: `{}`}, "notify/resource_updated": {result: `{}`},
		})
		if got, _ := toolText(t, p, h, "notify", obj{}); got != "ok" {
			t.Errorf("notify: %q", got)
		}
		calls, logs := h.seen()
		if len(logs) != 1 || logs[0] != (logLine{3, "fast log line"}) {
			t.Errorf("logs: %v", logs)
		}
		want := []hostCall{
			{"progress", obj{"progress": json.Number("1"), "total": json.Number("2"), "message": "half"}},
			{"log", obj{"level": "info", "logger": "fixture", "data": obj{"k": json.Number("1")}}},
			{"notify/list_changed", obj{"kind": "tools"}},
			{"notify/resource_updated", obj{"uri": "fixture://static"}},
		}
		if fmt.Sprint(calls) != fmt.Sprint(want) {
			t.Errorf("notify calls:\n got %v\nwant %v", calls, want)
		}
	})
}

func TestInputRequired(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		status, r := tool(t, p, nil, "confirm", obj{})
		if status != 0 || r["resultType"] != "input_required" || r["requestState"] != "step-1" {
			t.Fatalf("first call: %d %v", status, r)
		}
		req := r["inputRequests"].(obj)["confirm"].(obj)
		params := req["params"].(obj)
		if req["method"] != "elicitation/create" || params["message"] != "Proceed?" || params["requestedSchema"].(obj)["type"] != "object" {
			t.Errorf("input request: %v", req)
		}
		ctx := obj{
			"protocolVersion": "2025-11-25",
			"inputResponses":  obj{"confirm": obj{"action": "accept", "content": obj{"ok": true}}},
			"requestState":    "step-1",
		}
		status, r = call(t, p, nil, envelope("tools/call", obj{"name": "confirm", "arguments": obj{}}, ctx))
		if status != 0 || text(t, r) != "accept after step-1" {
			t.Errorf("second call: %d %v", status, r)
		}
	})
}

func TestResourcesPromptsCompletion(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		status, r := call(t, p, nil, envelope("resources/read", obj{"uri": "fixture://static"}, nil))
		c := r["contents"].([]any)[0].(obj)
		if status != 0 || c["uri"] != "fixture://static" || c["text"] != "static text" || c["mimeType"] != "text/plain" {
			t.Errorf("static: %d %v", status, r)
		}
		status, r = call(t, p, nil, envelope("resources/read", obj{"uri": "fixture://item/42"}, nil))
		cs := r["contents"].([]any)
		if status != 0 || len(cs) != 2 || cs[0].(obj)["text"] != "item 42" || cs[1].(obj)["blob"] != "NDI=" ||
			cs[1].(obj)["mimeType"] != "application/octet-stream" {
			t.Errorf("template: %d %v", status, r)
		}
		for _, uri := range []string{"fixture://item/", "fixture://item/1/2", "fixture://other"} {
			status, r = call(t, p, nil, envelope("resources/read", obj{"uri": uri}, nil))
			if status != 1 || fmt.Sprint(r["code"]) != "-32002" || r["data"].(obj)["uri"] != uri {
				t.Errorf("%s: %d %v", uri, status, r)
			}
		}

		status, r = call(t, p, nil, envelope("prompts/get", obj{"name": "greet", "arguments": obj{"name": "Ada"}}, nil))
		msg := r["messages"].([]any)[0].(obj)
		if status != 0 || r["description"] != "A greeting" || msg["role"] != "user" || msg["content"].(obj)["text"] != "Hello, Ada!" {
			t.Errorf("prompt: %d %v", status, r)
		}
		status, r = call(t, p, nil, envelope("prompts/get", obj{"name": "nope"}, nil))
		if status != 1 || fmt.Sprint(r["code"]) != "-32602" {
			t.Errorf("unknown prompt: %d %v", status, r)
		}

		params := obj{"ref": obj{"type": "ref/prompt", "name": "greet"}, "argument": obj{"name": "name", "value": "al"}}
		status, r = call(t, p, nil, envelope("completion/complete", params, nil))
		comp := r["completion"].(obj)
		if status != 0 || fmt.Sprint(comp["values"]) != "[alpha alphabet]" || fmt.Sprint(comp["total"]) != "2" {
			t.Errorf("completion: %d %v", status, r)
		}
	})
}

// TestOutputCap: the host traps the plugin on the first byte over the cap
// (a runtime error, the instance is discarded); with the SDK's soft limit
// the plugin answers a clean tool error instead.
func TestOutputCap(t *testing.T) {
	forEachSDK(t, func(t *testing.T, _ *runtime.Pool) {
		lang := strings.TrimPrefix(t.Name(), "TestOutputCap/")
		p := newPool(t, fixtures[lang], runtime.Limits{MaxOutput: 4096})
		if got, _ := toolText(t, p, nil, "big", obj{"n": 3000}); len(got) != 3000 {
			t.Errorf("under the cap: %d bytes", len(got))
		}
		_, _, err := p.Call(context.Background(), envelope("tools/call", obj{"name": "big", "arguments": obj{"n": 10000}}, nil), newHost(nil), nil)
		runtimeErr(t, err, runtime.KindOutput)
		got := toolError(t, p, nil, "big", obj{"n": 10000, "soft_limit": 2000})
		if !strings.HasPrefix(got, "result too large: ") || !strings.HasSuffix(got, " bytes over the plugin's limit of 2000") {
			t.Errorf("soft limit: %q", got)
		}
		// The instance that trapped was discarded; the pool still works.
		if got, _ := toolText(t, p, nil, "echo", obj{"text": "still fine"}); got != "still fine" {
			t.Errorf("after the trap: %q", got)
		}
		if st := p.Stats(); st.Discarded != 1 {
			t.Errorf("stats = %+v, want one discarded instance", st)
		}
	})
}

// TestManyCalls reuses one instance for many calls (allocations are freed
// between calls: linear memory must not keep growing).
func TestManyCalls(t *testing.T) {
	forEachSDK(t, func(t *testing.T, p *runtime.Pool) {
		h := newHost(nil)
		payload := strings.Repeat("abcdefghij", 200)
		for i := range 100 {
			if got, _ := toolText(t, p, h, "echo", obj{"text": payload}); got != payload {
				t.Fatalf("call %d: wrong echo", i)
			}
		}
		if st := p.Stats(); st.Created != 1 || st.Discarded != 0 || st.Recycled != 0 {
			t.Errorf("stats = %+v, want one instance reused", st)
		}
	})
}

// TestCLargeInput: the C SDK parses a request in the memory it has. Its
// parser guesses the node array's size (one node per 8 bytes) to parse in
// one pass; when the guess does not fit, it still parses, into an array of
// exactly the nodes counted. A tool that ignores its arguments answers
// for a string argument of most of the 4 MiB memory and for an array of
// 150,000 numbers (20 bytes a node: 3 MiB of nodes). The Rust and
// AssemblyScript fixtures need more memory for these.
func TestCLargeInput(t *testing.T) {
	p := newPool(t, fixtures["c"], runtime.Limits{Memory: 4 << 20, Instances: 1})
	for _, tc := range []struct {
		name string
		arg  any
	}{
		{"3 MiB string", strings.Repeat("a", 3<<20)},
		{"150000 numbers", json.RawMessage("[" + strings.Repeat("1,", 150000-1) + "1]")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, r := tool(t, p, nil, "rpc_error", obj{"x": tc.arg})
			if status != 1 || r["message"] != "bad thing" {
				t.Errorf("status %d, %v; want the tool's own error", status, r)
			}
		})
	}
}
