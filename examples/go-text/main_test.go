package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/schema"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

// call runs a tool natively, checks the arguments against its
// inputSchema and the structured result against its outputSchema (as the
// server does), and returns the structured result as JSON.
func call(t *testing.T, tool string, args map[string]any) (string, *wasmcp.Result) {
	t.Helper()
	s := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	m, err := s.Describe()
	if err != nil {
		t.Fatal(err)
	}
	mt := m.Tool(tool)
	if mt == nil {
		t.Fatalf("no tool %q", tool)
	}
	in, err := schema.Compile(mt.InputSchema, &schema.Options{Root: "arguments"})
	if err != nil {
		t.Fatalf("inputSchema: %v", err)
	}
	raw, _ := json.Marshal(args)
	if err := in.Validate(raw); err != nil {
		t.Fatalf("arguments %s fail the inputSchema: %v", raw, err)
	}
	r, err := s.CallTool(tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if r.IsError {
		return "", r
	}
	out, err := schema.Compile(mt.OutputSchema, &schema.Options{Root: "structuredContent"})
	if err != nil {
		t.Fatalf("outputSchema: %v", err)
	}
	sc, _ := r.StructuredContent.(json.RawMessage)
	if err := out.Validate(sc); err != nil {
		t.Fatalf("%s: structuredContent %s fails the outputSchema: %v", tool, sc, err)
	}
	if len(r.Content) != 1 || r.Content[0].Text != string(sc) {
		t.Errorf("text block %+v does not mirror structuredContent %s", r.Content, sc)
	}
	return string(sc), r
}

func TestTextStats(t *testing.T) {
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"empty", map[string]any{"text": ""},
			`{"characters":0,"characters_no_spaces":0,"words":0,"unique_words":0,"sentences":0,"lines":0,"paragraphs":0,"average_word_length":0,"reading_time_seconds":0,"top_words":[]}`},
		{"prose", map[string]any{"text": "The cat sat. The cat ran!\n\nDon't stop, well-known cat?", "top": 2},
			`{"characters":54,"characters_no_spaces":44,"words":10,"unique_words":7,"sentences":3,"lines":3,"paragraphs":2,"average_word_length":4,"reading_time_seconds":3,"top_words":[{"word":"cat","count":3},{"word":"the","count":2}]}`},
		{"unicode", map[string]any{"text": "Ünïcödé wörds… ok", "top": 0},
			`{"characters":17,"characters_no_spaces":15,"words":3,"unique_words":3,"sentences":2,"lines":1,"paragraphs":1,"average_word_length":4.67,"reading_time_seconds":1,"top_words":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := call(t, "text_stats", tt.args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestConvertCase(t *testing.T) {
	const text = "parseHTTPRequest from the user's input2 file"
	want := map[string]string{
		"upper":    "PARSEHTTPREQUEST FROM THE USER'S INPUT2 FILE",
		"lower":    "parsehttprequest from the user's input2 file",
		"title":    "Parsehttprequest From The User's Input2 File",
		"sentence": "Parsehttprequest from the user's input2 file",
		"snake":    "parse_http_request_from_the_user_s_input2_file",
		"kebab":    "parse-http-request-from-the-user-s-input2-file",
		"constant": "PARSE_HTTP_REQUEST_FROM_THE_USER_S_INPUT2_FILE",
		"camel":    "parseHttpRequestFromTheUserSInput2File",
		"pascal":   "ParseHttpRequestFromTheUserSInput2File",
	}
	for _, to := range caseNames {
		t.Run(to, func(t *testing.T) {
			got, _ := call(t, "convert_case", map[string]any{"text": text, "to": to})
			var out caseOut
			json.Unmarshal([]byte(got), &out)
			if out.Result != want[to] {
				t.Errorf("%s: got %q, want %q", to, out.Result, want[to])
			}
		})
	}
	s := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	r, err := s.CallTool("convert_case", map[string]any{"text": "x", "to": "shouting"})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].Text, `unknown case "shouting"`) {
		t.Errorf("unknown case: %+v, %v", r, err)
	}
}

func TestSlugify(t *testing.T) {
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"text": "Hello, World!"}, "hello-world"},
		{map[string]any{"text": "Crème Brûlée à la Ñandú — Straße"}, "creme-brulee-a-la-nandu-strasse"},
		{map[string]any{"text": "Don't panic: 42 tips", "separator": "_"}, "dont_panic_42_tips"},
		{map[string]any{"text": "one two three four", "max_length": 9}, "one-two"},
		{map[string]any{"text": "incomprehensibilities", "max_length": 5}, "incom"},
		{map[string]any{"text": "日本語 !!"}, ""},
	}
	for _, tt := range tests {
		got, _ := call(t, "slugify", tt.args)
		if want := `{"slug":"` + tt.want + `"}`; got != want {
			t.Errorf("slugify(%v) = %s, want %s", tt.args, got, want)
		}
	}
}

func TestRegexExtract(t *testing.T) {
	got, _ := call(t, "regex_extract", map[string]any{
		"text":    "alice@example.com, Bob@Example.org and nobody",
		"pattern": `(?P<user>[a-z]+)@([a-z]+)\.(com|org)`, "ignore_case": true,
	})
	want := `{"count":2,"truncated":false,"matches":[` +
		`{"match":"alice@example.com","start":0,"end":17,"groups":["alice","example","com"],"named":{"user":"alice"}},` +
		`{"match":"Bob@Example.org","start":19,"end":34,"groups":["Bob","Example","org"],"named":{"user":"Bob"}}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got, _ = call(t, "regex_extract", map[string]any{"text": "a1 b2 c3", "pattern": `\d`, "max_matches": 2})
	if want := `{"count":2,"truncated":true,"matches":[{"match":"1","start":1,"end":2,"groups":[]},{"match":"2","start":4,"end":5,"groups":[]}]}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	got, _ = call(t, "regex_extract", map[string]any{"text": "ab", "pattern": `(x)?b`})
	if want := `{"count":1,"truncated":false,"matches":[{"match":"b","start":1,"end":2,"groups":[""]}]}`; got != want {
		t.Errorf("optional group: got %s", got)
	}
	_, r := call(t, "regex_extract", map[string]any{"text": "x", "pattern": `(?<=a)b`})
	if r == nil || !r.IsError || !strings.Contains(r.Content[0].Text, "invalid pattern (RE2 syntax") {
		t.Errorf("invalid pattern: %+v", r)
	}
}

func TestWrapText(t *testing.T) {
	got, _ := call(t, "wrap_text", map[string]any{
		"text":  "The quick brown fox jumps over the lazy dog.\n\nA second   paragraph with an extraordinarilylongword.",
		"width": 16,
	})
	want := wrapOut{Text: "The quick brown\nfox jumps over\nthe lazy dog.\n\nA second\nparagraph with\nan\nextraordinarilylongword.", Lines: 8}
	b, _ := json.Marshal(want)
	if got != string(b) {
		t.Errorf("got  %s\nwant %s", got, b)
	}
}

func TestManifest(t *testing.T) {
	m, err := wasmcptest.NewSession(plugin, wasmcptest.NewHost()).Describe()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range m.Tools {
		names = append(names, tool.Name)
		if len(tool.OutputSchema) == 0 {
			t.Errorf("%s has no outputSchema", tool.Name)
		}
	}
	if got := strings.Join(names, " "); got != "text_stats convert_case slugify regex_extract wrap_text" {
		t.Errorf("tools = %s", got)
	}
	if m.Name != "text" || m.ABI != 1 {
		t.Errorf("manifest %+v", m)
	}
	var re *wasmcp.RPCError
	if _, err := wasmcptest.NewSession(plugin, wasmcptest.NewHost()).CallTool("nope", nil); !errors.As(err, &re) {
		t.Errorf("unknown tool: %v", err)
	}
}
