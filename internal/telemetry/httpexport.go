package telemetry

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http/httpproxy"
)

// httpExporter is the OTLP/HTTP protobuf exporter: an
// sdktrace.SpanExporter that encodes each batch itself (appendRequest)
// and posts it with net/http. It reads the OTEL_EXPORTER_OTLP_[TRACES_]*
// variables as the OpenTelemetry exporter does (exportEnv).
type httpExporter struct {
	url    string
	header http.Header
	client *http.Client
	gzip   bool

	mu  sync.Mutex // one export at a time, over buf
	buf []byte     // the encoded request, reused
	gz  bytes.Buffer
}

// newHTTPExporter is the exporter of c's endpoints (where no endpoint
// variable is set) and the environment's settings. The proxy variables
// are read now (net/http's ProxyFromEnvironment reads them once per
// process).
func newHTTPExporter(c *Config) (*httpExporter, error) {
	env, err := readExportEnv()
	if err != nil {
		return nil, err
	}
	u := httpTracesURL(c)
	if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
		return nil, fmt.Errorf("OTLP traces endpoint %q: want an http or https URL", u)
	}
	proxyFor := httpproxy.FromEnvironment().ProxyFunc()
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = func(r *http.Request) (*url.URL, error) { return proxyFor(r.URL) }
	tr.TLSClientConfig = env.tls
	e := &httpExporter{url: u, header: env.header, client: &http.Client{Transport: tr, Timeout: env.timeout}, gzip: env.gzip}
	e.header.Set("Content-Type", "application/x-protobuf")
	if e.gzip {
		e.header.Set("Content-Encoding", "gzip")
	}
	return e, nil
}

// exportEnv is what the OTEL_EXPORTER_OTLP_[TRACES_]{HEADERS,TIMEOUT,
// COMPRESSION,CERTIFICATE,CLIENT_CERTIFICATE,CLIENT_KEY} variables say,
// the traces' over the general ones.
type exportEnv struct {
	header  http.Header
	timeout time.Duration
	gzip    bool
	tls     *tls.Config // nil when no certificate is named
}

// readExportEnv reads the exporter's variables. A value that is not
// valid is an error (the OpenTelemetry exporters log it and use their
// default instead).
func readExportEnv() (*exportEnv, error) {
	env := &exportEnv{header: http.Header{}, timeout: 10 * time.Second}
	for _, n := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, pair := range strings.Split(os.Getenv(n), ",") {
			k, v, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				continue // as the OpenTelemetry exporters do
			}
			d, err := url.PathUnescape(v)
			if d = strings.TrimSpace(d); err != nil || !validHeader(k, d) {
				return nil, fmt.Errorf("%s: header %q is not a valid HTTP header field", n, k)
			}
			env.header.Set(k, d)
		}
	}
	if v := setting("", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return nil, fmt.Errorf("OTLP timeout %q: want milliseconds", v)
		}
		env.timeout = time.Duration(ms) * time.Millisecond
	}
	switch v := setting("none", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_COMPRESSION"); v {
	case "gzip":
		env.gzip = true
	case "none":
	default:
		return nil, fmt.Errorf("OTLP compression %q: want gzip or none", v)
	}
	var err error
	env.tls, err = tlsConfig()
	return env, err
}

// validHeader reports whether k: v can be sent as a header field, as
// net/http checks it.
func validHeader(k, v string) bool {
	return httpguts.ValidHeaderFieldName(k) && httpguts.ValidHeaderFieldValue(v)
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

// ExportSpans implements sdktrace.SpanExporter: it posts spans in one
// request, retrying a failed post (a network error, 429, 502, 503, 504)
// three times, as long as ctx lasts.
func (e *httpExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.buf = appendRequest(e.buf[:0], spans)
	body := e.buf
	if e.gzip {
		e.gz.Reset()
		zw := gzip.NewWriter(&e.gz)
		_, _ = zw.Write(e.buf)
		if err := zw.Close(); err != nil {
			return fmt.Errorf("OTLP export: %w", err)
		}
		body = e.gz.Bytes()
	}
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := e.post(ctx, body)
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

// post posts body once: nil for a 2xx answer, else an *exportError or
// the network's error.
func (e *httpExporter) post(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	for k, v := range e.header {
		req.Header[k] = v
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return fmt.Errorf("OTLP export: %w", err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // so that the connection is reused
	if resp.StatusCode/100 != 2 {
		if resp.Header.Get("Content-Type") == "application/x-protobuf" {
			msg = nil // a google.rpc.Status; the code says enough
		}
		return &exportError{status: resp.StatusCode, body: string(msg)}
	}
	return nil
}

// Shutdown implements sdktrace.SpanExporter.
func (e *httpExporter) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}
