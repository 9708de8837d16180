package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

// W3C Trace Context and Baggage, read from a request and written into
// the plugins' outbound requests by the OpenTelemetry propagators.

// propagator reads and writes traceparent, tracestate and baggage.
var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// metaCarrier is a params._meta object (SEP-414) as a read-only
// propagation.TextMapCarrier.
type metaCarrier []byte

// Get implements propagation.TextMapCarrier: the string member key.
func (m metaCarrier) Get(key string) string { return stringMember(m, key) }

// Set implements propagation.TextMapCarrier; a request's _meta is not
// written.
func (metaCarrier) Set(string, string) {}

// Keys implements propagation.TextMapCarrier; the propagators read the
// keys they know by name.
func (metaCarrier) Keys() []string { return nil }

// extractFrom returns ctx with the trace context and baggage of a
// request: from its params._meta when that has a traceparent, else from
// its HTTP headers (nil for none); ctx itself when neither has any.
func extractFrom(ctx context.Context, meta []byte, header http.Header) context.Context {
	if meta != nil && stringMember(meta, "traceparent") != "" {
		return propagator.Extract(ctx, metaCarrier(meta))
	}
	if header == nil || header.Get("traceparent") == "" {
		return ctx
	}
	return propagator.Extract(ctx, propagation.HeaderCarrier(header))
}

// inject sets the trace context and baggage of ctx on h.
func inject(ctx context.Context, h http.Header) { propagator.Inject(ctx, propagation.HeaderCarrier(h)) }
