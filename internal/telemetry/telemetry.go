package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	otelprom "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
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
	// AuditDropped, if set, is read as wasmcp_audit_dropped_total: the
	// audit events the trail could not take.
	AuditDropped func() uint64
}

// PluginStats is one plugin's pool counters (runtime.PoolStats).
type PluginStats struct {
	Name                                  string
	Idle, Busy, Waiting                   int
	Created, Discarded, Recycled, Expired uint64
	GuestCPU, Compile                     time.Duration // guest time run; compile time of the module
	Memory                                int64         // linear memory of the live instances, bytes
	CompileCached                         bool          // the module's code came from the compilation cache
}

// Telemetry is the observability of one server. Its methods are safe for
// concurrent use.
type Telemetry struct {
	cfg     Config
	log     *slog.Logger
	tr      *tracer                  // nil: tracing off
	mp      *sdkmetric.MeterProvider // nil: no OTLP metrics export
	metrics *metrics                 // nil: metrics off
	denials *DenialLog               // the audit of capability denials
}

// DenialLog returns the audit of t's capability denials (nil for a nil
// t), for the server's other denial sites to share.
func (t *Telemetry) DenialLog() *DenialLog {
	if t == nil {
		return nil
	}
	return t.denials
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
	t := &Telemetry{cfg: c, log: c.Logger}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	otlpMetrics := tracing && metricsEndpointSet(&c) && os.Getenv("OTEL_METRICS_EXPORTER") != "none"
	if c.Metrics || otlpMetrics {
		t.metrics = newMetrics(c.Plugins)
	}
	t.denials = NewDenialLog(t.log)
	if t.metrics != nil && c.AuditDropped != nil {
		dropped := c.AuditDropped
		t.metrics.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "wasmcp_audit_dropped_total",
			Help: "Audit events the audit trail could not take: its queue was full (a sink that cannot keep up); each is lost, never waited for."},
			func() float64 { return float64(dropped()) }))
	}
	if t.metrics != nil {
		t.denials.onFold = func(n int64) { t.metrics.deniedFolded.Add(float64(n)) }
		log := t.log
		t.metrics.onFold = func(plugin string) {
			log.Warn("telemetry: the plugin's tools/call metrics fold into gen_ai_tool_name=\""+OtherTool+"\" (a tool it no longer serves, or past its series budget); wasmcp_metrics_folded_total counts them",
				"plugin", plugin, "max_series", MaxPluginSeries)
		}
	}
	if tracing {
		res, err := newResource(ctx, &c)
		if err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		// Export failures go to the server's log, not to the standard
		// logger (the OpenTelemetry handler is process-wide).
		log := t.log
		onError := func(err error) { log.Warn("telemetry: export failed", "error", err) }
		otel.SetErrorHandler(otel.ErrorHandlerFunc(onError))
		if t.tr, err = newTracerFor(ctx, &c, res, onError); err != nil {
			return nil, fmt.Errorf("telemetry: %w", err)
		}
		if otlpMetrics {
			if t.mp, err = newMeterProvider(ctx, &c, res, t.metrics.reg); err != nil {
				_ = t.tr.shutdown(ctx)
				return nil, fmt.Errorf("telemetry: %w", err)
			}
		}
	}
	return t, nil
}

// Tracing reports whether spans are recorded and exported.
func (t *Telemetry) Tracing() bool { return t != nil && t.tr != nil }

// Shutdown flushes the spans not yet exported and stops the exporter,
// waiting at most until ctx ends.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t != nil {
		t.denials.Flush()
	}
	if t == nil || t.tr == nil {
		return nil
	}
	var errs []error
	if err := t.tr.shutdown(ctx); err != nil {
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
