package wasmcp

import "encoding/json"

// Context is one request as the plugin sees it: the envelope's "context"
// (ABI §3) and access to the host. It is valid only while its handler
// runs, and is not safe for concurrent use (a plugin instance handles one
// request at a time).
type Context struct {
	// Method is the request's method, e.g. "tools/call".
	Method string
	// ProtocolVersion is the MCP version of the request. Plugins rarely
	// need it: the host adapts results to the version.
	ProtocolVersion string
	// ClientInfo names the client, when it said.
	ClientInfo *Implementation
	// ClientCapabilities is the client's capabilities object, or nil.
	ClientCapabilities json.RawMessage
	// ProgressToken is the client's progress token, or nil: without one
	// [Context.Progress] does nothing.
	ProgressToken json.RawMessage
	// InputResponses are the client's answers to the requests of an
	// earlier [InputRequired], by key; nil on a first call.
	InputResponses map[string]json.RawMessage
	// RequestState is the State of that InputRequired; empty on a first
	// call.
	RequestState string
	// Meta is the request's params._meta object, or nil.
	Meta json.RawMessage

	host Host
	// validArgs: the tools/call arguments are known to be valid JSON
	// (read by parseEnvelope), as an argPlan needs.
	validArgs bool
}

// HasClientCapability reports whether the client declared the top-level
// capability name, e.g. "elicitation", "sampling" or "roots".
func (c *Context) HasClientCapability(name string) bool {
	var caps map[string]json.RawMessage
	if json.Unmarshal(c.ClientCapabilities, &caps) != nil {
		return false
	}
	v, ok := caps[name]
	return ok && string(v) != "null"
}
