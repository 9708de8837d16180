package wasmcp

import (
	"bytes"
	"encoding/json"
	"testing"
)

// checkResult checks that appendResult writes what marshal writes, or
// leaves r to it; it reports whether appendResult wrote r.
func checkResult(t *testing.T, r *Result) bool {
	t.Helper()
	want, err := marshal(r)
	got, ok := appendResult(nil, r)
	if err != nil {
		if ok {
			t.Fatalf("%+v: appendResult wrote %s where marshal fails: %v", r, got, err)
		}
		return false
	}
	if ok && !bytes.Equal(got, want) {
		t.Fatalf("%+v:\nappendResult %s\nmarshal      %s", r, got, want)
	}
	return ok
}

func TestAppendResult(t *testing.T) {
	prio := 0.5
	for _, r := range []*Result{
		{},
		TextResult("hello"),
		TextResult("<a & b>\n\t\b\f\r\x00\x1f\"\\ é \u2028\u2029 \xff\xfe end"),
		ErrorResult("bad"),
		NewResult(Text("a"), Image([]byte{1, 2}, "image/png"), Text("b")),
		{Content: []Content{{Type: TypeText, Text: "x", Annotations: &Annotations{Priority: &prio}}}},
		{Content: []Content{{Type: TypeText, Text: "x", Meta: map[string]any{"k": 1}}}},
		{Content: []Content{{Type: "bogus"}}},
		{StructuredContent: json.RawMessage(` { "a" : [ 1 , "b c" , "\" x" ] } `)},
		{StructuredContent: json.RawMessage(`{"a":`)},
		{StructuredContent: json.RawMessage(nil)},
		{StructuredContent: map[string]any{"z": 1, "a": "<"}},
		{StructuredContent: func() {}},
		{Meta: map[string]any{"b": 2, "a": 1}},
		{Meta: map[string]any{}},
	} {
		checkResult(t, r)
	}
	// The common results take the fast path.
	for _, r := range []*Result{
		TextResult("hello \n \xff"),
		{Content: []Content{Text("a"), Text("b")}, StructuredContent: json.RawMessage(`{"a":1}`), IsError: true},
	} {
		if !checkResult(t, r) {
			t.Errorf("%+v: appendResult left it to marshal", r)
		}
	}
}

func FuzzAppendResult(f *testing.F) {
	f.Add("hello", []byte(`{"a":1}`), false, "k")
	f.Add("\x00<\u2028\xff", []byte(" [ 1 , 2 ] "), true, "")
	f.Fuzz(func(t *testing.T, text string, structured []byte, isError bool, meta string) {
		r := &Result{Content: []Content{Text(text), Text(meta)}, IsError: isError}
		if len(structured) > 0 {
			r.StructuredContent = json.RawMessage(structured)
		}
		if meta != "" {
			r.Meta = map[string]any{meta: text}
		}
		checkResult(t, r)
	})
}
