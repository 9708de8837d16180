package telemetry

import (
	"encoding/binary"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/protobuf/encoding/protowire"
)

// appendRequest appends the OTLP protobuf encoding of an
// ExportTraceServiceRequest (opentelemetry/proto/collector/trace/v1) of
// spans to b: what the standard exporter sends, written straight from
// the SDK's ended spans instead of through the generated protobuf
// structs, which cost about 4 µs of CPU per traced request (RATIONALE.md,
// "Spans are encoded for export by wasmcp"). Spans in a row of the same
// resource and scope share one ResourceSpans and ScopeSpans, as the
// SDK's batch of one tracer provider always does.
func appendRequest(b []byte, spans []sdktrace.ReadOnlySpan) []byte {
	for i := 0; i < len(spans); {
		res, scope := spans[i].Resource(), spans[i].InstrumentationScope()
		var rs, ss int
		b, rs = openField(b, 1) // ExportTraceServiceRequest.resource_spans
		b = appendResource(b, res)
		b, ss = openField(b, 2) // ResourceSpans.scope_spans
		b = appendScope(b, scope)
		for ; i < len(spans) && spans[i].Resource() == res && spans[i].InstrumentationScope() == scope; i++ {
			b = appendSpan(b, spans[i])
		}
		if url := scope.SchemaURL; url != "" {
			b = appendString(b, 3, url)
		}
		b = closeField(b, ss)
		if res != nil && res.SchemaURL() != "" {
			b = appendString(b, 3, res.SchemaURL())
		}
		b = closeField(b, rs)
	}
	return b
}

// openField appends the tag of a length-delimited field num and one byte
// for its length, and returns where its contents start; closeField
// writes the length once they are appended.
func openField(b []byte, num protowire.Number) ([]byte, int) {
	b = append(protowire.AppendTag(b, num, protowire.BytesType), 0)
	return b, len(b)
}

// closeField writes the length of the field whose contents start at at
// (openField's), moving them when it takes more than a byte.
func closeField(b []byte, at int) []byte {
	n := len(b) - at
	if n < 1<<7 {
		b[at-1] = byte(n)
		return b
	}
	extra := protowire.SizeVarint(uint64(n)) - 1
	for range extra {
		b = append(b, 0)
	}
	copy(b[at+extra:], b[at:at+n])
	protowire.AppendVarint(b[:at-1], uint64(n))
	return b
}

// appendResource appends the ResourceSpans.resource field of res, none
// for nil.
func appendResource(b []byte, res *resource.Resource) []byte {
	if res == nil {
		return b
	}
	b, at := openField(b, 1)
	for it := res.Iter(); it.Next(); {
		b = appendKeyValue(b, 1, it.Attribute())
	}
	return closeField(b, at)
}

// appendScope appends the ScopeSpans.scope field of scope, none for the
// zero scope.
func appendScope(b []byte, scope instrumentation.Scope) []byte {
	if scope == (instrumentation.Scope{}) {
		return b
	}
	b, at := openField(b, 1)
	if scope.Name != "" {
		b = appendString(b, 1, scope.Name)
	}
	if scope.Version != "" {
		b = appendString(b, 2, scope.Version)
	}
	for it := scope.Attributes.Iter(); it.Next(); {
		b = appendKeyValue(b, 3, it.Attribute())
	}
	return closeField(b, at)
}

// OTLP span flags: the W3C trace flags are the low byte; these say
// whether the parent is known to be remote, and whether it is.
const (
	flagHasIsRemote = 0x100
	flagIsRemote    = 0x200
)

// appendSpan appends s as a ScopeSpans.spans field.
func appendSpan(b []byte, s sdktrace.ReadOnlySpan) []byte {
	b, at := openField(b, 2)
	sc, parent := s.SpanContext(), s.Parent()
	tid, sid := sc.TraceID(), sc.SpanID()
	b = appendBytes(b, 1, tid[:])
	b = appendBytes(b, 2, sid[:])
	if ts := sc.TraceState().String(); ts != "" {
		b = appendString(b, 3, ts)
	}
	if parent.SpanID().IsValid() {
		pid := parent.SpanID()
		b = appendBytes(b, 4, pid[:])
	}
	b = appendString(b, 5, s.Name())
	if k := s.SpanKind(); k != 0 { // the SDK's kinds are OTLP's numbers
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(k))
	}
	b = appendFixed64(b, 7, unixNano(s.StartTime()))
	b = appendFixed64(b, 8, unixNano(s.EndTime()))
	for _, kv := range s.Attributes() {
		b = appendKeyValue(b, 9, kv)
	}
	b = appendCount(b, 10, s.DroppedAttributes())
	for _, e := range s.Events() {
		var eat int
		b, eat = openField(b, 11)
		b = appendFixed64(b, 1, unixNano(e.Time))
		b = appendString(b, 2, e.Name)
		for _, kv := range e.Attributes {
			b = appendKeyValue(b, 3, kv)
		}
		b = appendCount(b, 4, e.DroppedAttributeCount)
		b = closeField(b, eat)
	}
	b = appendCount(b, 12, s.DroppedEvents())
	for _, l := range s.Links() {
		var lat int
		b, lat = openField(b, 13)
		ltid, lsid := l.SpanContext.TraceID(), l.SpanContext.SpanID()
		b = appendBytes(b, 1, ltid[:])
		b = appendBytes(b, 2, lsid[:])
		if ts := l.SpanContext.TraceState().String(); ts != "" {
			b = appendString(b, 3, ts)
		}
		for _, kv := range l.Attributes {
			b = appendKeyValue(b, 4, kv)
		}
		b = appendCount(b, 5, l.DroppedAttributeCount)
		b = appendFixed32(b, 6, remoteFlags(uint32(l.SpanContext.TraceFlags()), l.SpanContext.IsRemote()))
		b = closeField(b, lat)
	}
	b = appendCount(b, 14, s.DroppedLinks())
	if st := s.Status(); st.Code != codes.Unset {
		var sat int
		b, sat = openField(b, 15)
		if st.Description != "" {
			b = appendString(b, 2, st.Description)
		}
		code := uint64(1) // STATUS_CODE_OK
		if st.Code == codes.Error {
			code = 2 // STATUS_CODE_ERROR
		}
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, code)
		b = closeField(b, sat)
	}
	b = appendFixed32(b, 16, remoteFlags(uint32(sc.TraceFlags()), parent.IsRemote()))
	return closeField(b, at)
}

// remoteFlags are the OTLP flags of W3C trace flags and whether the
// parent (of a span; the linked span, of a link) is remote.
func remoteFlags(flags uint32, remote bool) uint32 {
	flags = flags&0xff | flagHasIsRemote
	if remote {
		flags |= flagIsRemote
	}
	return flags
}

// appendKeyValue appends kv as the KeyValue field num.
func appendKeyValue(b []byte, num protowire.Number, kv attribute.KeyValue) []byte {
	b, at := openField(b, num)
	b = appendString(b, 1, string(kv.Key))
	b = appendAnyValue(b, 2, kv.Value)
	return closeField(b, at)
}

// appendAnyValue appends v as the AnyValue field num.
func appendAnyValue(b []byte, num protowire.Number, v attribute.Value) []byte {
	b, at := openField(b, num)
	switch v.Type() {
	case attribute.BOOL:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, protowire.EncodeBool(v.AsBool()))
	case attribute.INT64:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		b = appendFixed64(b, 4, math.Float64bits(v.AsFloat64()))
	case attribute.STRING:
		b = appendString(b, 1, v.AsString())
	case attribute.BYTESLICE:
		b = appendBytes(b, 7, v.AsByteSlice())
	case attribute.BOOLSLICE:
		b = appendArray(b, v.AsBoolSlice(), attribute.BoolValue)
	case attribute.INT64SLICE:
		b = appendArray(b, v.AsInt64Slice(), attribute.Int64Value)
	case attribute.FLOAT64SLICE:
		b = appendArray(b, v.AsFloat64Slice(), attribute.Float64Value)
	case attribute.STRINGSLICE:
		b = appendArray(b, v.AsStringSlice(), attribute.StringValue)
	case attribute.SLICE:
		b = appendArray(b, v.AsSlice(), func(v attribute.Value) attribute.Value { return v })
	case attribute.MAP:
		var lat int
		b, lat = openField(b, 6) // kvlist_value
		for _, kv := range v.AsMap() {
			b = appendKeyValue(b, 1, kv)
		}
		b = closeField(b, lat)
	case attribute.EMPTY: // an AnyValue without a value
	default:
		b = appendString(b, 1, "INVALID") // as the OpenTelemetry exporters write it
	}
	return closeField(b, at)
}

// appendArray appends the AnyValue.array_value field of vs, each made a
// Value by value.
func appendArray[T any](b []byte, vs []T, value func(T) attribute.Value) []byte {
	b, at := openField(b, 5)
	for _, v := range vs {
		b = appendAnyValue(b, 1, value(v))
	}
	return closeField(b, at)
}

// appendString appends the string field num, made valid UTF-8 (a
// receiver refuses a batch with a string that is not).
func appendString(b []byte, num protowire.Number, s string) []byte {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendFixed64(b []byte, num protowire.Number, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(protowire.AppendTag(b, num, protowire.Fixed64Type), v)
}

func appendFixed32(b []byte, num protowire.Number, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(protowire.AppendTag(b, num, protowire.Fixed32Type), v)
}

// appendCount appends the uint32 field num unless n is 0 (its default),
// held to the uint32 range.
func appendCount(b []byte, num protowire.Number, n int) []byte {
	if n <= 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(min(uint64(n), math.MaxUint32)))
}

// unixNano is t in Unix nanoseconds, 0 for a time before 1970.
func unixNano(t time.Time) uint64 { return uint64(max(0, t.UnixNano())) }
