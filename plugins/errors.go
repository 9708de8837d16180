package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Errors a call can return besides *runtime.Error (a plugin failure) and
// ErrBadState. The composition root maps each to the client's answer.
var (
	// ErrUnknownTool: tools/call of a name no plugin exposes.
	ErrUnknownTool = errors.New("unknown tool")
	// ErrUnknownPrompt: prompts/get of a name no plugin exposes.
	ErrUnknownPrompt = errors.New("unknown prompt")
)

// ParamsError is a request whose params are malformed for the method
// (missing name, arguments not an object, missing required prompt
// arguments...).
type ParamsError struct{ Msg string }

// Error returns the message.
func (e *ParamsError) Error() string { return e.Msg }

// NotFoundError is a resources/read of a URI no plugin serves.
type NotFoundError struct{ URI string }

// Error names the URI.
func (e *NotFoundError) Error() string { return fmt.Sprintf("resource not found: %s", e.URI) }

// ArgumentsError is a tools/call whose arguments fail the tool's
// inputSchema; the message names the failing fields.
type ArgumentsError struct{ Err error }

// Error names the failing fields.
func (e *ArgumentsError) Error() string { return "invalid arguments: " + e.Err.Error() }

// Unwrap returns the validation error.
func (e *ArgumentsError) Unwrap() error { return e.Err }

// OutputError is a tool result whose structuredContent fails the tool's
// outputSchema, or is missing although the tool declares one.
type OutputError struct {
	Tool string
	Err  error
}

// Error names the tool and the problem.
func (e *OutputError) Error() string {
	return fmt.Sprintf("tool %q returned structuredContent that does not match its outputSchema: %v", e.Tool, e.Err)
}

// Unwrap returns the validation error.
func (e *OutputError) Unwrap() error { return e.Err }

// PluginError is a JSON-RPC error a plugin returned with status 1.
type PluginError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns the plugin's message.
func (e *PluginError) Error() string { return fmt.Sprintf("plugin error %d: %s", e.Code, e.Message) }

// BadResultError is a plugin answer that is not a valid result for the
// method as the registry reads it (not JSON, not valid UTF-8, not an
// object; a status 1 without an error object). Whether a result has its
// method's MCP shape is the protocol engine's to check.
type BadResultError struct{ Msg string }

// Error returns the message.
func (e *BadResultError) Error() string { return "plugin returned an invalid result: " + e.Msg }

// MissingCapabilityError is a request that needs a client capability the
// client did not declare (e.g. an input_required elicitation for a client
// without "elicitation").
type MissingCapabilityError struct {
	// Required lists the missing capabilities as a ClientCapabilities
	// object, e.g. {"sampling":{}}.
	Required map[string]json.RawMessage
}

// Error names the capabilities.
func (e *MissingCapabilityError) Error() string {
	names := ""
	for k := range e.Required {
		if names != "" {
			names += ", "
		}
		names += k
	}
	return "the client did not declare the capability this request needs: " + names
}

// ClientRequestError is a server-to-client request, made for a legacy
// client on a plugin's behalf (input_required), that failed.
type ClientRequestError struct {
	Key    string
	Method string
	Err    error
}

// Error names the request and the reason.
func (e *ClientRequestError) Error() string {
	return fmt.Sprintf("client request %s (%q) failed: %v", e.Method, e.Key, e.Err)
}

// Unwrap returns the reason.
func (e *ClientRequestError) Unwrap() error { return e.Err }

// InputRequestError is an input_required result asking the client for
// something the plugin may not ask: a method its grants do not allow, or
// one that is not a client request MCP defines. Err wraps
// hostapi.ErrNotGranted or hostapi.ErrNotClientRequest. Nothing was sent
// to the client.
type InputRequestError struct {
	Plugin string
	Key    string // the input request's key
	Method string
	Err    error
}

// Error names the plugin, the request and the reason.
func (e *InputRequestError) Error() string {
	return fmt.Sprintf("plugin %q asked the client (input request %q): %v", e.Plugin, e.Key, e.Err)
}

// Unwrap returns the reason.
func (e *InputRequestError) Unwrap() error { return e.Err }
