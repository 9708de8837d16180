package telemetry

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// TestErrorType: the error.type of a request from its error, whether its
// result is a tool error, and its plugin outcome.
func TestErrorType(t *testing.T) {
	const toolErr, ok = true, false
	tests := []struct {
		name    string
		err     error
		toolErr bool
		outcome string
		want    string
	}{
		{"success", nil, ok, OutcomeOK, ""},
		{"no plugin", nil, ok, "", ""},
		{"tool result with isError", nil, toolErr, OutcomeToolError, "tool_error"},
		{"isError without a plugin", nil, toolErr, "", "tool_error"},
		{"timeout", &jsonrpc.Error{Code: -32001}, ok, OutcomeTimeout, "timeout"},
		{"trap as a tool result", nil, toolErr, OutcomeTrap, "trap"},
		{"memory as a JSON-RPC error", &jsonrpc.Error{Code: -32603}, ok, OutcomeMemory, "memory"},
		{"busy", &jsonrpc.Error{Code: -32001}, ok, OutcomeBusy, "busy"},
		{"denied but answered", nil, ok, OutcomeDenied, ""},
		{"unknown tool", &jsonrpc.Error{Code: -32602}, ok, "", "-32602"},
		{"plugin error code", &jsonrpc.Error{Code: -31000}, ok, OutcomeError, "_OTHER"},
		{"plugin error with a protocol code", &jsonrpc.Error{Code: -32002}, ok, OutcomeError, "-32002"},
		{"other failure as a tool result", nil, toolErr, OutcomeError, "tool_error"},
		{"cancelled", context.Canceled, ok, "", "cancelled"},
		{"other Go error", errors.New("boom"), ok, "", "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorType(tt.err, tt.toolErr, tt.outcome); got != tt.want {
				t.Errorf("errorType = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestErrorTypeSeriesBounded: a plugin answering a thousand made-up
// JSON-RPC codes adds one error_type series to the operation histogram,
// not a thousand (each a histogram held for the process's life).
func TestErrorTypeSeriesBounded(t *testing.T) {
	tel := &Telemetry{log: slog.New(slog.DiscardHandler), metrics: newMetrics(nil)}
	req := &mcp.Request{Method: "prompts/get", Params: []byte(`{"name":"p"}`), Client: mcpreq.Client{ProtocolVersion: "2025-11-25"}}
	for code := -41000; code < -40000; code++ {
		ri := &mcp.RequestInfo{Request: req, ID: "1", Transport: "pipe", Start: time.Now()}
		tel.RequestEnd(tel.RequestStart(context.Background(), ri), ri, nil, &jsonrpc.Error{Code: code, Message: "made up"})
	}
	families, err := tel.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == "mcp_server_operation_duration_seconds" {
			if n := len(f.GetMetric()); n != 1 {
				t.Errorf("%d series after 1000 made-up codes, want 1 (error_type _OTHER)", n)
			}
			return
		}
	}
	t.Error("no mcp_server_operation_duration_seconds series")
}
