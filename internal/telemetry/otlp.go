package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"golang.org/x/net/http/httpproxy"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// The OTLP protobuf encoding of spans (opentelemetry/proto/trace/v1),
// written by hand: a span is encoded once, when it ends, straight into
// its batch: first its own fields (spanWriter.begin), then each attribute
// and its status as the caller adds them (protobuf fields may come in any
// order), then its frame's length (spanWriter.end).

// spanWriter encodes one span as a ScopeSpans.spans field at the end of
// its buffer.
type spanWriter struct {
	bp *[]byte // the buffer, from scratch
	b  []byte
	at int // where the span's field starts
}

var scratch = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// writeSpan starts encoding s, ended already, at the end of *bp; a nil
// bp gets a scratch buffer. Two bytes are kept for the frame's length,
// which most spans need (end moves the span when it needs another
// count).
func writeSpan(bp *[]byte, s *span) spanWriter {
	if bp == nil {
		bp = scratch.Get().(*[]byte)
		*bp = (*bp)[:0]
	}
	b := *bp
	at := len(b)
	b = append(b, 2<<3|byte(protowire.BytesType), 0, 0)
	b = append(append(b, 1<<3|byte(protowire.BytesType), 16), s.traceID[:]...)
	b = append(append(b, 2<<3|byte(protowire.BytesType), 8), s.spanID[:]...)
	if s.traceState != "" { // validated: ASCII, at most 32 members
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, s.traceState)
	}
	if s.parentID != [8]byte{} {
		b = append(append(b, 4<<3|byte(protowire.BytesType), 8), s.parentID[:]...)
	}
	b = append(b, 5<<3|byte(protowire.BytesType))
	name, target := clean(s.name), clean(s.target)
	if target == "" {
		b = protowire.AppendString(b, name)
	} else { // name + " " + target, without building the string
		b = protowire.AppendVarint(b, uint64(len(name)+1+len(target)))
		b = append(append(append(b, name...), ' '), target...)
	}
	b = append(b, 6<<3|byte(protowire.VarintType), s.kind) // a kind is below 128
	b = binary.LittleEndian.AppendUint64(append(b, 7<<3|byte(protowire.Fixed64Type)), uint64(s.start))
	b = binary.LittleEndian.AppendUint64(append(b, 8<<3|byte(protowire.Fixed64Type)), uint64(s.end))
	// flags: the W3C trace flags, and whether the parent is remote.
	flags := uint32(0x100)
	if s.sampled {
		flags |= 1
	}
	if s.remote {
		flags |= 0x200
	}
	b = append(b, 16<<3|byte(protowire.Fixed32Type)|0x80, 1) // field 16: a two-byte tag
	b = binary.LittleEndian.AppendUint32(b, flags)
	return spanWriter{bp: bp, b: b, at: at}
}

// str adds the string attribute key = v.
func (w *spanWriter) str(key, v string) { w.b = appendStrKV(w.b, 9, key, v) }

// int adds the int attribute key = v.
func (w *spanWriter) int(key string, v int64) { w.b = appendIntKV(w.b, 9, key, uint64(v), 3) }

// float adds the double attribute key = v.
func (w *spanWriter) float(key string, v float64) { w.b = appendFloatKV(w.b, 9, key, v) }

// encoded adds an attribute encodedAttr encoded.
func (w *spanWriter) encoded(enc string) { w.b = append(w.b, enc...) }

// fail adds error.type and the error status, described by msg ("" for
// none).
func (w *spanWriter) fail(errType, msg string) {
	w.str("error.type", errType)
	b := protowire.AppendTag(w.b, 15, protowire.BytesType)
	n := 2 // the code field
	if msg != "" {
		n += 1 + protowire.SizeBytes(len(msg))
	}
	b = protowire.AppendVarint(b, uint64(n))
	if msg != "" {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, msg)
	}
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	w.b = protowire.AppendVarint(b, 2) // STATUS_CODE_ERROR
}

// end writes the span's frame length and returns its buffer.
func (w *spanWriter) end() *[]byte {
	b, i := w.b, w.at
	n := len(b) - i - 3
	switch {
	case n < 1<<7:
		b[i+1] = byte(n)
		b = append(b[:i+2], b[i+3:]...)
	case n < 1<<14:
		b[i+1], b[i+2] = byte(n)|0x80, byte(n>>7)
	default:
		msg := append([]byte(nil), b[i+3:]...)
		b = append(protowire.AppendVarint(b[:i+1], uint64(n)), msg...)
	}
	*w.bp = b
	return w.bp
}

// maxValueLen bounds a span name's parts and a string attribute, in
// bytes: many come from the client (tool names, URIs, ids, methods).
const maxValueLen = 1024

// clean returns s cut to maxValueLen bytes (at a character boundary) and
// with invalid UTF-8 replaced: a protobuf string must be valid UTF-8, or
// the receiver refuses the whole batch.
func clean(s string) string {
	if len(s) <= 32 { // most are short and ASCII: checked here, without a call
		i := 0
		for i < len(s) && s[i] < utf8.RuneSelf {
			i++
		}
		if i == len(s) {
			return s
		}
	}
	if len(s) > maxValueLen {
		i := maxValueLen
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return s
}

// encodedAttr is the span attribute (a Span.attributes field) key = v,
// encoded.
func encodedAttr(key, v string) string { return string(appendStrKV(nil, 9, key, v)) }

// appendKVHead appends the head of a KeyValue as field num (below 16):
// its tag and length, its key, and the tag and length of its AnyValue,
// whose field of vlen bytes follows.
func appendKVHead(b []byte, num protowire.Number, key string, vlen int) []byte {
	if n := len(key) + vlen; n < 124 { // every length fits a byte
		b = append(b, byte(num)<<3|byte(protowire.BytesType), byte(n+4), 1<<3|byte(protowire.BytesType), byte(len(key)))
		return append(append(b, key...), 2<<3|byte(protowire.BytesType), byte(vlen))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(1+protowire.SizeBytes(len(key))+1+protowire.SizeBytes(vlen)))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendString(b, key)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendVarint(b, uint64(vlen))
}

// appendStrKV appends the KeyValue key = v (a string, cleaned) as field
// num.
func appendStrKV(b []byte, num protowire.Number, key, v string) []byte {
	v = clean(v)
	if n := len(key) + len(v); n < 120 { // every length fits a byte
		b = append(b, byte(num)<<3|byte(protowire.BytesType), byte(n+6), 1<<3|byte(protowire.BytesType), byte(len(key)))
		b = append(b, key...)
		b = append(b, 2<<3|byte(protowire.BytesType), byte(len(v)+2), 1<<3|byte(protowire.BytesType), byte(len(v)))
		return append(b, v...)
	}
	b = appendKVHead(b, num, key, 1+protowire.SizeBytes(len(v)))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendString(b, v)
}

// appendIntKV appends the KeyValue key = v as field num, v an int
// (AnyValue field 3) or a bool (field 2).
func appendIntKV(b []byte, num protowire.Number, key string, v uint64, field protowire.Number) []byte {
	b = appendKVHead(b, num, key, 1+protowire.SizeVarint(v))
	b = protowire.AppendTag(b, field, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// appendFloatKV appends the KeyValue key = v (a double) as field num.
func appendFloatKV(b []byte, num protowire.Number, key string, v float64) []byte {
	b = append(appendKVHead(b, num, key, 9), 4<<3|byte(protowire.Fixed64Type))
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// encodeResource is the Resource message of attrs.
func encodeResource(attrs []attribute.KeyValue) []byte {
	var b []byte
	for _, a := range attrs {
		k := string(a.Key)
		switch a.Value.Type() {
		case attribute.BOOL:
			v := uint64(0)
			if a.Value.AsBool() {
				v = 1
			}
			b = appendIntKV(b, 1, k, v, 2)
		case attribute.INT64:
			b = appendIntKV(b, 1, k, uint64(a.Value.AsInt64()), 3)
		case attribute.FLOAT64:
			b = appendFloatKV(b, 1, k, a.Value.AsFloat64())
		default:
			b = appendStrKV(b, 1, k, a.Value.Emit())
		}
	}
	return b
}

// encodeScope is the InstrumentationScope message of name.
func encodeScope(name string) []byte {
	b := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendString(b, name)
}

// appendRequestHead appends the head of an ExportTraceServiceRequest of
// one ResourceSpans with one ScopeSpans whose spans fields, n bytes,
// follow it.
func appendRequestHead(b, resource, scope []byte, n int) []byte {
	ss := 1 + protowire.SizeBytes(len(scope)) + n
	rs := 1 + protowire.SizeBytes(len(resource)) + 1 + protowire.SizeBytes(ss)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(rs))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	b = protowire.AppendBytes(b, resource)
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(ss))
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, scope)
}

// errDropped is the error reported when the export queue was full.
type errDropped uint64

func (e errDropped) Error() string {
	return fmt.Sprintf("%d spans dropped: the export queue was full (OTEL_BSP_MAX_QUEUE_SIZE spans, or 16 MiB)", uint64(e))
}

// httpExporter posts OTLP/HTTP protobuf requests: through a connection
// of its own (postConn), or net/http's client when a proxy is set for
// the endpoint.
type httpExporter struct {
	url     string
	header  http.Header
	conn    *postConn    // nil when proxied
	proxied *http.Client // set when a proxy applies to url
	gzip    bool
	gzBuf   bytes.Buffer
	gz      *gzip.Writer
}

// newHTTPExporter reads the OTEL_EXPORTER_OTLP_[TRACES_]{ENDPOINT,
// HEADERS,TIMEOUT,COMPRESSION,CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY}
// variables as the OpenTelemetry exporter does; c's endpoints apply when
// no endpoint variable is set.
func newHTTPExporter(c *Config) (*httpExporter, error) {
	u := "http://localhost:4318/v1/traces"
	switch {
	case os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		u = os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		u = strings.TrimSuffix(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	case c.TracesEndpoint != "":
		u = c.TracesEndpoint
	case c.Endpoint != "":
		u = strings.TrimSuffix(c.Endpoint, "/") + "/v1/traces"
	}
	pu, err := url.Parse(u)
	if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, fmt.Errorf("OTLP traces endpoint %q: want an http or https URL", u)
	}
	e := &httpExporter{url: u, header: http.Header{}}
	for _, h := range []string{os.Getenv("OTEL_EXPORTER_OTLP_HEADERS"), os.Getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS")} {
		for _, pair := range strings.Split(h, ",") {
			k, v, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				continue
			}
			if d, err := url.PathUnescape(strings.TrimSpace(v)); err == nil {
				if !validHeader(k, d) {
					return nil, fmt.Errorf("OTLP header %q: not a valid HTTP header", k)
				}
				e.header.Set(k, d)
			}
		}
	}
	e.header.Set("Content-Type", "application/x-protobuf")
	timeout := 10 * time.Second
	if v := setting("", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTLP timeout %q: want milliseconds", v)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	switch v := setting("none", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); v {
	case "gzip":
		e.gzip = true
		e.gz = gzip.NewWriter(&e.gzBuf)
		e.header.Set("Content-Encoding", "gzip")
	case "none":
	default:
		return nil, fmt.Errorf("OTLP compression %q: want gzip or none", v)
	}
	tc, err := tlsConfig()
	if err != nil {
		return nil, err
	}
	// The proxy variables as they are now (http.ProxyFromEnvironment reads
	// them once per process).
	proxyFor := httpproxy.FromEnvironment().ProxyFunc()
	if proxy, err := proxyFor(pu); err != nil || proxy != nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxyFor(r.URL) }
		if tc != nil {
			tr.TLSClientConfig = tc
		}
		e.proxied = &http.Client{Transport: tr, Timeout: timeout}
		return e, nil
	}
	e.conn = newPostConn(pu, e.header, tc, timeout)
	return e, nil
}

// tlsConfig is the TLS setting of the OTEL_EXPORTER_OTLP_*CERTIFICATE
// variables, nil when none is set.
func tlsConfig() (*tls.Config, error) {
	ca := setting("", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE", "OTEL_EXPORTER_OTLP_CERTIFICATE")
	cert := setting("", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE")
	key := setting("", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY", "OTEL_EXPORTER_OTLP_CLIENT_KEY")
	if ca == "" && cert == "" {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("OTLP certificate: %w", err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("OTLP certificate %s: no PEM certificate", ca)
		}
	}
	if cert != "" {
		c, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("OTLP client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{c}
	}
	return tc, nil
}

// exportError is a refused export.
type exportError struct {
	status int
	body   string
}

func (e *exportError) Error() string {
	return fmt.Sprintf("OTLP export: HTTP %d %s", e.status, strings.TrimSpace(e.body))
}

// export posts the request whose encoding is head then spans, retrying
// a failed post (a network error, 429, 502, 503, 504) three times.
func (e *httpExporter) export(ctx context.Context, head, spans []byte) error {
	body := [][]byte{head, spans}
	if e.gzip {
		e.gzBuf.Reset()
		e.gz.Reset(&e.gzBuf)
		_, _ = e.gz.Write(head)
		_, _ = e.gz.Write(spans)
		if err := e.gz.Close(); err != nil {
			return fmt.Errorf("OTLP export: %w", err)
		}
		body = [][]byte{e.gzBuf.Bytes()}
	}
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		var err error
		if e.conn != nil {
			err = e.conn.post(ctx, body)
		} else {
			err = e.postProxied(ctx, bytes.Join(body, nil))
		}
		var ee *exportError
		retry := err != nil && (!errors.As(err, &ee) || ee.status == 429 || ee.status == 502 || ee.status == 503 || ee.status == 504)
		if !retry || attempt == 3 {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff *= 4
	}
}

func (e *httpExporter) postProxied(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	for k, v := range e.header {
		req.Header[k] = v
	}
	resp, err := e.proxied.Do(req)
	if err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	return readExportResponse(resp)
}

// readExportResponse reads and closes resp: nil for a 2xx status, else
// an *exportError.
func readExportResponse(resp *http.Response) error {
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode/100 != 2 {
		if resp.Header.Get("Content-Type") == "application/x-protobuf" {
			msg = nil // a google.rpc.Status; the code says enough
		}
		return &exportError{status: resp.StatusCode, body: string(msg)}
	}
	return nil
}

func (e *httpExporter) shutdown(context.Context) error {
	if e.conn != nil {
		e.conn.close()
	} else {
		e.proxied.CloseIdleConnections()
	}
	return nil
}

// grpcExporter sends through the OpenTelemetry OTLP/gRPC client (which
// reads the OTEL_EXPORTER_OTLP_* variables): the encoded request is
// decoded into its protobuf structs first, a cost the HTTP exporter does
// not pay.
type grpcExporter struct{ client otlptrace.Client }

func newGRPCExporter(ctx context.Context, c *Config) (*grpcExporter, error) {
	var opts []otlptracegrpc.Option
	if os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "" {
		switch {
		case c.TracesEndpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.TracesEndpoint))
		case c.Endpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
		}
	}
	cl := otlptracegrpc.NewClient(opts...)
	if err := cl.Start(ctx); err != nil {
		return nil, fmt.Errorf("OTLP/gRPC client: %w", err)
	}
	return &grpcExporter{client: cl}, nil
}

func (g *grpcExporter) export(ctx context.Context, head, spans []byte) error {
	var req collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(append(append([]byte(nil), head...), spans...), &req); err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	if err := g.client.UploadTraces(ctx, req.ResourceSpans); err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	return nil
}

func (g *grpcExporter) shutdown(ctx context.Context) error { return g.client.Stop(ctx) }
