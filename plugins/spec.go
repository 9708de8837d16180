package plugins

import (
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
}
