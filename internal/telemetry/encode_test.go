package telemetry

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// captureClient is an OTLP client that keeps what the OpenTelemetry
// exporter would send: the protobuf structs of its batch.
type captureClient struct{ got []*tracepb.ResourceSpans }

func (c *captureClient) Start(context.Context) error { return nil }
func (c *captureClient) Stop(context.Context) error  { return nil }
func (c *captureClient) UploadTraces(_ context.Context, rs []*tracepb.ResourceSpans) error {
	c.got = rs
	return nil
}

// standard is the OpenTelemetry exporter's request of spans.
func standard(t *testing.T, spans []sdktrace.ReadOnlySpan) *collectortrace.ExportTraceServiceRequest {
	t.Helper()
	c := &captureClient{}
	exp, err := otlptrace.New(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportSpans(context.Background(), spans); err != nil {
		t.Fatal(err)
	}
	req := &collectortrace.ExportTraceServiceRequest{ResourceSpans: c.got}
	sortResources(req)
	// What differs in form only: the standard exporter sends an unset
	// status as an empty message (appendRequest leaves it out), and no
	// tracestate for a link.
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				if s.Status != nil && s.Status.Code == tracepb.Status_STATUS_CODE_UNSET {
					s.Status = nil
				}
			}
		}
	}
	return req
}

// ours is appendRequest's request of spans, decoded; the links'
// tracestate is left out as the standard exporter does.
func ours(t *testing.T, spans []sdktrace.ReadOnlySpan) *collectortrace.ExportTraceServiceRequest {
	t.Helper()
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(appendRequest(nil, spans), &req); err != nil {
		t.Fatalf("appendRequest: %v", err)
	}
	sortResources(&req)
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				for _, l := range s.Links {
					l.TraceState = ""
				}
			}
		}
	}
	return &req
}

// sortResources puts the ResourceSpans of req, and their ScopeSpans, in
// the order of their resources and scopes (the OpenTelemetry exporter
// groups them in a map).
func sortResources(req *collectortrace.ExportTraceServiceRequest) {
	key := func(m proto.Message) string {
		b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(m)
		return string(b)
	}
	slices.SortStableFunc(req.ResourceSpans, func(a, b *tracepb.ResourceSpans) int {
		return strings.Compare(key(a.Resource), key(b.Resource))
	})
	for _, rs := range req.ResourceSpans {
		slices.SortStableFunc(rs.ScopeSpans, func(a, b *tracepb.ScopeSpans) int { return strings.Compare(key(a.Scope), key(b.Scope)) })
	}
}

// sameEncoding fails t unless appendRequest encodes spans as the
// standard exporter does.
func sameEncoding(t *testing.T, spans []sdktrace.ReadOnlySpan) {
	t.Helper()
	want, got := standard(t, spans), ours(t, spans)
	if !proto.Equal(got, want) {
		t.Fatalf("appendRequest differs from the OpenTelemetry exporter:\n got %v\nwant %v", got, want)
	}
}

var (
	testTrace = trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	testSpan  = trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
)

// stub is a span of every field and attribute type, its strings s.
func stub(s string, n int64, f float64, on bool, code codes.Code, remote bool) tracetest.SpanStub {
	ts, _ := trace.ParseTraceState("vendor=x")
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTrace, SpanID: testSpan, TraceFlags: trace.FlagsSampled, TraceState: ts})
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: testTrace, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, Remote: remote})
	attrs := []attribute.KeyValue{
		attribute.String("s", s), attribute.Int64("i", n), attribute.Float64("f", f), attribute.Bool("b", on),
		attribute.StringSlice("ss", []string{s, "", s}), attribute.Int64Slice("is", []int64{n, -n}),
		attribute.Float64Slice("fs", []float64{f}), attribute.BoolSlice("bs", []bool{on, !on}),
		{Key: attribute.Key(s), Value: attribute.Value{}},
	}
	start := time.Unix(1_700_000_000, 123)
	return tracetest.SpanStub{
		Name: s, SpanContext: sc, Parent: parent, SpanKind: trace.SpanKind(n&7) % 6,
		StartTime: start, EndTime: start.Add(time.Duration(n & 0xffff)),
		Attributes: attrs, DroppedAttributes: int(n & 3),
		Events: []sdktrace.Event{{Name: s, Time: start, Attributes: attrs[:2], DroppedAttributeCount: 1}},
		Links:  []sdktrace.Link{{SpanContext: parent, Attributes: attrs[2:4], DroppedAttributeCount: 2}},
		Status: sdktrace.Status{Code: code, Description: s}, DroppedEvents: 1, DroppedLinks: 2,
		Resource: resource.NewSchemaless(attribute.String("service.name", "wasmcp"), attribute.Int("n", int(n&0xff))),
		InstrumentationScope: instrumentation.Scope{Name: scopeName, Version: "v1", SchemaURL: "https://x/" + s,
			Attributes: attribute.NewSet(attribute.String("k", s))},
	}
}

// TestEncodeMatchesStandard: appendRequest encodes what the OpenTelemetry
// exporter sends, field for field: every attribute type, events, links,
// status, a remote parent, one span and many (the lengths of 1, 2 and 3
// bytes), spans of two resources.
func TestEncodeMatchesStandard(t *testing.T) {
	one := func(s string, code codes.Code) []sdktrace.ReadOnlySpan {
		return tracetest.SpanStubs{stub(s, 42, 0.5, true, code, true)}.Snapshots()
	}
	many := tracetest.SpanStubs{}
	for i := range 300 { // of one resource and scope, as the SDK's batches are
		s := stub(strings.Repeat("x", i), int64(i), float64(i)/3, i%2 == 0, codes.Code(i%3), i%2 == 1)
		if i > 0 {
			s.Resource, s.InstrumentationScope = many[0].Resource, many[0].InstrumentationScope
		}
		many = append(many, s)
	}
	other := stub("other", 1, 1, false, codes.Ok, false)
	other.Resource = resource.NewSchemaless(attribute.String("service.name", "other"))
	for _, c := range []struct {
		name  string
		spans []sdktrace.ReadOnlySpan
	}{
		{"short", one("echo", codes.Error)},
		{"unset status", one("echo", codes.Unset)},
		{"ok status", one("echo", codes.Ok)},
		{"long", one(strings.Repeat("é", 10_000), codes.Error)},
		{"many", many.Snapshots()},
		{"two resources", tracetest.SpanStubs{stub("a", 1, 1, true, codes.Unset, false), other}.Snapshots()},
		{"none", nil},
	} {
		t.Run(c.name, func(t *testing.T) { sameEncoding(t, c.spans) })
	}
}

// FuzzEncode: appendRequest's encoding always decodes (its strings made
// valid UTF-8), and for valid strings it is the OpenTelemetry exporter's.
func FuzzEncode(f *testing.F) {
	f.Add("tools/call echo", int64(7), 0.25, true, uint8(2), true)
	f.Add("", int64(-1), -0.0, false, uint8(0), false)
	f.Add("a\xffb", int64(math.MaxInt64), math.Inf(1), true, uint8(1), true)
	f.Fuzz(func(t *testing.T, s string, n int64, fl float64, on bool, code uint8, remote bool) {
		spans := tracetest.SpanStubs{stub(s, n, fl, on, codes.Code(code%3), remote)}.Snapshots()
		got := ours(t, spans)
		if utf8.ValidString(s) && !math.IsNaN(fl) {
			if want := standard(t, spans); !proto.Equal(got, want) {
				t.Fatalf("appendRequest differs from the OpenTelemetry exporter:\n got %v\nwant %v", got, want)
			}
		}
	})
}
