package telemetry

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"golang.org/x/net/http/httpguts"
	"google.golang.org/protobuf/proto"
)

// clearExportEnv clears the OTEL_* variables the OTLP/HTTP exporter
// reads, and the proxy ones, for the test.
func clearExportEnv(t *testing.T) {
	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS", "OTEL_EXPORTER_OTLP_COMPRESSION",
		"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_CERTIFICATE", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
		"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "REQUEST_METHOD"} {
		t.Setenv(k, "")
	}
}

// TestHTTPExporter: the OTLP/HTTP exporter posts each batch whole to the
// [telemetry] table's endpoint, over a kept-alive connection (a new one
// when the receiver closes it), retries a 503, reports a refusal with the
// receiver's message, and speaks TLS with the
// OTEL_EXPORTER_OTLP_CERTIFICATE's authority.
func TestHTTPExporter(t *testing.T) {
	spans := tracedCalls(t, 1)
	for _, c := range []struct {
		name      string
		tls       bool
		close     bool  // the receiver answers Connection: close
		statuses  []int // the receiver's answers, 200 after them
		wantConns int
		wantPosts int
		wantErr   int // the status of each export's error, 0 for none
	}{
		{name: "kept alive", wantConns: 1, wantPosts: 3},
		{name: "closed after each response", close: true, wantConns: 3, wantPosts: 3},
		{name: "503 retried", statuses: []int{503, 200, 503, 200, 503, 200}, wantConns: 1, wantPosts: 6},
		{name: "400 refused", statuses: []int{400, 400, 400}, wantConns: 1, wantPosts: 3, wantErr: 400},
		{name: "TLS", tls: true, wantConns: 1, wantPosts: 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearExportEnv(t)
			var mu sync.Mutex
			posts, conns := 0, 0
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var req collectortrace.ExportTraceServiceRequest
				if err := proto.Unmarshal(body, &req); err != nil || len(req.ResourceSpans[0].ScopeSpans[0].Spans) != len(spans) {
					t.Errorf("export request of %d bytes: %v", len(body), err)
				}
				mu.Lock()
				status := 200
				if posts < len(c.statuses) {
					status = c.statuses[posts]
				}
				posts++
				mu.Unlock()
				if c.close {
					w.Header().Set("Connection", "close")
				}
				if status != 200 {
					http.Error(w, "no thanks", status)
				}
			})
			srv := httptest.NewUnstartedServer(h)
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					mu.Lock()
					conns++
					mu.Unlock()
				}
			}
			if c.tls {
				srv.StartTLS()
				ca := filepath.Join(t.TempDir(), "ca.pem")
				if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
					t.Fatal(err)
				}
				t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", ca)
			} else {
				srv.Start()
			}
			defer srv.Close()
			e, err := newHTTPExporter(&Config{TracesEndpoint: srv.URL + "/v1/traces"})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Shutdown(context.Background())
			for range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				err := e.ExportSpans(ctx, spans)
				cancel()
				var ee *exportError
				switch {
				case c.wantErr == 0 && err != nil:
					t.Errorf("export: %v", err)
				case c.wantErr != 0 && (!errors.As(err, &ee) || ee.status != c.wantErr || ee.body != "no thanks\n"):
					t.Errorf("export: %v, want HTTP %d no thanks", err, c.wantErr)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if posts != c.wantPosts || conns != c.wantConns {
				t.Errorf("%d posts over %d connections, want %d over %d", posts, conns, c.wantPosts, c.wantConns)
			}
		})
	}
}

// TestHTTPExporterProxy: the proxy variables are read when the exporter
// is made: with HTTP_PROXY set it posts through the proxy, each batch
// whole with its headers, and NO_PROXY sends it direct again.
func TestHTTPExporterProxy(t *testing.T) {
	spans := tracedCalls(t, 1)
	var mu sync.Mutex
	var got []string // what the proxy was asked
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req collectortrace.ExportTraceServiceRequest
		n := -1
		if proto.Unmarshal(body, &req) == nil && len(req.ResourceSpans) == 1 {
			n = len(req.ResourceSpans[0].ScopeSpans[0].Spans)
		}
		mu.Lock()
		got = append(got, fmt.Sprintf("%s %s %s %d spans", r.Method, r.URL, r.Header.Get("Content-Type"), n))
		mu.Unlock()
	}))
	defer proxy.Close()
	const endpoint = "http://otlp.invalid:4318/v1/traces" // not loopback, which is never proxied
	for _, c := range []struct {
		name, noProxy string
		proxied       bool
	}{
		{"proxied", "", true},
		{"NO_PROXY", "otlp.invalid", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearExportEnv(t)
			t.Setenv("HTTP_PROXY", proxy.URL)
			t.Setenv("NO_PROXY", c.noProxy)
			mu.Lock()
			got = nil
			mu.Unlock()
			e, err := newHTTPExporter(&Config{TracesEndpoint: endpoint})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Shutdown(context.Background())
			for range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				err := e.ExportSpans(ctx, spans)
				cancel()
				if c.proxied && err != nil {
					t.Fatalf("export: %v", err)
				}
				if !c.proxied && err == nil {
					t.Fatal("export to otlp.invalid, not proxied: no error")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := fmt.Sprintf("POST %s application/x-protobuf %d spans", endpoint, len(spans))
			if c.proxied && (len(got) != 2 || got[0] != want || got[1] != want) {
				t.Errorf("the proxy got %q, want %q twice", got, want)
			}
			if !c.proxied && len(got) != 0 {
				t.Errorf("the proxy got %q, want nothing", got)
			}
		})
	}
}

// FuzzExportEnv: reading OTEL_EXPORTER_OTLP_HEADERS never panics, and a
// value it takes gives only header fields net/http sends.
func FuzzExportEnv(f *testing.F) {
	for _, s := range []string{"x-api-key=s%20ecret,bad", "a=1,b=2", "x y=1", "k=%0d%0aevil", "=v", "k=%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.IndexByte(v, 0) >= 0 {
			return // not a value an environment variable can hold
		}
		t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", v)
		t.Setenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "")
		env, err := readExportEnv()
		if err != nil {
			return
		}
		for k, vs := range env.header {
			for _, hv := range vs {
				if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(hv) {
					t.Fatalf("%q read as header %q: %q, which net/http refuses", v, k, hv)
				}
			}
		}
	})
}
