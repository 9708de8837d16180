package telemetry

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Spans are exported over OTLP/HTTP by httpExporter (the SDK's spans
// encoded by appendRequest), over OTLP/gRPC by the OpenTelemetry
// exporter; the [telemetry] table's endpoints apply where no endpoint
// variable is set.

// newTracerFor is the tracer of c: its exporter, sampler and batching.
func newTracerFor(ctx context.Context, c *Config, res *resource.Resource, onError func(error)) (*tracer, error) {
	proto := setting(c.Protocol, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if err := checkEnv(); err != nil {
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
		exp, err = newHTTPExporter(c)
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

// checkEnv refuses the values of OTEL_* variables that the SDK and the
// gRPC exporter read but, when not valid, ignore with a log line for a
// default: a mistyped setting is an error at start, as in the
// [telemetry] table. The OTLP/HTTP exporter reads the exporter's
// variables itself (readExportEnv), with the same errors.
func checkEnv() error {
	for _, n := range []string{"OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT", "OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"} {
		if v := os.Getenv(n); v != "" {
			if ms, err := strconv.Atoi(v); err != nil || ms <= 0 {
				return fmt.Errorf("%s=%q: want a positive integer", n, v)
			}
		}
	}
	_, err := readExportEnv()
	return err
}
