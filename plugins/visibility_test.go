package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

func TestVisibility(t *testing.T) {
	open := &Plugin{name: "open"}
	weather := &Plugin{name: "weather", spec: Spec{Scopes: []string{"weather:read", "weather:admin"}}}
	c := &catalog{
		toolsJSON:  []json.RawMessage{json.RawMessage(`{"name":"a"}`), json.RawMessage(`{"name":"forecast"}`), json.RawMessage(`{"name":"b"}`)},
		toolOwners: []*Plugin{open, weather, open},
		scoped:     true,
	}
	tests := []struct {
		name string
		req  *Request
		want int  // tools listed
		use  bool // may use weather
	}{
		{"nil request", nil, 3, true},
		{"unrestricted (stdio)", &Request{Client: &mcpreq.Client{}}, 3, true},
		{"unrestricted with scopes", &Request{Client: &mcpreq.Client{Scopes: []string{"x"}}}, 3, true},
		{"restricted without scopes", &Request{Client: &mcpreq.Client{}, Restricted: true}, 2, false},
		{"restricted, other scope", &Request{Client: &mcpreq.Client{Scopes: []string{"mail:read"}}, Restricted: true}, 2, false},
		{"restricted, one of the scopes", &Request{Client: &mcpreq.Client{Scopes: []string{"mail:read", "weather:admin"}}, Restricted: true}, 3, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := len(visible(c, c.toolsJSON, c.toolOwners, tt.req)); got != tt.want {
				t.Errorf("listed %d tools, want %d", got, tt.want)
			}
			if got := tt.req.mayUse(weather); got != tt.use {
				t.Errorf("mayUse(weather) = %v, want %v", got, tt.use)
			}
			if !tt.req.mayUse(open) {
				t.Error("a plugin without scopes is hidden")
			}
		})
	}
}

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
