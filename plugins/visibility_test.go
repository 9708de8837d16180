package plugins

import (
	"encoding/json"
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
