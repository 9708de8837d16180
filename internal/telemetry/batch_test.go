package telemetry

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// TestBatching: a full batch is exported without waiting for the
// schedule delay, in one request; spans beyond the queue are dropped and
// reported; shutdown exports what is left.
func TestBatching(t *testing.T) {
	var mu sync.Mutex
	var got []int // spans per export request
	block := make(chan struct{})
	blocked := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("export: %v", err)
		}
		n := 0
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				n += len(ss.Spans)
			}
		}
		mu.Lock()
		got = append(got, n)
		b := blocked
		mu.Unlock()
		if b {
			<-block
		}
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", srv.URL+"/v1/traces")
	exp, err := newHTTPExporter(&Config{})
	if err != nil {
		t.Fatal(err)
	}
	var errMu sync.Mutex
	var errs []error
	tr := newTracer(newSampler(false, 1), exp, nil, encodeScope("t"), time.Hour, 8, 4, func(err error) {
		errMu.Lock()
		errs = append(errs, err)
		errMu.Unlock()
	})
	end := func(n int) {
		for range n {
			var s span
			tr.startRoot(&s, &spanContext{}, "x", kindServer, time.Now())
			s.end = time.Now().UnixNano()
			w := writeSpan(nil, &s)
			tr.queue(w.end(), 1)
		}
	}
	waitFor := func(want int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			mu.Lock()
			n := len(got)
			mu.Unlock()
			if n >= want {
				return
			}
		}
		t.Fatalf("%d exports, want %d", len(got), want)
	}
	end(4) // a full batch, with an hour's delay
	waitFor(1)
	mu.Lock()
	blocked = true
	mu.Unlock()
	end(4) // exported, the receiver holds the request
	waitFor(2)
	end(10) // 8 queued, 2 dropped
	mu.Lock()
	blocked = false
	mu.Unlock()
	close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tr.shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	end(1) // after shutdown: dropped, never sent
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range got {
		total += n
	}
	if got[0] != 4 || got[1] != 4 || total != 16 {
		t.Errorf("exports of %v spans, want 4, 4 and 8 in all", got)
	}
	errMu.Lock()
	defer errMu.Unlock()
	var d errDropped
	if len(errs) != 1 || !errors.As(errs[0], &d) || d != 2 {
		t.Errorf("errors %v, want 2 spans dropped", errs)
	}
}

// TestSpanValuesCleaned: span names and string attributes from clients
// are cut to maxValueLen bytes at a character boundary and made valid
// UTF-8, so that the batch decodes (a receiver refuses invalid UTF-8).
func TestSpanValuesCleaned(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain", "echo", "echo"},
		{"long", strings.Repeat("a", 100_000), strings.Repeat("a", maxValueLen)},
		{"invalid UTF-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"multibyte at the cut", strings.Repeat("a", maxValueLen-1) + "é" + "tail", strings.Repeat("a", maxValueLen-1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s span
			s.sampled = true
			newIDs(&s.spanContext, nil)
			s.name, s.target = "tools/call", c.in
			spans := framed(nil, &s, "gen_ai.tool.name", c.in, "x", c.in)
			body := append(appendRequestHead(nil, encodeResource(nil), encodeScope("t"), len(spans)), spans...)
			var req collectortrace.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Fatalf("decode: %v", err)
			}
			got := req.ResourceSpans[0].ScopeSpans[0].Spans[0]
			want := c.want
			if got.Name != "tools/call "+want {
				t.Errorf("name %.40q", got.Name)
			}
			for _, a := range got.Attributes {
				if a.GetValue().GetStringValue() != want {
					t.Errorf("%s = %.40q, want %.40q", a.Key, a.GetValue().GetStringValue(), want)
				}
			}
		})
	}
}

// TestSpanFrame: a span framed in place is one ScopeSpans.spans field
// after what its buffer held, whatever its length takes (one, two or
// three bytes), and decodes with its attributes.
func TestSpanFrame(t *testing.T) {
	var s span
	newIDs(&s.spanContext, nil)
	s.name = "x"
	for _, c := range []struct {
		name string
		big  int // attributes of 1000 bytes before the one that varies
	}{{"short", 0}, {"long", 16}} {
		t.Run(c.name, func(t *testing.T) {
			var kvs []string
			for range c.big {
				kvs = append(kvs, "k", strings.Repeat("v", 1000))
			}
			sizes := map[int]bool{}
			for n := range 1000 {
				b := framed([]byte("prefix"), &s, append(kvs, "k", strings.Repeat("w", n))...)
				rest, ok := bytes.CutPrefix(b, []byte("prefix"))
				num, typ, tn := protowire.ConsumeTag(rest)
				msg, mn := protowire.ConsumeBytes(rest[max(tn, 0):])
				var got tracepb.Span
				switch {
				case !ok || num != 2 || typ != protowire.BytesType || mn < 0 || tn+mn != len(rest):
					t.Fatalf("span of %d bytes framed as %x...", len(rest), rest[:12])
				case proto.Unmarshal(msg, &got) != nil || len(got.Attributes) != c.big+1 || len(got.Attributes[c.big].Value.GetStringValue()) != n:
					t.Fatalf("span of %d bytes does not decode with its %d attributes", len(msg), c.big+1)
				}
				sizes[mn-len(msg)] = true
			}
			if len(sizes) != 2 {
				t.Errorf("length sizes %v: the spans did not cross a boundary", sizes)
			}
		})
	}
}

// framed appends s with the string attributes kvs (key, value pairs) to
// b as a ScopeSpans.spans field.
func framed(b []byte, s *span, kvs ...string) []byte {
	w := writeSpan(&b, s)
	for i := 0; i+1 < len(kvs); i += 2 {
		w.str(kvs[i], kvs[i+1])
	}
	return *w.end()
}
