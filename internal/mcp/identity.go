package mcp

import "context"

// Identity is the authenticated caller of an HTTP request, as access
// control (HTTPOptions.Middleware) established it.
type Identity struct {
	// Principal names the caller; it becomes Request.Principal.
	Principal string
	// Scopes are the scopes granted to the caller; they become
	// Request.Scopes.
	Scopes []string
}

type identityKey struct{}

// ContextWithIdentity returns a copy of ctx carrying id. An HTTP
// middleware calls it on the request's context so that the engine fills
// Request.Principal and Request.Scopes, binds legacy sessions to the
// principal that opened them, and marks 2026-07-28 results
// cacheScope "private".
func ContextWithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// identityFrom returns the identity of ctx (zero when there is none).
func identityFrom(ctx context.Context) Identity {
	id, _ := ctx.Value(identityKey{}).(Identity)
	return id
}
