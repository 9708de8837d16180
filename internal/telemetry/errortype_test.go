package telemetry

import (
	"context"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// TestErrorType: the error.type of a request from its error, result and
// plugin outcome.
func TestErrorType(t *testing.T) {
	toolErr := []byte(`{"content":[],"isError":true}`)
	ok := []byte(`{"content":[]}`)
	tests := []struct {
		name    string
		err     error
		result  []byte
		outcome string
		want    string
	}{
		{"success", nil, ok, OutcomeOK, ""},
		{"no plugin", nil, ok, "", ""},
		{"tool result with isError", nil, toolErr, OutcomeToolError, "tool_error"},
		{"isError without a plugin", nil, toolErr, "", "tool_error"},
		{"isError with an escaped key", nil, []byte(`{"content":[],"\u0069sError":true}`), "", "tool_error"},
		{"isError in a string only", nil, []byte(`{"content":[{"type":"text","text":"isError"}]}`), "", ""},
		{"timeout", &jsonrpc.Error{Code: -32001}, nil, OutcomeTimeout, "timeout"},
		{"trap as a tool result", nil, toolErr, OutcomeTrap, "trap"},
		{"memory as a JSON-RPC error", &jsonrpc.Error{Code: -32603}, nil, OutcomeMemory, "memory"},
		{"busy", &jsonrpc.Error{Code: -32001}, nil, OutcomeBusy, "busy"},
		{"denied but answered", nil, ok, OutcomeDenied, ""},
		{"unknown tool", &jsonrpc.Error{Code: -32602}, nil, "", "-32602"},
		{"plugin error code", &jsonrpc.Error{Code: -31000}, nil, OutcomeError, "-31000"},
		{"other failure as a tool result", nil, toolErr, OutcomeError, "tool_error"},
		{"cancelled", context.Canceled, nil, "", "cancelled"},
		{"other Go error", errors.New("boom"), nil, "", "_OTHER"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errorType(tt.err, isToolError(tt.result), tt.outcome); got != tt.want {
				t.Errorf("errorType = %q, want %q", got, tt.want)
			}
		})
	}
}
