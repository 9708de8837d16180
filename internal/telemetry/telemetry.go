package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Config selects what New turns on. The OTLP fields are the [telemetry]
// table's; the standard OTEL_* environment variables take precedence over
// each of them.
type Config struct {
	// Metrics turns the Prometheus metrics on (MetricsHandler).
	Metrics bool
	// Endpoint (OTEL_EXPORTER_OTLP_ENDPOINT: the base URL, /v1/traces is
	// added for http/protobuf) and TracesEndpoint
	// (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full URL).
	Endpoint       string
	TracesEndpoint string
	// Protocol is "http/protobuf" (default) or "grpc"
	// (OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL).
	Protocol string
	// ServiceName is service.name (OTEL_SERVICE_NAME); default "wasmcp".
	ServiceName string
	// ServiceVersion is service.version.
	ServiceVersion string
	// Sampler and SamplerArg (OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG):
	// always_on, always_off, traceidratio and their parentbased_ forms.
	// Default parentbased_always_on.
	Sampler    string
	SamplerArg string
	// ScheduleDelay is the span export interval (OTEL_BSP_SCHEDULE_DELAY);
	// default 5s.
	ScheduleDelay time.Duration
	// ResourceAttributes are "k=v,k=v" resource attributes
	// (OTEL_RESOURCE_ATTRIBUTES).
	ResourceAttributes string
	// UsageInMeta puts each tool call's usage in its result's _meta.
	UsageInMeta bool
	// Audit logs one record per plugin call besides the denials.
	Audit bool
	// Logger receives the audit records and telemetry diagnostics; nil
	// discards.
	Logger *slog.Logger
	// Plugins returns the live plugins' pool counters, read at each
	// scrape; nil means none.
	Plugins func() []PluginStats
}

// PluginStats is one plugin's pool counters (runtime.PoolStats).
type PluginStats struct {
	Name                                  string
	Idle, Busy, Waiting                   int
	Created, Discarded, Recycled, Expired uint64
	GuestCPU, Compile                     time.Duration // guest time run; compile time of the module
	Memory                                int64         // linear memory of the live instances, bytes
}

// Telemetry is the observability of one server. Its methods are safe for
// concurrent use.
type Telemetry struct {
	cfg     Config
	log     *slog.Logger
	tp      *sdktrace.TracerProvider // nil: tracing off
	mp      *sdkmetric.MeterProvider // nil: no OTLP metrics export
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	metrics *metrics // nil: metrics off
}

// The OTEL_* variables that turn tracing on (any of them set).
var otelVars = []string{
	"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	"OTEL_SERVICE_NAME", "OTEL_TRACES_SAMPLER", "OTEL_BSP_SCHEDULE_DELAY",
	"OTEL_RESOURCE_ATTRIBUTES",
}

// TracingWanted reports whether c or the environment asks for traces: an
// OTEL_* variable of the OTLP exporter, service or sampler set, or an
// endpoint in c; and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none.
func TracingWanted(c *Config) bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || os.Getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	if c.Endpoint != "" || c.TracesEndpoint != "" {
		return true
	}
	for _, v := range otelVars {
		if os.Getenv(v) != "" {
			return true
		}
	}
	return false
}

// New builds the telemetry c asks for, or returns nil when it asks for
// nothing (no metrics, no traces, no usage, no audit).
func New(ctx context.Context, c Config) (*Telemetry, error) {
	tracing := TracingWanted(&c)
	if !tracing && !c.Metrics && !c.UsageInMeta && !c.Audit {
		return nil, nil
	}
	t := &Telemetry{cfg: c, log: c.Logger,
		prop: propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	otlpMetrics := tracing && metricsEndpointSet(&c) && os.Getenv("OTEL_METRICS_EXPORTER") != "none"
	if c.Metrics || otlpMetrics {
		t.metrics = newMetrics(c.Plugins)
	}
	if tracing {
		res, err := newResource(ctx, &c)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		tp, err := newTracerProvider(ctx, &c, res)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		if otlpMetrics {
			if t.mp, err = newMeterProvider(ctx, &c, res, t.metrics.reg); err != nil {
				_ = tp.Shutdown(ctx)
				return nil, fmt.Errorf("telemetry: %w", err)
			}
		}
		t.tp, t.tracer = tp, tp.Tracer("github.com/wasmcp/wasmcp")
		// Export failures go to the server's log, not to the standard
		// logger (the OpenTelemetry handler is process-wide).
		log := t.log
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("telemetry: export failed", "error", err) }))
	}
	return t, nil
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t != nil && t.tp != nil }

// Shutdown flushes the spans not yet exported and stops the exporter,
// waiting at most until ctx ends.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.tp == nil {
		return nil
	}
	var errs []error
	if err := t.tp.Shutdown(ctx); err != nil {
		errs = append(errs, fmt.Errorf("telemetry: flushing spans: %w", err))
	}
	if t.mp != nil {
		if err := t.mp.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("telemetry: flushing metrics: %w", err))
		}
	}
	return errors.Join(errs...)
}

// setting returns the first non-empty environment variable of names, else
// def.
func setting(def string, names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return def
}

func newTracerProvider(ctx context.Context, c *Config, res *resource.Resource) (*sdktrace.TracerProvider, error) {
	exp, err := newExporter(ctx, c)
	if err != nil {
		return nil, err
	}
	var bsp []sdktrace.BatchSpanProcessorOption
	if os.Getenv("OTEL_BSP_SCHEDULE_DELAY") == "" && c.ScheduleDelay > 0 {
		bsp = append(bsp, sdktrace.WithBatchTimeout(c.ScheduleDelay))
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp, bsp...), sdktrace.WithResource(res)}
	if os.Getenv("OTEL_TRACES_SAMPLER") == "" && c.Sampler != "" {
		s, err := sampler(c.Sampler, c.SamplerArg)
		if err != nil {
			return nil, err
		}
		opts = append(opts, sdktrace.WithSampler(s))
	}
	return sdktrace.NewTracerProvider(opts...), nil
}

// newExporter is the OTLP exporter of c's protocol: the SDK reads the
// OTEL_EXPORTER_OTLP_* variables itself; c's endpoints apply when they
// are unset.
func newExporter(ctx context.Context, c *Config) (sdktrace.SpanExporter, error) {
	proto := setting(c.Protocol, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	envSet := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	switch proto {
	case "", "http/protobuf":
		var opts []otlptracehttp.Option
		if !envSet {
			switch {
			case c.TracesEndpoint != "":
				opts = append(opts, otlptracehttp.WithEndpointURL(c.TracesEndpoint))
			case c.Endpoint != "":
				opts = append(opts, otlptracehttp.WithEndpointURL(strings.TrimSuffix(c.Endpoint, "/")+"/v1/traces"))
			}
		}
		return otlptracehttp.New(ctx, opts...)
	case "grpc":
		var opts []otlptracegrpc.Option
		if !envSet {
			switch {
			case c.TracesEndpoint != "":
				opts = append(opts, otlptracegrpc.WithEndpointURL(c.TracesEndpoint))
			case c.Endpoint != "":
				opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
			}
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", proto)
}

// metricsEndpointSet reports whether an OTLP endpoint for metrics is
// given: the base endpoint (variable or table) or the metrics one.
func metricsEndpointSet(c *Config) bool {
	return c.Endpoint != "" || os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
}

// newMeterProvider exports the Prometheus registry's metrics over OTLP
// too (OTEL_METRIC_EXPORT_INTERVAL, default 60s), in the protocol of the
// traces.
func newMeterProvider(ctx context.Context, c *Config, res *resource.Resource, reg *prometheus.Registry) (*sdkmetric.MeterProvider, error) {
	proto := setting(c.Protocol, "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	envSet := os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") != ""
	var exp sdkmetric.Exporter
	var err error
	switch proto {
	case "", "http/protobuf":
		var opts []otlpmetrichttp.Option
		if !envSet && c.Endpoint != "" {
			opts = append(opts, otlpmetrichttp.WithEndpointURL(strings.TrimSuffix(c.Endpoint, "/")+"/v1/metrics"))
		}
		exp, err = otlpmetrichttp.New(ctx, opts...)
	case "grpc":
		var opts []otlpmetricgrpc.Option
		if !envSet && c.Endpoint != "" {
			opts = append(opts, otlpmetricgrpc.WithEndpointURL(c.Endpoint))
		}
		exp, err = otlpmetricgrpc.New(ctx, opts...)
	default:
		return nil, fmt.Errorf("OTLP protocol %q: want http/protobuf or grpc", proto)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP metrics exporter: %w", err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithProducer(otelprom.NewMetricProducer(otelprom.WithGatherer(reg))))
	return sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), sdkmetric.WithResource(res)), nil
}

// newResource is service.name (default "wasmcp"), service.version, c's
// attributes, then OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME.
func newResource(ctx context.Context, c *Config) (*resource.Resource, error) {
	name := c.ServiceName
	if name == "" {
		name = "wasmcp"
	}
	attrs := []attribute.KeyValue{attribute.String("service.name", name)}
	if c.ServiceVersion != "" {
		attrs = append(attrs, attribute.String("service.version", c.ServiceVersion))
	}
	for _, kv := range strings.Split(c.ResourceAttributes, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			continue
		}
		if u, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = u
		}
		attrs = append(attrs, attribute.String(k, v))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("resource: %w", err)
	}
	return res, nil
}

// sampler parses an OTEL_TRACES_SAMPLER value and its argument.
func sampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := 1.0
	if arg != "" {
		r, err := strconv.ParseFloat(arg, 64)
		if err != nil || r < 0 || r > 1 {
			return nil, fmt.Errorf("sampler argument %q: want a ratio from 0 to 1", arg)
		}
		ratio = r
	}
	switch name {
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(ratio), nil
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio)), nil
	}
	return nil, fmt.Errorf("sampler %q: want always_on, always_off, traceidratio or their parentbased_ forms", name)
}
