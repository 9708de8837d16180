package telemetry

import (
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
			tr.finish(&s, time.Now(), nil)
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
			attrs := []kv{{key: "gen_ai.tool.name", str: c.in, typ: 's'}, {key: "x", str: c.in, typ: 's'}}
			spans := appendFramed(nil, &s, attrs)
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

// TestAppendFramed: a span framed in place is the ScopeSpans.spans field
// protowire writes, whatever its length takes (one, two or three bytes).
func TestAppendFramed(t *testing.T) {
	var s span
	newIDs(&s.spanContext, nil)
	s.name = "x"
	for _, c := range []struct {
		name string
		big  int // attributes of 1000 bytes before the one that varies
	}{{"short", 0}, {"long", 16}} {
		t.Run(c.name, func(t *testing.T) {
			attrs := make([]kv, c.big+1)
			for i := range c.big {
				attrs[i] = kv{key: "k", str: strings.Repeat("v", 1000), typ: 's'}
			}
			sizes := map[int]bool{}
			for n := range 1000 {
				attrs[c.big] = kv{key: "k", str: strings.Repeat("w", n), typ: 's'}
				msg := appendSpan(nil, &s, attrs)
				want := protowire.AppendBytes(protowire.AppendTag([]byte("prefix"), 2, protowire.BytesType), msg)
				if got := appendFramed([]byte("prefix"), &s, attrs); string(got) != string(want) {
					t.Fatalf("span of %d bytes framed as %x..., want %x...", len(msg), got[:12], want[:12])
				}
				sizes[protowire.SizeVarint(uint64(len(msg)))] = true
			}
			if len(sizes) != 2 {
				t.Errorf("length sizes %v: the spans did not cross a boundary", sizes)
			}
		})
	}
}
