package telemetry

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"golang.org/x/net/http/httpproxy"
)

// The OTLP trace exporters are the OpenTelemetry ones (otlptracehttp,
// otlptracegrpc), which read the OTEL_EXPORTER_OTLP_* variables
// themselves; the [telemetry] table's endpoints apply where no endpoint
// variable is set.

// newTracerFor is the tracer of c: its exporter, sampler and batching.
func newTracerFor(ctx context.Context, c *Config, res *resource.Resource, onError func(error)) (*tracer, error) {
	proto := setting(c.Protocol, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if err := checkEnv(proto, c); err != nil {
		return nil, err
	}
	name, arg := c.Sampler, c.SamplerArg
	if v := os.Getenv("OTEL_TRACES_SAMPLER"); v != "" {
		name, arg = v, os.Getenv("OTEL_TRACES_SAMPLER_ARG")
	}
	if name == "" {
		name = "parentbased_always_on"
	}
	smp, err := parseSampler(name, arg)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	switch proto {
	case "", "http/protobuf":
		exp, err = newHTTPExporter(ctx, c)
	case "grpc":
		exp, err = newGRPCExporter(ctx, c)
	default:
		return nil, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", proto)
	}
	if err != nil {
		return nil, err
	}
	var bsp []sdktrace.BatchSpanProcessorOption
	if c.ScheduleDelay > 0 && os.Getenv("OTEL_BSP_SCHEDULE_DELAY") == "" {
		bsp = append(bsp, sdktrace.WithBatchTimeout(c.ScheduleDelay))
	}
	return newTracer(smp, exp, []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}, bsp, onError), nil
}

// envEndpointSet reports whether an OTEL_* variable names the traces'
// endpoint, which then wins over c's.
func envEndpointSet() bool {
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// httpTracesURL is the OTLP/HTTP traces endpoint c and the environment
// give.
func httpTracesURL(c *Config) string {
	switch {
	case os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "":
		return os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	case os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "":
		return strings.TrimSuffix(os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT"), "/") + "/v1/traces"
	case c.TracesEndpoint != "":
		return c.TracesEndpoint
	case c.Endpoint != "":
		return strings.TrimSuffix(c.Endpoint, "/") + "/v1/traces"
	}
	return "http://localhost:4318/v1/traces"
}

// newHTTPExporter is the OTLP/HTTP protobuf exporter. The proxy
// variables are read now (net/http's ProxyFromEnvironment reads them once
// per process).
func newHTTPExporter(ctx context.Context, c *Config) (*otlptrace.Exporter, error) {
	proxyFor := httpproxy.FromEnvironment().ProxyFunc()
	opts := []otlptracehttp.Option{otlptracehttp.WithProxy(func(r *http.Request) (*url.URL, error) { return proxyFor(r.URL) })}
	if !envEndpointSet() && (c.TracesEndpoint != "" || c.Endpoint != "") {
		opts = append(opts, otlptracehttp.WithEndpointURL(httpTracesURL(c)))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP/HTTP exporter: %w", err)
	}
	return exp, nil
}

// newGRPCExporter is the OTLP/gRPC exporter.
func newGRPCExporter(ctx context.Context, c *Config) (*otlptrace.Exporter, error) {
	var opts []otlptracegrpc.Option
	if !envEndpointSet() {
		switch {
		case c.TracesEndpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.TracesEndpoint))
		case c.Endpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
		}
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("OTLP/gRPC exporter: %w", err)
	}
	return exp, nil
}

// checkEnv refuses the values of OTEL_* variables that the SDK and its
// exporters read but, when not valid, ignore with a log line for a
// default: a mistyped setting is an error at start, as in the
// [telemetry] table.
func checkEnv(proto string, c *Config) error {
	for _, n := range []string{"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE",
		"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"} {
		if v := os.Getenv(n); v != "" {
			if ms, err := strconv.Atoi(v); err != nil || ms <= 0 {
				what := "a positive integer"
				if strings.HasSuffix(n, "TIMEOUT") || strings.HasSuffix(n, "DELAY") {
					what = "a timeout or delay in milliseconds"
				}
				return fmt.Errorf("%s=%q: want %s", n, v, what)
			}
		}
	}
	for _, n := range []string{"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"} {
		if v := os.Getenv(n); v != "" && v != "gzip" && v != "none" {
			return fmt.Errorf("%s=%q: want gzip or none compression", n, v)
		}
	}
	for _, n := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, pair := range strings.Split(os.Getenv(n), ",") {
			k, v, ok := strings.Cut(pair, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				continue // the exporter skips it too
			}
			if d, err := url.PathUnescape(v); err != nil || !validHeader(k, d) {
				return fmt.Errorf("%s: header %q is not a valid HTTP header field", n, k)
			}
		}
	}
	if proto == "" || proto == "http/protobuf" {
		u := httpTracesURL(c)
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return fmt.Errorf("OTLP traces endpoint %q: want an http or https URL", u)
		}
	}
	return nil
}

// validHeader reports whether k: v can be sent as a header field: k an
// HTTP token, v without a line break or NUL.
func validHeader(k, v string) bool {
	for i := range len(k) {
		if c := k[i]; c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}
