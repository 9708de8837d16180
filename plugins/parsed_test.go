package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// TestUnparsedRequest: a Request without Parsed (a library caller's
// mistake) is refused with a *ParamsError by every method that reads it,
// instead of a nil dereference.
func TestUnparsedRequest(t *testing.T) {
	reg := testRegistry(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		call func(context.Context, *Request) (json.RawMessage, error)
	}{
		{"CallTool", reg.CallTool},
		{"GetPrompt", reg.GetPrompt},
		{"ReadResource", reg.ReadResource},
		{"Complete", reg.Complete},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call(ctx, &Request{Params: json.RawMessage(`{"name":"x"}`)})
			if pe := (*ParamsError)(nil); !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParamsError", err)
			}
		})
	}
}
