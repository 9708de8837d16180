package config

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Auth modes of [Auth.Mode].
const (
	AuthNone   = "none"   // no access control (the default)
	AuthBearer = "bearer" // static bearer tokens from the file or the environment
	AuthJWT    = "jwt"    // OAuth 2.1 resource server: JWT access tokens checked against a JWKS
)

// Auth is the [auth] table: access control for `serve --http`. stdio is
// never affected (its client is the process that started the server).
type Auth struct {
	// Mode is "none", "bearer" or "jwt". Empty infers it: "bearer" when
	// tokens are given, "jwt" when an issuer or a JWKS is, else "none".
	Mode string `toml:"mode" json:"mode"`

	// Tokens are accepted bearer tokens without scopes (use
	// "${MCP_TOKEN}" to take one from the environment). Each must be at
	// least 16 characters. Default none.
	Tokens []Secret `toml:"tokens" json:"tokens,omitempty"`
	// Token lists named bearer tokens with scopes ([[auth.token]]).
	Token []NamedToken `toml:"token" json:"token,omitempty"`

	// RequiredScopes must all be granted to a token for it to use the
	// server at all; a token without them gets 403 insufficient_scope.
	// Default none.
	RequiredScopes []string `toml:"required_scopes" json:"required_scopes,omitempty"`

	// Resource is the canonical URL of the MCP endpoint
	// ("https://mcp.example.com/mcp"): the "resource" of the protected
	// resource metadata, and the audience JWTs must name. Required in jwt
	// mode.
	Resource string `toml:"resource" json:"resource,omitempty"`
	// Audience is the audience JWTs must carry in "aud". Default Resource.
	Audience string `toml:"audience" json:"audience,omitempty"`
	// Issuer is the "iss" JWTs must carry. Required in jwt mode.
	Issuer string `toml:"issuer" json:"issuer,omitempty"`
	// JWKSFile and JWKSURL name the JSON Web Key Set that signs the
	// tokens: a file (resolved against the configuration file's
	// directory), or an https URL fetched and cached, refreshed when a
	// token names an unknown key. Exactly one is required in jwt mode.
	JWKSFile string `toml:"jwks_file" json:"jwks_file,omitempty"`
	JWKSURL  string `toml:"jwks_url" json:"jwks_url,omitempty"`
	// JWKSWait is the longest a request whose token names a key id not
	// known yet waits for the key set being fetched from jwks_url; past
	// it the request gets 401 and the fetch goes on in the background.
	// Tokens with a known key never wait. Zero means the default, 2s; at
	// most 30s.
	JWKSWait Duration `toml:"jwks_wait" json:"jwks_wait,omitempty"`
	// AuthorizationServers are announced in the protected resource
	// metadata. Default [Issuer].
	AuthorizationServers []string `toml:"authorization_servers" json:"authorization_servers,omitempty"`
	// ScopesSupported are announced in the protected resource metadata.
	// Default: the required scopes and every plugin's scopes.
	ScopesSupported []string `toml:"scopes_supported" json:"scopes_supported,omitempty"`
	// Leeway is the clock skew allowed on exp and nbf. Default 30s; at
	// most 5m.
	Leeway Duration `toml:"leeway" json:"leeway"`
}

// NamedToken is one [[auth.token]] entry: a bearer token with a name (the
// caller's identity in logs and in requestState) and scopes.
type NamedToken struct {
	// Name identifies the caller; it must match ^[A-Za-z0-9_-]{1,64}$ and
	// be unique. Required.
	Name string `toml:"name" json:"name"`
	// Token is the secret, at least 16 characters. Required.
	Token Secret `toml:"token" json:"token"`
	// Scopes are the scopes the token grants. Default none.
	Scopes []string `toml:"scopes" json:"scopes,omitempty"`
}

// Secret is a configuration string that must not be shown: it marshals
// and prints as "[redacted]". Convert it with string(s) to use it.
type Secret string

const redacted = "[redacted]"

// String returns "[redacted]" (or "" for an empty secret).
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// MarshalJSON writes "[redacted]" instead of the secret.
func (s Secret) MarshalJSON() ([]byte, error) { return json.Marshal(s.String()) }

// inferMode is the mode implied by the keys that are set.
func (a *Auth) inferMode() string {
	switch {
	case len(a.Tokens) > 0 || len(a.Token) > 0:
		return AuthBearer
	case a.Issuer != "" || a.JWKSFile != "" || a.JWKSURL != "":
		return AuthJWT
	}
	return AuthNone
}

// Enabled reports whether HTTP access control is on.
func (a *Auth) Enabled() bool { return a.Mode == AuthBearer || a.Mode == AuthJWT }

// minTokenLen is the shortest bearer token accepted: shorter secrets are
// guessable.
const minTokenLen = 16

// checkAuth validates the [auth] table; scoped tells whether any plugin
// has scopes.
func checkAuth(a *Auth, scopedPlugin string) []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("auth."+format, args...)) }
	jwtKeys := a.Issuer != "" || a.JWKSFile != "" || a.JWKSURL != "" || a.Audience != "" || len(a.AuthorizationServers) > 0
	tokens := len(a.Tokens) > 0 || len(a.Token) > 0
	switch a.Mode {
	case AuthNone, "":
		if tokens || jwtKeys || len(a.RequiredScopes) > 0 {
			bad("mode: \"none\" but other [auth] keys are set")
		}
		if scopedPlugin != "" {
			errs = append(errs, fmt.Errorf("%s: scopes: needs [auth] (scopes hide plugins from authenticated callers that lack them)", scopedPlugin))
		}
	case AuthBearer:
		if !tokens {
			bad("tokens: bearer mode needs at least one token (tokens = [\"${MCP_TOKEN}\"] or [[auth.token]])")
		}
		if jwtKeys {
			bad("mode: issuer, audience, jwks_file, jwks_url and authorization_servers belong to jwt mode")
		}
		seen := map[string]bool{}
		for i, t := range a.Tokens {
			if err := checkToken(string(t)); err != nil {
				bad("tokens[%d]: %w", i, err)
			}
			seen[string(t)] = true
		}
		names := map[string]bool{}
		for i, t := range a.Token {
			if !ValidName(t.Name) {
				bad("token[%d].name: %q must match ^[A-Za-z0-9_-]{1,64}$", i, t.Name)
			} else if names[t.Name] {
				bad("token[%d].name: duplicate %q", i, t.Name)
			}
			names[t.Name] = true
			if err := checkToken(string(t.Token)); err != nil {
				bad("token[%d].token: %w", i, err)
			} else if seen[string(t.Token)] {
				bad("token[%d].token: the same token is listed twice", i)
			}
			seen[string(t.Token)] = true
			errs = append(errs, checkScopes(fmt.Sprintf("auth.token[%d].scopes", i), t.Scopes)...)
		}
	case AuthJWT:
		if tokens {
			bad("tokens: static tokens belong to bearer mode")
		}
		if a.Issuer == "" {
			bad("issuer: required in jwt mode")
		} else if err := checkURL(a.Issuer, false); err != nil {
			bad("issuer: %w", err)
		}
		if a.Resource == "" {
			bad("resource: required in jwt mode (the canonical URL of the MCP endpoint, e.g. \"https://mcp.example.com/mcp\")")
		}
		switch {
		case a.JWKSFile == "" && a.JWKSURL == "":
			bad("jwks_file: jwt mode needs jwks_file or jwks_url")
		case a.JWKSFile != "" && a.JWKSURL != "":
			bad("jwks_url: give jwks_file or jwks_url, not both")
		case a.JWKSURL != "":
			if err := checkURL(a.JWKSURL, true); err != nil {
				bad("jwks_url: %w", err)
			}
		}
		for i, s := range a.AuthorizationServers {
			if err := checkURL(s, false); err != nil {
				bad("authorization_servers[%d]: %w", i, err)
			}
		}
	default:
		bad("mode: %q is not one of none, bearer, jwt", a.Mode)
	}
	if a.Resource != "" {
		if err := checkURL(a.Resource, false); err != nil {
			bad("resource: %w", err)
		} else if u, _ := url.Parse(a.Resource); u.Fragment != "" || u.RawQuery != "" {
			bad("resource: %q must not have a query or fragment", a.Resource)
		}
	}
	errs = append(errs, checkScopes("auth.required_scopes", a.RequiredScopes)...)
	errs = append(errs, checkScopes("auth.scopes_supported", a.ScopesSupported)...)
	if a.JWKSWait < 0 || time.Duration(a.JWKSWait) > 30*time.Second {
		bad("jwks_wait: %s is not between 0 and 30s", a.JWKSWait)
	}
	if a.Leeway < 0 || time.Duration(a.Leeway) > 5*time.Minute {
		bad("leeway: %s is not between 0 and 5m", a.Leeway)
	}
	return errs
}

func checkToken(t string) error {
	switch {
	case len(t) < minTokenLen:
		return fmt.Errorf("must be at least %d characters (got %d)", minTokenLen, len(t))
	case strings.ContainsFunc(t, func(r rune) bool { return r <= ' ' || r == 0x7f || r > 0x7e }):
		return fmt.Errorf("must be printable ASCII without spaces")
	}
	return nil
}

// checkScopes checks scope tokens (RFC 6749 §3.3: printable ASCII without
// space, '"' or '\').
func checkScopes(where string, scopes []string) []error {
	var errs []error
	for i, s := range scopes {
		if s == "" || strings.ContainsFunc(s, func(r rune) bool { return r <= ' ' || r == '"' || r == '\\' || r > 0x7e }) {
			errs = append(errs, fmt.Errorf("%s[%d]: %q is not a valid scope (printable ASCII without spaces, quotes or backslashes)", where, i, s))
		}
	}
	return errs
}

// checkURL checks an absolute https URL (http is accepted for loopback
// hosts, for local testing; jwks demands https otherwise).
func checkURL(s string, jwks bool) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q is not an absolute URL", s)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		if jwks {
			return fmt.Errorf("%q: keys must be fetched over https", s)
		}
		return fmt.Errorf("%q: must be https (http only for localhost)", s)
	}
	return fmt.Errorf("%q: scheme must be https", s)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
