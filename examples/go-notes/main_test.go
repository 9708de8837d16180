package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/schema"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

func init() {
	now = func() time.Time { return time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC) }
}

// newSession returns a session with a host that grants kv.
func newSession() (*wasmcptest.Session, *wasmcptest.Host) {
	h := wasmcptest.NewHost()
	h.KVEnabled = true
	return wasmcptest.NewSession(plugin, h), h
}

// call calls a tool, checking its structured result against the
// outputSchema, and decodes the structured result into out.
func call(t *testing.T, s *wasmcptest.Session, tool string, args map[string]any, out any) *wasmcp.Result {
	t.Helper()
	r, err := s.CallTool(tool, args)
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if r.IsError {
		return r
	}
	m, _ := s.Describe()
	sch, err := schema.Compile(m.Tool(tool).OutputSchema, &schema.Options{Root: "structuredContent"})
	if err != nil {
		t.Fatal(err)
	}
	sc := r.StructuredContent.(json.RawMessage)
	if err := sch.Validate(sc); err != nil {
		t.Fatalf("%s: %s fails the outputSchema: %v", tool, sc, err)
	}
	if out != nil {
		json.Unmarshal(sc, out)
	}
	return r
}

func TestAddReadSearch(t *testing.T) {
	s, h := newSession()
	var a, b, dup noteOut
	r := call(t, s, "add_note", map[string]any{"title": "Go Reactors!", "body": "Use defer runtime.Gosched() in the export.", "tags": []string{"Go", "wasm", "go "}}, &a)
	if a.ID != "go-reactors" || a.URI != "notes://go-reactors" || strings.Join(a.Tags, ",") != "go,wasm" || a.Updated != "2026-07-28T12:00:00Z" {
		t.Errorf("add_note = %+v", a)
	}
	if len(r.Content) != 2 || r.Content[1].Type != wasmcp.TypeResourceLink || r.Content[1].Link.URI != "notes://go-reactors" {
		t.Errorf("add_note content = %+v", r.Content)
	}
	call(t, s, "add_note", map[string]any{"title": "Go reactors", "body": "dup"}, &dup)
	call(t, s, "add_note", map[string]any{"title": "Wazero pools", "body": "Discard an instance after any trap; reactors are pooled.", "tags": []string{"wasm"}}, &b)
	if dup.ID != "go-reactors-2" || b.ID != "wazero-pools" {
		t.Errorf("ids = %q, %q", dup.ID, b.ID)
	}
	if got := len(h.CallsTo("notify/list_changed")); got != 3 {
		t.Errorf("list_changed sent %d times, want 3", got)
	}

	contents, err := s.ReadResource("notes://go-reactors")
	if err != nil || len(contents) != 1 || contents[0].MIMEType != "text/markdown" ||
		contents[0].Text != "# Go Reactors!\n\nTags: go, wasm\nUpdated: 2026-07-28T12:00:00Z\n\nUse defer runtime.Gosched() in the export.\n" {
		t.Errorf("read note = %+v, %v", contents, err)
	}
	var re *wasmcp.RPCError
	if _, err := s.ReadResource("notes://nope"); !errors.As(err, &re) || re.Code != wasmcp.CodeResourceNotFound {
		t.Errorf("read missing note: %v", err)
	}
	if _, err := s.ReadResource("notes://../etc"); !errors.As(err, &re) || re.Code != wasmcp.CodeResourceNotFound {
		t.Errorf("read odd id: %v", err)
	}
	index, err := s.ReadResource("notes://index")
	if err != nil || !strings.Contains(index[0].Text, `"id": "wazero-pools"`) {
		t.Errorf("index = %+v, %v", index, err)
	}

	var found searchOut
	r = call(t, s, "search_notes", map[string]any{"query": "REACTORS"}, &found)
	if found.Total != 3 || found.Results[0].ID != "go-reactors" || found.Results[2].ID != "wazero-pools" ||
		found.Results[2].Snippet != "Discard an instance after any trap; reactors are pooled." || len(r.Content) != 4 {
		t.Errorf("search = %+v", found)
	}
	call(t, s, "search_notes", map[string]any{"tag": "wasm", "limit": 1}, &found)
	if found.Total != 2 || len(found.Results) != 1 {
		t.Errorf("search by tag = %+v", found)
	}
	call(t, s, "search_notes", map[string]any{"query": "nothing like this"}, &found)
	if found.Total != 0 || found.Results == nil {
		t.Errorf("empty search = %+v", found)
	}

	m, err := s.Describe()
	if err != nil || len(m.Resources) != 4 || m.Resources[0].URI != "notes://index" || m.Resources[1].Title != "Go Reactors!" || !m.Completions {
		t.Errorf("manifest resources = %+v, %v", m.Resources, err)
	}
}

func TestUpdate(t *testing.T) {
	s, h := newSession()
	call(t, s, "add_note", map[string]any{"title": "Plan", "body": "one"}, nil)
	var out noteOut
	call(t, s, "update_note", map[string]any{"id": "plan", "append": "two", "tags": []string{"todo"}}, &out)
	n, _ := json.Marshal(h.KV()["note:plan"])
	if !strings.Contains(string(n), `one\\ntwo`) || strings.Join(out.Tags, ",") != "todo" {
		t.Errorf("after update: %s %+v", n, out)
	}
	updated := h.CallsTo("notify/resource_updated")
	if len(updated) < 2 || string(updated[len(updated)-2]) != `{"uri":"notes://plan"}` || string(updated[len(updated)-1]) != `{"uri":"notes://index"}` {
		t.Errorf("resource_updated = %s", updated)
	}
	r := call(t, s, "update_note", map[string]any{"id": "missing", "body": "x"}, nil)
	if !r.IsError || !strings.Contains(r.Content[0].Text, `no note with id "missing"`) {
		t.Errorf("update missing = %+v", r)
	}
}

func TestDeleteConfirmation(t *testing.T) {
	s, h := newSession()
	call(t, s, "add_note", map[string]any{"title": "Old", "body": "x"}, nil)

	// First call: the user is asked.
	var ir *wasmcptest.InputRequired
	if _, err := s.CallTool("delete_note", map[string]any{"id": "old"}); !errors.As(err, &ir) ||
		ir.InputRequests[confirmKey].Method != "elicitation/create" || ir.RequestState != "delete:old" {
		t.Fatalf("round 1 = %v", err)
	}
	// Declined: nothing happens.
	var out deleteOut
	r, err := s.CallToolRetry("delete_note", map[string]any{"id": "old"}, &wasmcptest.Retry{State: ir.RequestState,
		Responses: map[string]any{confirmKey: map[string]any{"action": "decline"}}})
	if err != nil || json.Unmarshal(r.StructuredContent.(json.RawMessage), &out) != nil || out.Deleted {
		t.Fatalf("declined = %+v, %v", r, err)
	}
	if _, ok := h.KV()["note:old"]; !ok {
		t.Fatal("declined delete removed the note")
	}
	// Accepted: deleted.
	r, err = s.CallToolRetry("delete_note", map[string]any{"id": "old"}, &wasmcptest.Retry{State: ir.RequestState,
		Responses: map[string]any{confirmKey: map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}}})
	if err != nil || json.Unmarshal(r.StructuredContent.(json.RawMessage), &out) != nil || !out.Deleted {
		t.Fatalf("accepted = %+v, %v", r, err)
	}
	if _, ok := h.KV()["note:old"]; ok {
		t.Fatal("note still stored")
	}

	// A client without elicitation must pass confirm.
	call(t, s, "add_note", map[string]any{"title": "Other", "body": "y"}, nil)
	s.ClientCapabilities = map[string]any{}
	r, _ = s.CallTool("delete_note", map[string]any{"id": "other"})
	if !r.IsError || !strings.Contains(r.Content[0].Text, "confirm: true") {
		t.Errorf("no elicitation = %+v", r)
	}
	call(t, s, "delete_note", map[string]any{"id": "other", "confirm": true}, &out)
	if !out.Deleted {
		t.Errorf("confirm: true = %+v", out)
	}
}

func TestPromptsAndCompletion(t *testing.T) {
	s, _ := newSession()
	call(t, s, "add_note", map[string]any{"title": "Alpha", "body": "a"}, nil)
	call(t, s, "add_note", map[string]any{"title": "Beta", "body": "b"}, nil)
	call(t, s, "add_note", map[string]any{"title": "Alpine", "body": "c"}, nil)

	p, err := s.GetPrompt("summarize_note", map[string]string{"id": "alpha", "style": "one sentence"})
	if err != nil || len(p.Messages) != 2 || p.Messages[0].Content.Type != wasmcp.TypeResource ||
		p.Messages[0].Content.Resource.URI != "notes://alpha" || !strings.Contains(p.Messages[1].Content.Text, "as one sentence") {
		t.Errorf("summarize_note = %+v, %v", p, err)
	}
	var re *wasmcp.RPCError
	if _, err := s.GetPrompt("summarize_note", map[string]string{"id": "zeta"}); !errors.As(err, &re) || re.Code != wasmcp.CodeInvalidParams {
		t.Errorf("summarize missing note: %v", err)
	}
	p, err = s.GetPrompt("compare_notes", map[string]string{"first": "alpha", "second": "beta"})
	if err != nil || len(p.Messages) != 3 {
		t.Errorf("compare_notes = %+v, %v", p, err)
	}

	c, err := s.CompletePrompt("summarize_note", "id", "al")
	if err != nil || strings.Join(c.Values, ",") != "alpha,alpine" {
		t.Errorf("complete id = %+v, %v", c, err)
	}
	c, err = s.CompletePrompt("summarize_note", "style", "b")
	if err != nil || strings.Join(c.Values, ",") != "bullet points" {
		t.Errorf("complete style = %+v, %v", c, err)
	}
	c, err = s.CompleteResource("notes://{id}", "id", "")
	if err != nil || c.Total != 3 {
		t.Errorf("complete template = %+v, %v", c, err)
	}
}

func TestWithoutKV(t *testing.T) {
	s := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	r, err := s.CallTool("add_note", map[string]any{"title": "x", "body": "y"})
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].Text, "kv = true under [plugins.grants]") {
		t.Errorf("add without kv = %+v, %v", r, err)
	}
	m, err := s.Describe()
	if err != nil || len(m.Resources) != 1 {
		t.Errorf("describe without kv = %+v, %v", m, err)
	}
}

func TestNoteID(t *testing.T) {
	tests := map[string]string{
		"Hello, World!":           "hello-world",
		"  --  ":                  "note",
		"Ünïcode and 42 things":   "unicode-and-42-things",
		"Don't panic in Łódź":     "dont-panic-in-lodz",
		strings.Repeat("ab ", 40): strings.TrimRight(strings.Repeat("ab-", 16), "-"),
	}
	for in, want := range tests {
		if got := noteID(in); got != want || !validID(got) {
			t.Errorf("noteID(%q) = %q, want %q", in, got, want)
		}
	}
}
