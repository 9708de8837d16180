package telemetry

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// FuzzObserve feeds arbitrary (valid JSON) params (with their _meta trace context), a
// traceparent header and a tool result through the observer, the plugin
// call hook and AddUsage: nothing panics, and a result that was a JSON
// object stays one, with the usage under UsageKey.
func FuzzObserve(f *testing.F) {
	f.Add([]byte(`{"name":"echo","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"a=b","baggage":"k=v"}}`),
		"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", []byte(`{"content":[],"_meta":{"x":1}}`))
	f.Add([]byte(`{"name":"a\"b","_meta":{"traceparent":"zz"}}`), "garbage", []byte(`{"isError":true}`))
	f.Add([]byte(`{"_meta":[]}`), "", []byte(`[]`))
	f.Add([]byte(`{"name":1,"_meta":{"traceparent":"00-00000000000000000000000000000000-0000000000000000-01"}}`), "", []byte(`{"_meta":null}`))
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER"} {
		f.Setenv(k, "")
	}
	tel, err := New(context.Background(), Config{Endpoint: "http://127.0.0.1:9", Metrics: true, UsageInMeta: true, Audit: true})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_ = tel.Shutdown(ctx)
	})
	hook := tel.CallHook()
	f.Fuzz(func(t *testing.T, params []byte, traceparent string, result []byte) {
		if !json.Valid(params) {
			params = []byte("{}") // the engine passes valid JSON only
		}
		hdr := http.Header{}
		hdr.Set("traceparent", traceparent)
		ri := &mcp.RequestInfo{Request: &mcp.Request{Method: "tools/call", Params: params, SessionID: "s"}, ID: "1",
			Transport: "tcp", Header: hdr, Start: time.Now()}
		ctx := tel.RequestStart(context.Background(), ri)
		cctx, _ := hook.CallStart(ctx, "p", "tools/call", "t", nil)
		hook.CallEnd(cctx, nil)
		out := tel.AddUsage(ctx, result)
		var obj map[string]json.RawMessage
		if json.Unmarshal(result, &obj) == nil && obj != nil {
			var got struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("AddUsage(%q) = %q: %v", result, out, err)
			}
			if m, ok := obj["_meta"]; (!ok || string(m) == "null" || m[0] == '{') && got.Meta[UsageKey] == nil {
				t.Fatalf("AddUsage(%q) = %q: no usage", result, out)
			}
		}
		if !json.Valid(out) {
			out = nil // as the engine: results are valid JSON
		}
		tel.RequestEnd(ctx, ri, out, nil)
		tel.RequestAnswered(ri, &jsonrpc.Error{Code: -32600, Data: out}) // Data: valid JSON, as the engine makes it
	})
}

// FuzzTraceparent: reading a traceparent header never panics, and what
// is taken is written back (inject) as it was read, trace, span and
// sampled flag; the W3C specification's valid examples are taken.
func FuzzTraceparent(f *testing.F) {
	for _, s := range []string{
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
		"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-later",
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		sc, ok := readTraceparent(v)
		if !ok {
			return
		}
		h := http.Header{}
		inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), h)
		back, ok2 := readTraceparent(h.Get("traceparent"))
		if !ok2 || !back.Equal(sc) {
			t.Fatalf("%q read as %v, written %q, read back %v %v", v, sc, h.Get("traceparent"), back, ok2)
		}
	})
}

// readTraceparent is the span context a request with the traceparent
// header v continues; ok is false when it starts a new trace.
func readTraceparent(v string) (trace.SpanContext, bool) {
	h := http.Header{}
	h.Set("traceparent", v)
	sc := trace.SpanContextFromContext(extractFrom(context.Background(), nil, h))
	return sc, sc.IsValid()
}

// TestParseTraceparent: the W3C rules (version ff and all-zero IDs
// invalid, lowercase hex, exact length for version 00, a later version's
// extra fields after "-"), in the header and in params._meta; a _meta
// traceparent wins over the header.
func TestParseTraceparent(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"
	for _, c := range []struct {
		in      string
		ok      bool
		sampled bool
	}{
		{"00-" + id + "-01", true, true},
		{"00-" + id + "-00", true, false},
		{"00-" + id + "-03", true, true},
		{"01-" + id + "-01-x", true, true},
		{"01-" + id + "-01x", false, false},
		{"00-" + id + "-01-x", false, false},
		{"ff-" + id + "-01", false, false},
		{"00-" + strings.ToUpper(id) + "-01", false, false},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", false, false},
		{"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", false, false},
		{"00-" + id + "-0", false, false},
		{"0x-" + id + "-01", false, false},
	} {
		sc, ok := readTraceparent(c.in)
		if ok != c.ok || (ok && sc.IsSampled() != c.sampled) {
			t.Errorf("header traceparent %q: sampled %v, ok %v; want %v, %v", c.in, sc.IsSampled(), ok, c.sampled, c.ok)
		}
		hdr := http.Header{}
		hdr.Set("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		meta, _ := json.Marshal(map[string]string{"traceparent": c.in})
		sc = trace.SpanContextFromContext(extractFrom(context.Background(), meta, hdr))
		if sc.IsValid() != c.ok || (c.ok && sc.IsSampled() != c.sampled) {
			t.Errorf("_meta traceparent %q: %v; want ok %v, sampled %v", c.in, sc, c.ok, c.sampled)
		}
	}
}
