package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/runtime"
)

// approver records the items it is asked about and answers err.
type approver struct {
	seen []Item
	err  error
}

func (a *approver) Approve(it Item) error {
	a.seen = append(a.seen, it)
	return a.err
}

// callCounter counts the plugin calls a request makes.
type callCounter struct{ n int }

func (c *callCounter) CallStart(ctx context.Context, _, _, _ string, host runtime.Host) (context.Context, runtime.Host) {
	c.n++
	return ctx, host
}

func (c *callCounter) CallEnd(context.Context, error) {}

// TestApprove: every call method asks Request.Approve about the catalog
// entry it routed to (the definition the lists serve, the template a
// URI matched), once, before the arguments are checked; a refusal is
// the method's answer as it is, and no plugin is called.
func TestApprove(t *testing.T) {
	ctx := context.Background()
	reg := testRegistry(t)
	if err := reg.Load(ctx, []Spec{{Path: "../examples/go-notes/go-notes.wasm"}}); err != nil {
		t.Fatal(err)
	}
	tool, _ := reg.Tool("search_notes")
	prompt, _ := reg.Prompt("summarize_note")
	index, _ := reg.Resource("notes://index", nil)
	tmpl, _ := reg.Template("notes://{id}")
	refused := errors.New("refused")
	for _, tc := range []struct {
		name   string
		call   func(context.Context, *Request) (json.RawMessage, error)
		params mcpreq.Params
		want   Item
	}{
		// The arguments do not match the schema: approval comes first.
		{"tool", reg.CallTool, mcpreq.Params{Name: "search_notes", Arguments: json.RawMessage(`{"query":7}`)}, tool},
		{"prompt", reg.GetPrompt, mcpreq.Params{Name: "summarize_note"}, prompt},
		{"resource", reg.ReadResource, mcpreq.Params{URI: "notes://index"}, index},
		{"template", reg.ReadResource, mcpreq.Params{URI: "notes://n1"}, tmpl},
		{"complete prompt", reg.Complete, mcpreq.Params{Ref: mcpreq.Ref{Type: "ref/prompt", Name: "summarize_note"}}, prompt},
		{"complete template", reg.Complete, mcpreq.Params{Ref: mcpreq.Ref{Type: "ref/resource", URI: "notes://{id}"}}, tmpl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &approver{err: refused}
			hook := &callCounter{}
			p := tc.params
			raw, _ := json.Marshal(map[string]any{"name": p.Name, "uri": p.URI})
			_, err := tc.call(ctx, &Request{Client: &mcpreq.Client{}, Params: raw, Parsed: &p, Approve: a, Hook: hook})
			if err != refused {
				t.Fatalf("err = %v, want the approver's error as it is", err)
			}
			if hook.n != 0 {
				t.Fatalf("%d plugin calls after a refusal", hook.n)
			}
			if len(a.seen) != 1 {
				t.Fatalf("asked %d times", len(a.seen))
			}
			got := a.seen[0]
			if got.Plugin != tc.want.Plugin || !sameBytes(got.Def, tc.want.Def) || got.Template != tc.want.Template || got.Orig != tc.want.Orig {
				t.Fatalf("approved %+v, want %+v", got, tc.want)
			}
		})
	}
	// Approved, the call goes on to the plugin.
	a := &approver{}
	hook := &callCounter{}
	p := mcpreq.Params{Name: "search_notes", Arguments: json.RawMessage(`{"query":""}`)}
	raw, _ := json.Marshal(map[string]any{"name": p.Name, "arguments": map[string]any{"query": ""}})
	if _, err := reg.CallTool(ctx, &Request{Client: &mcpreq.Client{}, Params: raw, Parsed: &p, Approve: a, Hook: hook}); err != nil {
		t.Fatal(err)
	}
	if len(a.seen) != 1 || hook.n != 1 {
		t.Fatalf("approved call: asked %d times, %d plugin calls", len(a.seen), hook.n)
	}
}

// sameBytes reports whether a and b are the same memory: the catalog's
// own definition, not a copy.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && len(a) > 0 && &a[0] == &b[0]
}
