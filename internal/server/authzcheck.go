package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/wasmcp/wasmcp/internal/auth"
	"github.com/wasmcp/wasmcp/internal/authz"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// AuthzCheck is one question for CheckAuthz: what the server would
// decide for this caller, action and target (`wasmcp authz check`).
type AuthzCheck struct {
	// Principal is the caller's entity: Client::"<sub>" (a verified
	// caller on HTTP), Client::"stdio" (stdio) or Anonymous::"anonymous"
	// (HTTP without [auth]).
	Principal string
	// Claims is the caller's token claims object (nil for none), kept as
	// the server keeps a token's (auth.BoundClaims).
	Claims json.RawMessage
	// Action is call_tool, read_resource, get_prompt or complete.
	Action string
	// Resource is Tool::"<name>", Prompt::"<name>" or Resource::"<uri>".
	Resource string
	// Arguments is the call's arguments object (nil for none).
	Arguments json.RawMessage
	// ProtocolVersion is context.protocolVersion; "" means 2025-11-25.
	ProtocolVersion string
	// Listing asks whether a list would show the item instead.
	Listing bool
}

// AuthzResult is CheckAuthz's answer.
type AuthzResult struct {
	Allow bool
	// Policies are the ids of the policies that decided: the permits that
	// allowed, or the forbids that denied (none: no permit applies).
	Policies []string
	// Errors are the policies that failed to evaluate (and so did not
	// apply), as "id: message".
	Errors []string
}

// ErrNoAuthz is returned by CheckAuthz for a configuration without
// [authz] policies.
var ErrNoAuthz = errors.New("the configuration has no [authz] policies")

// CheckAuthz answers c as the server decides a request: the target's
// attributes come from the loaded plugins, the principal and context are
// built by the same code as a request's. An error means the question is
// malformed (or there are no policies).
func (s *Server) CheckAuthz(ctx context.Context, c AuthzCheck) (AuthzResult, error) {
	if s.az == nil {
		return AuthzResult{}, ErrNoAuthz
	}
	if err := s.gate.wait(ctx); err != nil {
		return AuthzResult{}, err
	}
	r, err := checkRequest(&c)
	if err != nil {
		return AuthzResult{}, err
	}
	var d authz.Decision
	if c.Listing {
		action, t, _, _ := s.az.callTarget(r, nil)
		req := s.az.request(r, action, t, nil, true)
		d, err = s.az.pol.Load().Decide(&req)
	} else {
		_, d, _, err = s.az.decide(r, nil)
	}
	if err != nil {
		return AuthzResult{}, err
	}
	return AuthzResult{Allow: d.Allow, Policies: d.Policies, Errors: d.Errors}, nil
}

// checkRequest builds the MCP request that c stands for.
func checkRequest(c *AuthzCheck) (*mcp.Request, error) {
	r := &mcp.Request{}
	r.ProtocolVersion = c.ProtocolVersion
	if r.ProtocolVersion == "" {
		r.ProtocolVersion = "2025-11-25"
	}
	typ, id, err := authz.ParseEntityUID(c.Principal)
	if err != nil {
		return nil, fmt.Errorf("principal: %w", err)
	}
	switch {
	case typ == "Client" && id == "stdio" && c.Claims == nil:
		// stdio: no transport, no principal
	case typ == "Client":
		r.HTTP, r.Principal = true, id
		if c.Claims != nil {
			var obj map[string]json.RawMessage
			if json.Unmarshal(c.Claims, &obj) != nil {
				return nil, errors.New("claims: not a JSON object")
			}
			if b := auth.BoundClaims(c.Claims); b != nil {
				r.Claims = &b
			}
		}
	case typ == "Anonymous" && id == "anonymous":
		r.HTTP = true
	default:
		return nil, fmt.Errorf(`principal: %s is not Client::"<sub>", Client::"stdio" or Anonymous::"anonymous"`, c.Principal)
	}
	rtyp, rid, err := authz.ParseEntityUID(c.Resource)
	if err != nil {
		return nil, fmt.Errorf("resource: %w", err)
	}
	var args json.RawMessage
	if c.Arguments != nil {
		var obj map[string]json.RawMessage
		if json.Unmarshal(c.Arguments, &obj) != nil {
			return nil, errors.New("args: not a JSON object")
		}
		args = c.Arguments
	}
	p := &r.Parsed
	switch {
	case c.Action == authz.CallTool && rtyp == "Tool":
		r.Method, p.Name, p.Arguments = "tools/call", rid, args
		if p.Arguments == nil {
			p.Arguments = json.RawMessage("{}")
		}
	case c.Action == authz.GetPrompt && rtyp == "Prompt":
		r.Method, p.Name, p.Arguments = "prompts/get", rid, args
	case c.Action == authz.ReadResource && rtyp == "Resource":
		r.Method, p.URI = "resources/read", rid
	case c.Action == authz.Complete && rtyp == "Prompt":
		r.Method, p.Ref.Type, p.Ref.Name = "completion/complete", "ref/prompt", rid
	case c.Action == authz.Complete && rtyp == "Resource":
		r.Method, p.Ref.Type, p.Ref.URI = "completion/complete", "ref/resource", rid
	default:
		return nil, fmt.Errorf("action %q does not apply to %s (call_tool: Tool, get_prompt: Prompt, read_resource: Resource, complete: Prompt or Resource)", c.Action, c.Resource)
	}
	return r, nil
}
