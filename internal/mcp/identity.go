package mcp

import (
	"context"
	"encoding/json"

	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// Identity is the authenticated caller of an HTTP request, as access
// control (HTTPOptions.Middleware) established it.
type Identity struct {
	// Principal names the caller; it becomes Request.Principal.
	Principal string
	// Scopes are the scopes granted to the caller; they become
	// Request.Scopes.
	Scopes []string
	// Claims is the caller's token claims object (nil for none); it
	// becomes Request.Claims.
	Claims json.RawMessage
}

type identityKey struct{}

// ContextWithIdentity returns a copy of ctx carrying id. An HTTP
// middleware calls it on the request's context so that the engine fills
// Request.Principal and Request.Scopes, binds legacy sessions to the
// principal that opened them, and marks 2026-07-28 results
// cacheScope "private".
func ContextWithIdentity(ctx context.Context, id Identity) context.Context {
	// By address, so that a request's Claims can point into it (one
	// allocation, as the value boxed would be).
	return context.WithValue(ctx, identityKey{}, &id)
}

// noIdentity is the identity of a context without one; never modified.
var noIdentity Identity

// identityFrom returns the identity of ctx (the zero one when there is
// none); the caller does not modify it.
func identityFrom(ctx context.Context) *Identity {
	if id, ok := ctx.Value(identityKey{}).(*Identity); ok {
		return id
	}
	return &noIdentity
}

// bindHTTP fills what an HTTP request tells of its caller into c: the
// principal (a legacy session's, the one that opened it), the scopes and
// claims of this request's identity, and the transport.
func bindHTTP(c *mcpreq.Client, principal string, id *Identity) {
	c.Principal, c.Scopes, c.HTTP = principal, id.Scopes, true
	c.Claims = nil
	if len(id.Claims) > 0 {
		c.Claims = &id.Claims
	}
}
