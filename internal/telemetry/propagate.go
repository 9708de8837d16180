package telemetry

import (
	"encoding/hex"
	"fmt"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/trace"
)

// W3C Trace Context and Baggage, read from a request and written into
// the plugins' outbound requests.

// parseTraceparent parses a W3C traceparent value; ok is false when it is
// not a valid one (then the request starts a new trace).
func parseTraceparent(v string) (sc spanContext, ok bool) {
	// version "-" trace-id "-" parent-id "-" flags, 55 characters for
	// version 00; later versions may append "-" and more.
	if len(v) < 55 || v[2] != '-' || v[35] != '-' || v[52] != '-' {
		return sc, false
	}
	var ver [1]byte
	if !lowerHex(v[0:2]) {
		return sc, false
	}
	if _, err := hex.Decode(ver[:], []byte(v[0:2])); err != nil || ver[0] == 0xff {
		return sc, false
	}
	if (ver[0] == 0 && len(v) != 55) || (len(v) > 55 && v[55] != '-') {
		return sc, false
	}
	var flags [1]byte
	if !lowerHex(v[3:35]) || !lowerHex(v[36:52]) || !lowerHex(v[53:55]) {
		return sc, false
	}
	_, _ = hex.Decode(sc.traceID[:], []byte(v[3:35]))
	_, _ = hex.Decode(sc.spanID[:], []byte(v[36:52]))
	_, _ = hex.Decode(flags[:], []byte(v[53:55]))
	sc.sampled = flags[0]&1 == 1
	return sc, sc.valid()
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// traceparent is the W3C traceparent value of sc.
func traceparent(sc *spanContext) string {
	var b [55]byte
	copy(b[:], "00-")
	hex.Encode(b[3:35], sc.traceID[:])
	b[35] = '-'
	hex.Encode(b[36:52], sc.spanID[:])
	copy(b[52:], "-00")
	if sc.sampled {
		b[54] = '1'
	}
	return string(b[:])
}

// validTraceState returns v if it is a valid W3C tracestate, else "".
func validTraceState(v string) string { return valid(v, trace.ParseTraceState) }

// validBaggage returns v if it is a valid W3C baggage, else "".
func validBaggage(v string) string { return valid(v, baggage.Parse) }

// valid returns v as parse reads it back, or "" when v is empty or parse
// refuses it.
func valid[T fmt.Stringer](v string, parse func(string) (T, error)) string {
	if v == "" {
		return ""
	}
	p, err := parse(v)
	if err != nil {
		return ""
	}
	return p.String()
}

// inject sets the trace context headers of sc (and baggage) on h.
func inject(h http.Header, sc *spanContext, bag string) {
	h.Set("traceparent", traceparent(sc))
	if sc.traceState != "" {
		h.Set("tracestate", sc.traceState)
	}
	if bag != "" {
		h.Set("baggage", bag)
	}
}
