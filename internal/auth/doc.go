// Package auth is wasmcp's access control for Streamable HTTP: it decides
// who an HTTP request comes from, and answers the requests it refuses the
// way the MCP authorization specification asks.
//
// Two modes exist. Bearer mode accepts static tokens from the
// configuration (or the environment), each with an optional name and
// scopes, compared in constant time. JWT mode is the OAuth 2.1
// resource-server role: access tokens are JWTs signed with RS256, ES256 or
// EdDSA by a key of a configured JSON Web Key Set (a file, or an https URL
// fetched, cached and refreshed when a token names an unknown key, at a
// bounded rate and size, in the background: a token with an unknown key
// waits for the fetch at most Config.JWKSWait, a token with a known key
// never waits), issued by the configured issuer for this server
// (aud), within exp/nbf (with a small leeway); their scope or scp claims
// become the caller's scopes. In JWT mode the server also publishes its
// protected resource metadata (RFC 9728) at
// /.well-known/oauth-protected-resource and at the path-inserted variant
// for the MCP endpoint.
//
// Refusals: a request without a token gets 401 with
// WWW-Authenticate: Bearer resource_metadata="…"; a bad token (expired,
// wrong audience or issuer, bad signature, unknown key, alg none...) 401
// with error="invalid_token"; a token in the query string 401 with
// error="invalid_request" (tokens are accepted only in the Authorization
// header); a token without the server's required scopes 403 with
// error="insufficient_scope". Bodies are JSON-RPC errors, as MCP clients
// expect.
//
//	a, err := auth.New(&auth.Config{Mode: auth.ModeBearer, Tokens: []auth.Token{{Secret: os.Getenv("MCP_TOKEN")}}})
//	handler = a.Middleware("/mcp", bind)(handler)
//
// The package uses the standard library only; stdio is never affected by
// it.
package auth
