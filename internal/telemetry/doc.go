// Package telemetry is wasmcp's observability: OpenTelemetry traces over
// OTLP (one SERVER span per MCP request, per the OpenTelemetry MCP
// semantic conventions, a child span per plugin call and a CLIENT span per
// host-performed http/fetch), Prometheus metrics (the semconv
// mcp_server_operation_duration_seconds histogram and per-plugin series),
// per-call usage in tool results' _meta, and the audit log. It is the only
// package that imports the OpenTelemetry and Prometheus modules.
//
// The composition root builds a Telemetry with New and wires it:
// Observer into the MCP engine (mcp.Options.Observer), CallHook into the
// requests of plugin calls (plugins.Request.Hook), WrapTransport into
// http/fetch (hostapi.HTTPPolicy.WrapTransport), MetricsHandler on the
// metrics listener; Shutdown flushes the spans. With everything off, New
// returns nil and nothing is wired: the call path pays nothing.
//
// Spans go one way: the OpenTelemetry SDK's tracer provider, sampler and
// batch span processor (span.go), the W3C trace context and baggage read
// and written by its propagators (propagate.go), then an OTLP exporter
// (otlp.go). For OTLP/gRPC that is the OpenTelemetry exporter. For
// OTLP/HTTP, the default, it is httpExporter, an sdktrace.SpanExporter
// that encodes the SDK's ended spans as protobuf itself (encode.go, held
// to the standard exporter's encoding by TestEncodeMatchesStandard and
// FuzzEncode) and posts them with net/http: the standard exporter's
// conversion to protobuf structs doubled the CPU of a traced call
// (RATIONALE.md). A queue that is full drops spans and says how many;
// ending a span never waits for the exporter.
package telemetry
