package wasmcp

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestTemplates(t *testing.T) {
	tests := []struct {
		tmpl string
		uri  string
		want map[string]string // nil: no match
	}{
		{"test://template/{id}/data", "test://template/42/data", map[string]string{"id": "42"}},
		{"test://template/{id}/data", "test://template/4/2/data", nil},
		{"test://template/{id}/data", "test://template/%2F/data", map[string]string{"id": "/"}},
		{"notes://{id}", "notes://a-b_c", map[string]string{"id": "a-b_c"}},
		{"notes://{id}", "notes://", nil},
		{"notes://{id}", "notes://x?y", nil},
		{"file:///{+path}", "file:///a/b/c.txt", map[string]string{"path": "a/b/c.txt"}},
		{"x://{a}-{b}", "x://1-2-3", map[string]string{"a": "1", "b": "2-3"}},
		{"x://{a}.{b}", "x://1.2", map[string]string{"a": "1", "b": "2"}},
		{"x://static", "x://static", map[string]string{}},
		{"x://a.b", "x://aXb", nil},
	}
	for _, tt := range tests {
		tpl, err := parseTemplate(tt.tmpl)
		if err != nil {
			t.Fatalf("parseTemplate(%q): %v", tt.tmpl, err)
		}
		got, ok := tpl.match(tt.uri)
		if ok != (tt.want != nil) || (ok && !equalMaps(got, tt.want)) {
			t.Errorf("%q match %q = %v, %v; want %v", tt.tmpl, tt.uri, got, ok, tt.want)
		}
	}
	// Many variables on a long URI that does not match: memoised and
	// guided by the literals, so this stays fast.
	tpl, _ := parseTemplate("x://{a}y{b}y{c}y{d}y{+e}y{f}/end")
	start := time.Now()
	if _, ok := tpl.match("x://" + strings.Repeat("y", 5000) + "/nope"); ok {
		t.Error("long non-matching URI matched")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("matching took %v", d)
	}
	for _, bad := range []string{"x://{a}{b}", "x://{", "x://}", "x://{a,b}", "x://{?q}", "x://{/p}", "x://{a*}", "x://{a}{a}", "x://{}"} {
		if _, err := parseTemplate(bad); err == nil {
			t.Errorf("parseTemplate(%q) succeeded, want an error", bad)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestContentJSON(t *testing.T) {
	pri := 0.5
	tests := []struct {
		name string
		c    Content
		want string
	}{
		{"empty text", Text(""), `{"type":"text","text":""}`},
		{"annotated", Content{Type: TypeText, Text: "x", Annotations: &Annotations{Audience: []Role{RoleUser}, Priority: &pri}},
			`{"type":"text","text":"x","annotations":{"audience":["user"],"priority":0.5}}`},
		{"blob resource", EmbeddedResource(BlobContents("b://1", "application/octet-stream", nil)),
			`{"type":"resource","resource":{"uri":"b://1","mimeType":"application/octet-stream","blob":""}}`},
		{"empty text resource", EmbeddedResource(TextContents("t://1", "", "")), `{"type":"resource","resource":{"uri":"t://1","text":""}}`},
		{"link", ResourceLink(Resource{URI: "r://1", Name: "one", Size: 3}), `{"type":"resource_link","uri":"r://1","name":"one","size":3}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.c)
		if err != nil || string(b) != tt.want {
			t.Errorf("%s: %s, %v; want %s", tt.name, b, err, tt.want)
		}
		var back Content
		if err := json.Unmarshal(b, &back); err != nil || back.Type != tt.c.Type {
			t.Errorf("%s: round trip %+v, %v", tt.name, back, err)
		}
	}
	if _, err := json.Marshal(Content{Type: "video"}); err == nil || !strings.Contains(err.Error(), "unknown content type") {
		t.Errorf("unknown type: %v", err)
	}
	var sr SamplingResult
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],"model":"m"}`), &sr); err != nil || sr.Text() != "ab" {
		t.Errorf("sampling array content: %+v, %v", sr, err)
	}
}

func TestDecodeArguments(t *testing.T) {
	type in struct {
		N    int      `json:"n"`
		Tags []string `json:"tags"`
		Sub  struct {
			OK bool `json:"ok"`
		} `json:"sub"`
	}
	tests := []struct{ args, want string }{
		{`{"n":"x"}`, "invalid arguments: arguments.n: expected an integer, got string"},
		{`{"n":1.5}`, "invalid arguments: arguments.n: expected an integer, got number 1.5"},
		{`{"tags":"a"}`, "invalid arguments: arguments.tags: expected an array, got string"},
		{`{"sub":{"ok":1}}`, "invalid arguments: arguments.sub.ok: expected a boolean, got number"},
		{`"str"`, "invalid arguments: arguments: expected an object, got string"},
		{`{`, "invalid arguments: unexpected end of JSON input"},
	}
	for _, tt := range tests {
		var v in
		err := decodeArguments(json.RawMessage(tt.args), &v)
		if err == nil || err.Error() != tt.want {
			t.Errorf("decodeArguments(%s) = %v, want %s", tt.args, err, tt.want)
		}
	}
}

// FuzzHandle sends arbitrary envelopes to a plugin with every kind of
// registration: Handle must never panic, and must answer status 0 or 1
// with valid JSON.
func FuzzHandle(f *testing.F) {
	p := New(Info{Name: "fuzz"})
	AddTool(p, Tool{Name: "t"}, func(c *Context, in struct {
		A int `json:"a"`
	}) (map[string]int, error) {
		if _, err := c.ElicitResponse("k"); err != nil && err != ErrNoInputResponse {
			return nil, err
		}
		return map[string]int{"a": in.A}, nil
	})
	p.AddResourceTemplate(ResourceTemplate{URITemplate: "f://{a}/{+b}"}, func(c *Context, r *ResourceRequest) ([]ResourceContents, error) {
		return []ResourceContents{TextContents(r.URI, "", r.Vars["a"]+r.Vars["b"])}, nil
	})
	p.AddPrompt(Prompt{Name: "p", Arguments: []PromptArgument{{Name: "x", Required: true}}}, func(c *Context, a map[string]string) (*PromptResult, error) {
		return &PromptResult{Messages: []PromptMessage{UserMessage(Text(a["x"]))}}, nil
	})
	p.AddPromptCompletion("p", func(c *Context, r *CompleteRequest) (*Completion, error) {
		return CompleteFrom([]string{"a", "b"}, r.Value), nil
	})
	for _, s := range []string{
		`{"method":"wasmcp/describe","params":{},"context":{}}`,
		`{"method":"tools/call","params":{"name":"t","arguments":{"a":1}},"context":{"inputResponses":{"k":{"action":"accept"}},"requestState":"s"}}`,
		`{"method":"tools/call","params":{"name":"t","arguments":{"a":"x"}}}`,
		`{"method":"resources/read","params":{"uri":"f://x/y/z"}}`,
		`{"method":"prompts/get","params":{"name":"p","arguments":{"x":1}}}`,
		`{"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"x","value":""}}}`,
		`{"method":"x"}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, envelope []byte) {
		status, out := p.HandleWith(unsupportedHost{}, envelope)
		if status != StatusOK && status != StatusError {
			t.Fatalf("status %d", status)
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON output %q", out)
		}
	})
}

func TestToolExtra(t *testing.T) {
	p := New(Info{})
	p.AddRawTool(Tool{Name: "t", Extra: map[string]any{"execution": map[string]string{"taskSupport": "optional"}, "name": "ignored"}},
		func(*Context, json.RawMessage) (*Result, error) { return nil, nil })
	b, err := json.Marshal(p.tools[0].tool)
	if want := `{"execution":{"taskSupport":"optional"},"inputSchema":{"type":"object"},"name":"t"}`; err != nil || string(b) != want {
		t.Errorf("got %s, %v\nwant %s", b, err, want)
	}
	p.AddRawTool(Tool{Name: "u"}, func(*Context, json.RawMessage) (*Result, error) { return nil, nil })
	if b, _ := json.Marshal(p.tools[1].tool); string(b) != `{"name":"u","inputSchema":{"type":"object"}}` {
		t.Errorf("without extra: %s", b)
	}
}

func TestNoHTMLEscaping(t *testing.T) {
	r, err := StructuredResult(map[string]string{"s": "a<b & c>d"})
	if err != nil {
		t.Fatal(err)
	}
	status, out := result(r)
	want := `{"content":[{"type":"text","text":"{\"s\":\"a<b & c>d\"}"}],"structuredContent":{"s":"a<b & c>d"}}`
	if status != StatusOK || string(out) != want {
		t.Errorf("got %s\nwant %s", out, want)
	}
}
