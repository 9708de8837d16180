package telemetry_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

// grpcReceiver is an in-process OTLP/gRPC trace service.
type grpcReceiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcReceiver) Export(ctx context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				g.names = append(g.names, s.Name)
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// grpcMetrics is an in-process OTLP/gRPC metrics service.
type grpcMetrics struct {
	collectormetrics.UnimplementedMetricsServiceServer
	mu    sync.Mutex
	names []string
}

func (g *grpcMetrics) Export(ctx context.Context, req *collectormetrics.ExportMetricsServiceRequest) (*collectormetrics.ExportMetricsServiceResponse, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				g.names = append(g.names, m.Name)
			}
		}
	}
	return &collectormetrics.ExportMetricsServiceResponse{}, nil
}

// TestTracesGRPC: OTEL_EXPORTER_OTLP_PROTOCOL=grpc exports spans and
// metrics over OTLP/gRPC.
func TestTracesGRPC(t *testing.T) {
	noOTEL(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	rcv := &grpcReceiver{}
	collectortrace.RegisterTraceServiceServer(gs, rcv)
	mrcv := &grpcMetrics{}
	collectormetrics.RegisterMetricsServiceServer(gs, mrcv)
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+ln.Addr().String())
	echoOnce(t)
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if got := strings.Join(rcv.names, ","); !strings.Contains(got, "tools/call echo") || !strings.Contains(got, "plugin good") {
		t.Errorf("gRPC receiver got spans %q", got)
	}
	mrcv.mu.Lock()
	defer mrcv.mu.Unlock()
	if got := strings.Join(mrcv.names, ","); !strings.Contains(got, "wasmcp_plugin_calls_total") {
		t.Errorf("gRPC receiver got metrics %q", got)
	}
}
