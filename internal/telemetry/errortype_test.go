package telemetry

import (
	"context"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
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
		{"plugin error code", &jsonrpc.Error{Code: -31000}, ok, OutcomeError, "-31000"},
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
