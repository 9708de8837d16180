package wasmcp_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

type weatherIn struct {
	City string `json:"city"`
	Days int    `json:"days"`
}

type weatherOut struct {
	City  string    `json:"city"`
	Highs []float64 `json:"highs"`
}

// testPlugin registers one of everything.
func testPlugin() *wasmcp.Plugin {
	p := wasmcp.New(wasmcp.Info{Name: "test", Version: "0.1.0", Description: "SDK test plugin",
		Capabilities: wasmcp.Capabilities{HTTP: []string{"https://api.example.com/"}, KV: true, Config: []string{"api_key"}}})
	wasmcp.AddTool(p, wasmcp.Tool{
		Name:        "forecast",
		Description: "Daily highs.",
		InputSchema: wasmcp.Object(
			wasmcp.Required("city", wasmcp.String("City name")),
			wasmcp.Optional("days", wasmcp.Integer("Days").With("minimum", 1).With("maximum", 16)),
		),
		OutputSchema: `{"type":"object","properties":{"city":{"type":"string"},"highs":{"type":"array","items":{"type":"number"}}},"required":["city","highs"]}`,
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true)},
	}, func(c *wasmcp.Context, in weatherIn) (weatherOut, error) {
		switch in.City {
		case "":
			return weatherOut{}, errors.New("city is required, e.g. \"Oslo\"")
		case "Atlantis":
			return weatherOut{}, wasmcp.NewRPCError(-32010, "no such city", map[string]string{"city": in.City})
		case "Panic":
			panic("boom")
		}
		out := weatherOut{City: in.City, Highs: []float64{}}
		for i := 0; i < in.Days; i++ {
			out.Highs = append(out.Highs, 20+float64(i))
		}
		return out, nil
	})
	wasmcp.AddTool(p, wasmcp.Tool{Name: "rich", InputSchema: json.RawMessage(`{"type":"object","x-mcp-header":"X"}`)},
		func(c *wasmcp.Context, _ struct{}) (*wasmcp.Result, error) {
			return wasmcp.NewResult(
				wasmcp.Text("hi"),
				wasmcp.Image([]byte{0x89, 'P', 'N', 'G'}, "image/png"),
				wasmcp.Audio([]byte("RIFF"), "audio/wav"),
				wasmcp.EmbeddedResource(wasmcp.TextContents("test://embedded", "text/plain", "inside")),
				wasmcp.ResourceLink(wasmcp.Resource{URI: "test://linked", Name: "linked", MIMEType: "text/plain"}),
			), nil
		})
	p.AddRawTool(wasmcp.Tool{Name: "raw"}, func(c *wasmcp.Context, args json.RawMessage) (*wasmcp.Result, error) {
		return wasmcp.TextResult(string(args)), nil
	})
	p.AddResource(wasmcp.Resource{URI: "test://static", Name: "static", MIMEType: "text/plain"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/plain", "static text")}, nil
		})
	p.AddResource(wasmcp.Resource{URI: "test://broken"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			return nil, errors.New("disk on fire")
		})
	p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "data"},
		func(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
			if r.Vars["id"] == "missing" {
				return nil, fmt.Errorf("record %s: %w", r.Vars["id"], wasmcp.ErrResourceNotFound)
			}
			return []wasmcp.ResourceContents{wasmcp.BlobContents(r.URI, "application/octet-stream", []byte(r.Vars["id"]))}, nil
		})
	p.AddPrompt(wasmcp.Prompt{Name: "greet", Arguments: []wasmcp.PromptArgument{{Name: "name", Required: true}, {Name: "style"}}},
		func(c *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
			return &wasmcp.PromptResult{Description: "greeting", Messages: []wasmcp.PromptMessage{
				wasmcp.UserMessage(wasmcp.Text("Greet " + args["name"] + " " + args["style"])),
			}}, nil
		})
	p.AddPromptCompletion("greet", func(c *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		return wasmcp.CompleteFrom([]string{"Ada", "Alan", "Grace"}, r.Value), nil
	})
	p.AddResourceCompletion("test://template/{id}/data", func(c *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
		var many []string
		for i := 0; i < 150; i++ {
			many = append(many, fmt.Sprintf("id%03d", i))
		}
		return &wasmcp.Completion{Values: many}, nil
	})
	return p
}

func ptr[T any](v T) *T { return &v }

func TestDescribeGolden(t *testing.T) {
	status, out := testPlugin().HandleWith(wasmcptest.NewHost(), []byte(`{"method":"wasmcp/describe","params":{},"context":{}}`))
	if status != wasmcp.StatusOK {
		t.Fatalf("status %d: %s", status, out)
	}
	var pretty strings.Builder
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	pretty.Write(b)
	pretty.WriteString("\n")
	const golden = "testdata/describe.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(pretty.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if pretty.String() != string(want) {
		t.Errorf("manifest differs from %s (go test -update after checking):\n%s", golden, pretty.String())
	}
}

func TestTools(t *testing.T) {
	s := wasmcptest.NewSession(testPlugin(), wasmcptest.NewHost())
	tests := []struct {
		name      string
		tool      string
		args      any
		wantText  string // first text block
		wantError bool   // isError
		wantRPC   int    // JSON-RPC error code
	}{
		{name: "structured", tool: "forecast", args: map[string]any{"city": "Oslo", "days": 2}, wantText: `{"city":"Oslo","highs":[20,21]}`},
		{name: "no arguments", tool: "forecast", args: nil, wantText: "city is required, e.g. \"Oslo\"", wantError: true},
		{name: "bad argument type", tool: "forecast", args: map[string]any{"city": "Oslo", "days": "two"},
			wantText: "invalid arguments: arguments.days: expected an integer, got string", wantError: true},
		{name: "arguments not an object", tool: "forecast", args: []int{1},
			wantText: "invalid arguments: arguments: expected an object, got array", wantError: true},
		{name: "rpc error", tool: "forecast", args: map[string]any{"city": "Atlantis"}, wantRPC: -32010},
		{name: "panic", tool: "forecast", args: map[string]any{"city": "Panic"}, wantText: "internal error: the handler panicked: boom", wantError: true},
		{name: "unknown tool", tool: "nope", wantRPC: wasmcp.CodeInvalidParams},
		{name: "raw", tool: "raw", args: map[string]any{"a": 1}, wantText: `{"a":1}`},
		{name: "raw without arguments", tool: "raw", wantText: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.tool == "forecast" && tt.name == "panic" {
				devnull, _ := os.Open(os.DevNull)
				old := os.Stderr
				os.Stderr = devnull
				defer func() { os.Stderr = old }()
			}
			r, err := s.CallTool(tt.tool, tt.args)
			if tt.wantRPC != 0 {
				var re *wasmcp.RPCError
				if !errors.As(err, &re) || re.Code != tt.wantRPC {
					t.Fatalf("CallTool = %v, %v; want JSON-RPC error %d", r, err, tt.wantRPC)
				}
				return
			}
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if r.IsError != tt.wantError || len(r.Content) == 0 || r.Content[0].Text != tt.wantText {
				t.Errorf("CallTool = %+v, want text %q isError %v", r, tt.wantText, tt.wantError)
			}
		})
	}
	r, err := s.CallTool("forecast", map[string]any{"city": "Oslo", "days": 1})
	if err != nil || string(r.StructuredContent.(json.RawMessage)) != `{"city":"Oslo","highs":[20]}` {
		t.Errorf("structuredContent = %v, %v", r, err)
	}
}

func TestRichContent(t *testing.T) {
	resp := wasmcptest.NewSession(testPlugin(), wasmcptest.NewHost()).Do("tools/call", map[string]any{"name": "rich"}, nil)
	want := `{"content":[{"type":"text","text":"hi"},{"type":"image","data":"iVBORw==","mimeType":"image/png"},` +
		`{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"},` +
		`{"type":"resource","resource":{"uri":"test://embedded","mimeType":"text/plain","text":"inside"}},` +
		`{"type":"resource_link","uri":"test://linked","name":"linked","mimeType":"text/plain"}]}`
	if resp.Status != 0 || string(resp.Output) != want {
		t.Errorf("got %d %s\nwant %s", resp.Status, resp.Output, want)
	}
	var r wasmcp.Result
	if err := json.Unmarshal(resp.Output, &r); err != nil || string(r.Content[1].Data) != "\x89PNG" || r.Content[4].Link.URI != "test://linked" {
		t.Errorf("round trip: %+v, %v", r, err)
	}
}

func TestResources(t *testing.T) {
	s := wasmcptest.NewSession(testPlugin(), wasmcptest.NewHost())
	tests := []struct {
		uri      string
		want     string
		wantCode int
	}{
		{uri: "test://static", want: `{"contents":[{"uri":"test://static","mimeType":"text/plain","text":"static text"}]}`},
		{uri: "test://template/a%20b/data", want: `{"contents":[{"uri":"test://template/a%20b/data","mimeType":"application/octet-stream","blob":"YSBi"}]}`},
		{uri: "test://template/missing/data", wantCode: wasmcp.CodeResourceNotFound},
		{uri: "test://template/x/y/data", wantCode: wasmcp.CodeResourceNotFound},
		{uri: "test://nothing", wantCode: wasmcp.CodeResourceNotFound},
		{uri: "test://broken", wantCode: wasmcp.CodeInternalError},
	}
	for _, tt := range tests {
		t.Run(tt.uri, func(t *testing.T) {
			resp := s.Do("resources/read", map[string]any{"uri": tt.uri}, nil)
			if tt.wantCode == 0 {
				if resp.Status != 0 || string(resp.Output) != tt.want {
					t.Errorf("got %d %s, want %s", resp.Status, resp.Output, tt.want)
				}
				return
			}
			var re *wasmcp.RPCError
			if err := resp.Decode(&struct{}{}); !errors.As(err, &re) || re.Code != tt.wantCode {
				t.Fatalf("got %d %s, want code %d", resp.Status, resp.Output, tt.wantCode)
			}
			if tt.wantCode == wasmcp.CodeResourceNotFound && !strings.Contains(string(resp.Output), `"data":{"uri":"`+tt.uri+`"}`) {
				t.Errorf("not-found error without data.uri: %s", resp.Output)
			}
		})
	}
}

func TestPromptsAndCompletion(t *testing.T) {
	s := wasmcptest.NewSession(testPlugin(), wasmcptest.NewHost())
	r, err := s.GetPrompt("greet", map[string]string{"name": "Ada"})
	if err != nil || len(r.Messages) != 1 || r.Messages[0].Content.Text != "Greet Ada " || r.Messages[0].Role != wasmcp.RoleUser {
		t.Errorf("GetPrompt = %+v, %v", r, err)
	}
	var re *wasmcp.RPCError
	if _, err := s.GetPrompt("greet", nil); !errors.As(err, &re) || re.Code != wasmcp.CodeInvalidParams || !strings.Contains(re.Message, "missing required arguments: name") {
		t.Errorf("missing argument: %v", err)
	}
	if _, err := s.GetPrompt("nope", nil); !errors.As(err, &re) || re.Code != wasmcp.CodeInvalidParams {
		t.Errorf("unknown prompt: %v", err)
	}
	c, err := s.CompletePrompt("greet", "name", "a")
	if err != nil || strings.Join(c.Values, ",") != "Ada,Alan" || c.Total != 2 || c.HasMore {
		t.Errorf("CompletePrompt = %+v, %v", c, err)
	}
	c, err = s.CompleteResource("test://template/{id}/data", "id", "")
	if err != nil || len(c.Values) != 100 || !c.HasMore || c.Total != 150 {
		t.Errorf("CompleteResource = %d values, total %d, hasMore %v, %v", len(c.Values), c.Total, c.HasMore, err)
	}
	c, err = s.CompleteResource("test://template/abc/data", "id", "")
	if err != nil || len(c.Values) != 100 {
		t.Errorf("completion by a concrete URI = %+v, %v", c, err)
	}
	c, err = s.CompleteResource("test://static", "x", "")
	if err != nil || len(c.Values) != 0 {
		t.Errorf("completion without handler = %+v, %v", c, err)
	}
	if _, err := s.CompletePrompt("nope", "x", ""); !errors.As(err, &re) || re.Code != wasmcp.CodeInvalidParams {
		t.Errorf("unknown prompt completion: %v", err)
	}
}

func TestEnvelopeErrors(t *testing.T) {
	p := testPlugin()
	tests := []struct {
		envelope string
		code     int
	}{
		{`not json`, wasmcp.CodeInvalidRequest},
		{`{"method":"tools/list"}`, wasmcp.CodeMethodNotFound},
		{`{"method":"tools/call","params":[1]}`, wasmcp.CodeInvalidParams},
		{`{"method":"resources/read","params":{}}`, wasmcp.CodeInvalidParams},
	}
	for _, tt := range tests {
		status, out := p.HandleWith(nil, []byte(tt.envelope))
		var e struct{ Code int }
		if status != wasmcp.StatusError || json.Unmarshal(out, &e) != nil || e.Code != tt.code {
			t.Errorf("%s: got %d %s, want code %d", tt.envelope, status, out, tt.code)
		}
	}
	if status, out := wasmcp.Handle([]byte(`{"method":"wasmcp/describe"}`)); status != wasmcp.StatusError || !strings.Contains(string(out), "wasmcp.Serve") {
		t.Errorf("Handle without Serve = %d %s", status, out)
	}
}

func TestHostCalls(t *testing.T) {
	h := wasmcptest.NewHost()
	h.Config = map[string]string{"api_key": "k"}
	h.KVEnabled = true
	h.HTTPAllow = []string{"https://api.example.com/"}
	h.HTTP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		body := r.Method + " " + r.URL.Path + " " + r.Header.Get("Accept")
		if r.Body != nil {
			b := make([]byte, 16)
			n, _ := r.Body.Read(b)
			body += " " + fmt.Sprintf("%x", b[:n])
		}
		w.WriteHeader(201)
		fmt.Fprint(w, body)
	})
	h.Client = func(method string, params json.RawMessage) (any, error) {
		switch method {
		case "elicitation/create":
			return map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, nil
		case "sampling/createMessage":
			return map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}, nil
		}
		return map[string]any{"roots": []map[string]string{{"uri": "file:///r", "name": "R"}}}, nil
	}
	var got []string
	p := wasmcp.New(wasmcp.Info{Name: "hostcalls"})
	p.AddRawTool(wasmcp.Tool{Name: "run"}, func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		check := func(what string, err error) {
			if err != nil {
				got = append(got, what+": "+err.Error())
			}
		}
		c.Log(wasmcp.LevelWarning, "fast")
		check("logdata", c.LogData(wasmcp.LevelInfo, "lg", map[string]int{"n": 1}))
		check("progress", c.Progress(1, 2, "half"))
		check("list", c.NotifyListChanged(wasmcp.ListResources))
		check("updated", c.NotifyResourceUpdated("test://x"))
		check("close", c.CloseStream())
		v, err := c.ConfigGet("api_key")
		check("config", err)
		got = append(got, "config="+v)
		_, err = c.ConfigGet("secret")
		got = append(got, fmt.Sprintf("config denied=%v", errors.Is(err, wasmcp.ErrDenied)))
		check("kvset", c.KVSet("a", "1", 0))
		check("kvset", c.KVSet("b", "2", 1500*time.Millisecond))
		check("kvset", c.KVSet("c", "3", 0))
		val, ok, err := c.KVGet("a")
		got = append(got, fmt.Sprintf("kv a=%s %v %v", val, ok, err))
		_, ok, _ = c.KVGet("zzz")
		got = append(got, fmt.Sprintf("kv zzz ok=%v", ok))
		keys, err := c.KVListAll("")
		got = append(got, fmt.Sprintf("keys=%v %v", keys, err))
		check("kvdelete", c.KVDelete("a"))
		resp, err := c.HTTPFetch(wasmcp.HTTPRequest{URL: "https://api.example.com/v1", Headers: map[string]string{"Accept": "x/y"}, Body: []byte{0xff, 0x00}})
		check("fetch", err)
		if resp != nil {
			got = append(got, fmt.Sprintf("fetch %d %q %s %s", resp.Status, resp.Body, resp.Header("content-type"), resp.Header("X-Multi")))
		}
		_, err = c.HTTPFetch(wasmcp.HTTPRequest{URL: "https://evil.example/"})
		got = append(got, fmt.Sprintf("fetch denied=%v", errors.Is(err, wasmcp.ErrDenied)))
		er, err := c.Elicit(wasmcp.ElicitParams{Message: "name?", RequestedSchema: wasmcp.Object(wasmcp.Required("name", wasmcp.String("")))})
		check("elicit", err)
		var form struct{ Name string }
		if er != nil && er.Accepted() && er.Decode(&form) == nil {
			got = append(got, "elicit="+form.Name)
		}
		sr, err := c.Sample(wasmcp.SamplingParams{Messages: []wasmcp.SamplingMessage{{Role: wasmcp.RoleUser, Content: wasmcp.Text("capital?")}}, MaxTokens: 10})
		check("sample", err)
		if sr != nil {
			got = append(got, "sample="+sr.Text())
		}
		roots, err := c.ListRoots()
		check("roots", err)
		got = append(got, fmt.Sprintf("roots=%v", roots))
		_, err = c.CallHost("custom/thing", nil)
		got = append(got, fmt.Sprintf("unknown=%v", errors.Is(err, wasmcp.ErrUnknownMethod)))
		return wasmcp.TextResult("ok"), nil
	})
	s := wasmcptest.NewSession(p, h)
	s.ProgressToken = 7
	if _, err := s.CallTool("run", nil); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"config=k", "config denied=true", "kv a=1 true <nil>", "kv zzz ok=false", "keys=[a b c] <nil>",
		`fetch 201 "GET /v1 x/y ff00" text/plain a, b`, "fetch denied=true", "elicit=Ada", "sample=Paris",
		"roots=[{file:///r R}]", "unknown=true",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("host calls:\n got %q\nwant %q", got, want)
	}
	if logs := h.Logs(); len(logs) != 1 || logs[0].Level != 3 || logs[0].Message != "fast" {
		t.Errorf("logs = %+v", logs)
	}
	wantParams := map[string]string{
		"log":                     `{"level":"info","logger":"lg","data":{"n":1}}`,
		"progress":                `{"progress":1,"total":2,"message":"half"}`,
		"notify/list_changed":     `{"kind":"resources"}`,
		"notify/resource_updated": `{"uri":"test://x"}`,
		"stream/close":            `{}`,
		"http/fetch":              `{"method":"GET","url":"https://api.example.com/v1","headers":{"Accept":"x/y"},"body_base64":"/wA="}`,
	}
	for method, want := range wantParams {
		if calls := h.CallsTo(method); len(calls) == 0 || string(calls[0]) != want {
			t.Errorf("%s params = %s, want %s", method, calls, want)
		}
	}
	s.ProgressToken = nil
	s.CallTool("run", nil)
	if n := len(h.CallsTo("progress")); n != 1 {
		t.Errorf("progress without a token reached the host: %d calls", n)
	}
	if kv := h.CallsTo("kv/set"); len(kv) < 2 || string(kv[1]) != `{"key":"b","value":"2","ttl_s":2}` {
		t.Errorf("kv/set with ttl params = %s", kv)
	}
}

func TestHostErrors(t *testing.T) {
	codes := map[int32]error{-1: wasmcp.ErrDenied, -2: wasmcp.ErrBadParams, -3: wasmcp.ErrCanceled, -4: wasmcp.ErrTooBig, -6: wasmcp.ErrUnsupported, -7: wasmcp.ErrUnknownMethod}
	for errno, want := range codes {
		h := wasmcptest.NewHost()
		h.Override = func(string, json.RawMessage) ([]byte, int32, bool) { return nil, errno, true }
		var got error
		p := wasmcp.New(wasmcp.Info{})
		p.AddRawTool(wasmcp.Tool{Name: "t"}, func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
			got = c.KVDelete("k")
			return nil, got
		})
		r, err := wasmcptest.NewSession(p, h).CallTool("t", nil)
		if !errors.Is(got, want) || err != nil || !r.IsError || !strings.HasPrefix(r.Content[0].Text, "wasmcp: kv/delete: ") {
			t.Errorf("errno %d: got %v (result %+v, %v), want %v", errno, got, r, err, want)
		}
	}
	h := wasmcptest.NewHost()
	h.Override = func(string, json.RawMessage) ([]byte, int32, bool) {
		return []byte(`{"code":-32000,"message":"connection refused","data":{"host":"x"}}`), -5, true
	}
	var got error
	p := wasmcp.New(wasmcp.Info{})
	p.AddRawTool(wasmcp.Tool{Name: "t"}, func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		_, got = c.HTTPFetch(wasmcp.HTTPRequest{URL: "https://x/"})
		return wasmcp.TextResult(""), nil
	})
	wasmcptest.NewSession(p, h).CallTool("t", nil)
	var he *wasmcp.HostError
	if !errors.As(got, &he) || he.Code != -32000 || he.Message != "connection refused" || string(he.Data) != `{"host":"x"}` ||
		got.Error() != "wasmcp: http/fetch: connection refused (code -32000)" {
		t.Errorf("failed call: %#v", got)
	}
}

func TestRegistrationPanics(t *testing.T) {
	handler := func(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) { return nil, nil }
	res := func(*wasmcp.Context, *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) { return nil, nil }
	prompt := func(*wasmcp.Context, map[string]string) (*wasmcp.PromptResult, error) { return nil, nil }
	tests := []struct {
		name string
		f    func(p *wasmcp.Plugin)
		want string
	}{
		{"bad tool name", func(p *wasmcp.Plugin) { p.AddRawTool(wasmcp.Tool{Name: "a b"}, handler) }, "name must match"},
		{"duplicate tool", func(p *wasmcp.Plugin) {
			p.AddRawTool(wasmcp.Tool{Name: "a"}, handler)
			p.AddRawTool(wasmcp.Tool{Name: "a"}, handler)
		}, "registered twice"},
		{"schema not object", func(p *wasmcp.Plugin) { p.AddRawTool(wasmcp.Tool{Name: "a", InputSchema: `[1]`}, handler) }, "inputSchema: not a JSON object"},
		{"schema not json", func(p *wasmcp.Plugin) { p.AddRawTool(wasmcp.Tool{Name: "a", OutputSchema: `{`}, handler) }, "outputSchema: not valid JSON"},
		{"nil handler", func(p *wasmcp.Plugin) { p.AddRawTool(wasmcp.Tool{Name: "a"}, nil) }, "nil handler"},
		{"resource without uri", func(p *wasmcp.Plugin) { p.AddResource(wasmcp.Resource{}, res) }, "without URI"},
		{"bad template", func(p *wasmcp.Plugin) { p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "x://{?q}"}, res) }, "only {name} and {+name}"},
		{"resource nil handler", func(p *wasmcp.Plugin) { p.AddResource(wasmcp.Resource{URI: "x://a"}, nil) }, `resource "x://a": nil handler`},
		{"duplicate resource", func(p *wasmcp.Plugin) {
			p.AddResource(wasmcp.Resource{URI: "x://a"}, res)
			p.AddResource(wasmcp.Resource{URI: "x://a"}, res)
		}, `resource "x://a": registered twice`},
		{"template nil handler", func(p *wasmcp.Plugin) { p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "x://{a}"}, nil) }, `template "x://{a}": nil handler`},
		{"duplicate template", func(p *wasmcp.Plugin) {
			p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "x://{a}"}, res)
			p.AddResourceTemplate(wasmcp.ResourceTemplate{URITemplate: "x://{a}"}, res)
		}, `template "x://{a}": registered twice`},
		{"bad prompt name", func(p *wasmcp.Plugin) { p.AddPrompt(wasmcp.Prompt{Name: ""}, prompt) }, `prompt "": name must match`},
		{"prompt nil handler", func(p *wasmcp.Plugin) { p.AddPrompt(wasmcp.Prompt{Name: "p"}, nil) }, `prompt "p": nil handler`},
		{"duplicate prompt", func(p *wasmcp.Plugin) {
			p.AddPrompt(wasmcp.Prompt{Name: "p"}, prompt)
			p.AddPrompt(wasmcp.Prompt{Name: "p"}, prompt)
		}, `prompt "p": registered twice`},
		{"repeated prompt argument", func(p *wasmcp.Plugin) {
			p.AddPrompt(wasmcp.Prompt{Name: "p", Arguments: []wasmcp.PromptArgument{{Name: "a"}, {Name: "a"}}}, prompt)
		}, "empty or repeated"},
		{"bad plugin name", func(*wasmcp.Plugin) { wasmcp.New(wasmcp.Info{Name: "no/slash"}) }, "plugin name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				v := recover()
				if v == nil || !strings.Contains(fmt.Sprint(v), tt.want) {
					t.Errorf("panic = %v, want it to contain %q", v, tt.want)
				}
			}()
			tt.f(wasmcp.New(wasmcp.Info{}))
		})
	}
}

func TestResourceLister(t *testing.T) {
	p := wasmcp.New(wasmcp.Info{Name: "lister"})
	p.AddResource(wasmcp.Resource{URI: "x://fixed", Name: "fixed"}, func(*wasmcp.Context, *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
		return nil, nil
	})
	p.AddResourceLister(func(c *wasmcp.Context) ([]wasmcp.Resource, error) {
		keys, err := c.KVListAll("note:")
		var out []wasmcp.Resource
		for _, k := range keys {
			out = append(out, wasmcp.Resource{URI: "x://" + strings.TrimPrefix(k, "note:")})
		}
		return append(out, wasmcp.Resource{URI: "x://fixed"}), err
	})
	h := wasmcptest.NewHost()
	m, err := wasmcptest.NewSession(p, h).Describe()
	if err != nil || len(m.Resources) != 1 || len(h.Logs()) != 1 || !strings.Contains(h.Logs()[0].Message, "listing resources") {
		t.Fatalf("describe without kv: %+v, %v, logs %v", m, err, h.Logs())
	}
	h2 := wasmcptest.NewHost()
	h2.KVEnabled = true
	s := wasmcptest.NewSession(p, h2)
	s.Do("wasmcp/describe", nil, nil)
	p2 := wasmcp.New(wasmcp.Info{})
	p2.AddRawTool(wasmcp.Tool{Name: "seed"}, func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		return nil, errors.Join(c.KVSet("note:a", "1", 0), c.KVSet("note:b", "2", 0))
	})
	wasmcptest.NewSession(p2, h2).CallTool("seed", nil)
	m, err = s.Describe()
	if err != nil || len(m.Resources) != 3 || m.Resources[1].URI != "x://a" || m.Resources[1].Name != "x://a" {
		t.Errorf("describe with kv: %+v, %v", m.Resources, err)
	}
}

func TestListFilter(t *testing.T) {
	p := wasmcp.New(wasmcp.Info{Name: "filter"})
	noop := func(*wasmcp.Context, json.RawMessage) (*wasmcp.Result, error) { return wasmcp.TextResult("ok"), nil }
	p.AddRawTool(wasmcp.Tool{Name: "always"}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "extra"}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "broken"}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "toggle"}, func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		if err := c.KVSet("extra", "on", 0); err != nil {
			return nil, err
		}
		return wasmcp.TextResult("on"), c.NotifyListChanged(wasmcp.ListTools)
	})
	p.AddPrompt(wasmcp.Prompt{Name: "hidden"}, func(*wasmcp.Context, map[string]string) (*wasmcp.PromptResult, error) { return nil, nil })
	p.SetListFilter(func(c *wasmcp.Context, kind wasmcp.ListKind, name string) bool {
		switch {
		case name == "broken":
			panic("filter bug")
		case kind == wasmcp.ListPrompts:
			return false
		case name == "extra":
			_, ok, _ := c.KVGet("extra")
			return ok
		}
		return true
	})
	names := func(m *wasmcptest.Manifest) string {
		var out []string
		for _, t := range m.Tools {
			out = append(out, t.Name)
		}
		for _, pr := range m.Prompts {
			out = append(out, "prompt:"+pr.Name)
		}
		return strings.Join(out, ",")
	}
	h := wasmcptest.NewHost()
	h.KVEnabled = true
	s := wasmcptest.NewSession(p, h)
	m, err := s.Describe()
	if err != nil || names(m) != "always,broken,toggle" {
		t.Fatalf("before: %q, %v", names(m), err)
	}
	if _, err := s.CallTool("toggle", nil); err != nil {
		t.Fatal(err)
	}
	if n := len(h.CallsTo("notify/list_changed")); n != 1 {
		t.Errorf("%d list_changed notifications, want 1", n)
	}
	m, err = s.Describe()
	if err != nil || names(m) != "always,extra,broken,toggle" {
		t.Fatalf("after: %q, %v", names(m), err)
	}
}

// TestToolTaskSupport: Tool.TaskSupport becomes execution.taskSupport
// (absent for the default, forbidden), an unknown value panics at
// registration, and StartTask calls the host's task/start.
func TestToolTaskSupport(t *testing.T) {
	p := wasmcp.New(wasmcp.Info{Name: "tasks"})
	noop := func(c *wasmcp.Context, _ json.RawMessage) (*wasmcp.Result, error) {
		return wasmcp.TextResult("ok"), c.StartTask()
	}
	p.AddRawTool(wasmcp.Tool{Name: "plain"}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "never", TaskSupport: wasmcp.TaskForbidden}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "maybe", TaskSupport: wasmcp.TaskOptional}, noop)
	p.AddRawTool(wasmcp.Tool{Name: "always", TaskSupport: wasmcp.TaskRequired}, noop)
	h := wasmcptest.NewHost()
	s := wasmcptest.NewSession(p, h)
	out := string(s.Do("wasmcp/describe", map[string]any{}, nil).Output)
	for _, want := range []string{`"name":"maybe"`, `"execution":{"taskSupport":"optional"}`, `"execution":{"taskSupport":"required"}`} {
		if !strings.Contains(out, want) {
			t.Errorf("manifest lacks %s: %s", want, out)
		}
	}
	if n := strings.Count(out, `"execution"`); n != 2 {
		t.Errorf("%d execution members, want 2 (plain and forbidden have none): %s", n, out)
	}
	s.CallTool("maybe", nil)
	if n := len(h.CallsTo("task/start")); n != 1 {
		t.Errorf("%d task/start calls, want 1", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("TaskSupport \"sometimes\" was accepted")
		}
	}()
	p.AddRawTool(wasmcp.Tool{Name: "bad", TaskSupport: "sometimes"}, noop)
}
