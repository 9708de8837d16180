package plugins

import (
	"slices"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/runtime"
)

// Spec is how the operator configured one plugin: where it is, what it may
// use and how much. The zero value of every field but Path is meaningful.
type Spec struct {
	// Name is the plugin's name in logs, kv namespaces and errors. Empty
	// means the manifest's name, else the file name without .wasm.
	Name string
	// Path is the .wasm file.
	Path string
	// SHA256, when set, pins the file: a different digest refuses to load.
	SHA256 string
	// Prefix is prepended to every tool and prompt name the plugin
	// exposes (e.g. "weather_" exposes "forecast" as "weather_forecast").
	Prefix string
	// Limits bound the plugin's instances; zero fields take the defaults.
	Limits runtime.Limits
	// Sandbox holds the granted environment and directory mounts.
	Sandbox runtime.Sandbox
	// Grants are the host methods the plugin may use.
	Grants hostapi.Grants
	// Scopes, when set, hide the plugin from restricted callers (see
	// Request.Restricted) whose scopes include none of them: its items
	// are neither listed nor callable for them. Empty means visible to
	// every caller.
	Scopes []string
	// Tools, when set, exposes only the plugin's tools of these names,
	// and Hide none of those of these names: a tool left out is neither
	// listed nor callable. Both name tools by the plugin's own names,
	// before Prefix.
	Tools, Hide []string
	// Override rewrites what clients see of the plugin's tools, keyed by
	// the plugin's own tool name.
	Override map[string]ToolOverride
	// Rate, when positive, bounds the calls one principal may start of
	// each of the plugin's tools: Rate a second, in bursts of at most
	// Burst (at least 1). The server enforces it (Item.Orig names the
	// tool); the plugin layer only carries it.
	Rate  float64
	Burst int
}

// ToolOverride rewrites a tool's definition: a non-empty Name replaces
// the plugin's name for it (Prefix is still put before it), a non-empty
// Description its description. The call still reaches the plugin under
// its own name.
type ToolOverride struct {
	Name, Description string
}

// exposes reports whether the tool the plugin names orig is exposed.
func (s *Spec) exposes(orig string) bool {
	if len(s.Tools) > 0 && !slices.Contains(s.Tools, orig) {
		return false
	}
	return !slices.Contains(s.Hide, orig)
}
