// Package mcpreq is one MCP client request as data: what the request says
// of its client and caller (Client) and the params of the feature methods
// after the protocol engine has parsed them (Params). The engine
// (internal/mcp) fills both and owns the rules of what a well-formed
// params object is; the plugin registry (plugins) reads them; the
// composition root (internal/server) passes them from one to the other
// without copying. The package also names the client capability each
// server-to-client request needs, for the engine and the registry alike.
//
// It imports only internal/jsonscan, so that both sides may depend on it.
package mcpreq

import (
	"encoding/json"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Client is what a request tells of its client and of the caller behind
// it.
type Client struct {
	// ProtocolVersion is the negotiated version (legacy sessions) or the
	// version the request declared (2026-07-28).
	ProtocolVersion string
	// Stateless is true for 2026-07-28 requests, which carry their own
	// version and capabilities in _meta and cannot receive server-to-client
	// requests.
	Stateless bool
	// HTTP is true for a request that came over HTTP, false on stdio.
	HTTP bool
	// ClientInfo is the client's Implementation object, or nil.
	ClientInfo json.RawMessage
	// ClientCapabilities is the client's capabilities object ("{}" when it
	// declared none): from initialize for legacy sessions, from the
	// request's _meta for 2026-07-28.
	ClientCapabilities json.RawMessage
	// ProgressToken is _meta.progressToken, or nil.
	ProgressToken json.RawMessage
	// Principal identifies the authenticated caller on HTTP with access
	// control on; empty otherwise.
	Principal string
	// Scopes are the scopes granted to the authenticated caller (nil
	// without access control).
	Scopes []string
	// Claims is the authenticated caller's token claims object, as
	// access control kept them (bounded); nil when it kept none. A
	// pointer, shared with the identity, so that Client stays small.
	Claims *json.RawMessage
}

// HasClientCapability reports whether the client declared the top-level
// capability name (e.g. "sampling", "elicitation", "roots").
func (c *Client) HasClientCapability(name string) bool {
	v, ok := jsonscan.Member(c.ClientCapabilities, name)
	return ok && jsonscan.Kind(v) != 'z'
}

// Params is the params object of tools/call, prompts/get, resources/read
// or completion/complete, parsed. Raw members alias the request's params.
type Params struct {
	// Name is the tool's (tools/call) or the prompt's (prompts/get).
	Name string
	// URI is the resource's (resources/read).
	URI string
	// Arguments is the arguments object: "{}" when a tools/call has none,
	// nil when a prompts/get has none.
	Arguments json.RawMessage
	// InputResponses is the inputResponses object of a retried
	// input_required request, or nil.
	InputResponses json.RawMessage
	// RequestState is the requestState of a retried input_required
	// request, or nil.
	RequestState *string
	// Ref is the reference of a completion/complete: Type is "ref/prompt"
	// (Name set) or "ref/resource" (URI set).
	Ref Ref
}

// Ref is a completion/complete reference.
type Ref struct {
	Type, Name, URI string
}

// CapabilityFor names the client capability the server-to-client request
// method needs, or "" when method is not one MCP defines.
func CapabilityFor(method string) string {
	switch method {
	case "elicitation/create":
		return "elicitation"
	case "sampling/createMessage":
		return "sampling"
	case "roots/list":
		return "roots"
	}
	return ""
}
