package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
)

func TestCommandMode(t *testing.T) {
	tests := []struct {
		name, path, input string
		status            uint32
		out               string
		kind              Kind
	}{
		{"wat echo via imports", watCmd, "hello", abi.StatusOK, "hello", 0},
		{"wat exit 1 is status 1", watCmd, "x1", abi.StatusError, "x1", 0},
		{"wat exit 0", watCmd, "x0", abi.StatusOK, "x0", 0},
		{"wat exit 5 fails", watCmd, "x5", 0, "", KindExit},
		{"go echo via stdin/stdout", goCommand, `{"method":"tools/call","params":{"a":1}}`, abi.StatusOK, `{"echo":{"a":1}}`, 0},
		{"go exit 1", goCommand, `{"method":"exit","params":1}`, abi.StatusError, `{"code":-32000,"message":"exiting"}`, 0},
		{"go exit 2", goCommand, `{"method":"exit","params":2}`, 0, "", KindExit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newPool(t, tt.path, Limits{}, Sandbox{})
			status, out, err := p.Call(context.Background(), []byte(tt.input), nil, nil)
			if tt.kind != 0 {
				callErr(t, err, tt.kind)
				return
			}
			if err != nil || status != tt.status || string(out) != tt.out {
				t.Errorf("Call = %d, %q, %v; want %d, %q", status, out, err, tt.status, tt.out)
			}
		})
	}
}

func TestCommandModeLimits(t *testing.T) {
	p := newPool(t, goCommand, Limits{Timeout: 300 * time.Millisecond}, Sandbox{})
	stoppedAtDeadline(t, p, `{"method":"spin"}`, 2300*time.Millisecond)
	p = newPool(t, goCommand, Limits{MaxOutput: 10}, Sandbox{})
	_, _, err := p.Call(context.Background(), []byte(`{"method":"x","params":"`+strings.Repeat("y", 100)+`"}`), nil, nil)
	callErr(t, err, KindOutput)
	if s := p.Stats(); s.Created != 1 || s.Idle != 0 {
		t.Errorf("stats %+v", s)
	}
}
