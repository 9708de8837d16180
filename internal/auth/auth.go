package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Modes of [Config.Mode].
const (
	ModeBearer = "bearer" // static tokens
	ModeJWT    = "jwt"    // JWT access tokens checked against a JWKS
)

// Config configures an Authenticator. The zero value of every optional
// field selects the documented default.
type Config struct {
	// Mode is ModeBearer or ModeJWT. Required.
	Mode string

	// Tokens are the accepted tokens in bearer mode.
	Tokens []Token

	// RequiredScopes must all be granted for a token to be accepted;
	// otherwise 403 insufficient_scope. Default none.
	RequiredScopes []string

	// Resource is the canonical URL of the MCP endpoint: the "resource"
	// of the protected resource metadata and the default Audience.
	// Required in JWT mode.
	Resource string
	// Audience must be one of a JWT's "aud" values. Default Resource.
	Audience string
	// Issuer must be a JWT's "iss". Required in JWT mode.
	Issuer string
	// JWKSFile or JWKSURL names the key set (exactly one, in JWT mode).
	// The file is read once by New; the URL is fetched on first use.
	JWKSFile string
	JWKSURL  string
	// AuthorizationServers are announced in the protected resource
	// metadata. Default [Issuer].
	AuthorizationServers []string
	// ScopesSupported are announced in the protected resource metadata.
	// Default RequiredScopes.
	ScopesSupported []string
	// Leeway is the clock skew allowed on exp and nbf. Default 30s;
	// negative means none.
	Leeway time.Duration

	// HTTPClient fetches JWKSURL. Nil uses a client with a 10 s timeout
	// that follows redirects only to https.
	HTTPClient *http.Client
	// JWKSMinRefresh is the least time between two fetches of JWKSURL
	// (tokens naming unknown keys cannot make the server fetch faster).
	// Default 30s.
	JWKSMinRefresh time.Duration
	// JWKSMaxAge is how long fetched keys are used before they are
	// fetched again. Default 1h.
	JWKSMaxAge time.Duration
	// JWKSWait is the longest a request whose token names a key id that
	// is not known yet waits for the key set being fetched; then it is
	// refused (401 invalid_token) and the fetch goes on in the
	// background, shared by every request that needs it. Requests whose
	// key is known never wait for a fetch. Default 2s.
	JWKSWait time.Duration

	// Claims keeps a JWT's claims in the Identity (Identity.Claims), cut
	// to what authorization policies can use (see Identity.Claims).
	// Default false: only the subject and scopes are kept.
	Claims bool

	// Logger receives diagnostics (refused tokens at debug level, key
	// fetch failures at warn). Nil discards them.
	Logger *slog.Logger
	// Now returns the current time; nil means time.Now. For tests.
	Now func() time.Time
}

// Token is one accepted bearer token.
type Token struct {
	// Name identifies the caller (the Identity's Subject). Empty means
	// "token-" and the first 8 hex digits of the token's SHA-256.
	Name string
	// Secret is the token itself.
	Secret string
	// Scopes are the scopes the token grants.
	Scopes []string
}

// Identity is an authenticated caller.
type Identity struct {
	// Subject names the caller: a bearer token's name, or a JWT's sub
	// (else client_id).
	Subject string
	// Scopes are the scopes the token grants.
	Scopes []string
	// Claims is the verified JWT's claims object when Config.Claims is
	// set (nil otherwise, and in bearer mode), bounded: only members
	// whose value is a string, number, boolean or array of strings are
	// kept, strings of at most MaxClaimString bytes, arrays of at most
	// MaxClaimArray strings, and members in name order while the
	// object stays within MaxClaimsBytes.
	Claims json.RawMessage
}

// HasScope reports whether the identity was granted scope.
func (id Identity) HasScope(scope string) bool { return slices.Contains(id.Scopes, scope) }

// Error is a refused request: its HTTP status and the OAuth error code of
// the WWW-Authenticate challenge ("" when the request carried no token).
type Error struct {
	Status      int    // 401 or 403
	Code        string // "", "invalid_request", "invalid_token" or "insufficient_scope"
	Description string // short, safe to show to the client
}

// Error returns the code and description.
func (e *Error) Error() string {
	if e.Code == "" {
		return "auth: " + e.Description
	}
	return "auth: " + e.Code + ": " + e.Description
}

// ErrNoToken is the cause of a refusal of a request without a token.
var ErrNoToken = &Error{Status: http.StatusUnauthorized, Description: "no bearer token in the Authorization header"}

func invalidToken(format string, args ...any) *Error {
	return &Error{Status: http.StatusUnauthorized, Code: "invalid_token", Description: fmt.Sprintf(format, args...)}
}

// Authenticator checks the credentials of HTTP requests. It is safe for
// concurrent use.
type Authenticator struct {
	cfg      Config
	log      *slog.Logger
	now      func() time.Time
	tokens   []storedToken
	keys     keySource
	audience string
	prmURL   string // absolute URL of the protected resource metadata, "" in bearer mode
	prm      []byte // the metadata document
	prmPaths []string
}

type storedToken struct {
	hash  [sha256.Size]byte
	ident Identity
}

// New checks cfg and returns an Authenticator. In JWT mode with
// JWKSFile, the key set is read and checked here.
func New(cfg *Config) (*Authenticator, error) {
	if cfg == nil {
		return nil, errors.New("auth: nil Config")
	}
	c := *cfg
	a := &Authenticator{cfg: c, log: c.Logger, now: c.Now}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.now == nil {
		a.now = time.Now
	}
	switch {
	case c.Leeway == 0:
		a.cfg.Leeway = 30 * time.Second
	case c.Leeway < 0:
		a.cfg.Leeway = 0
	}
	switch c.Mode {
	case ModeBearer:
		if len(c.Tokens) == 0 {
			return nil, errors.New("auth: bearer mode needs at least one token")
		}
		for i, t := range c.Tokens {
			if t.Secret == "" {
				return nil, fmt.Errorf("auth: token %d is empty", i)
			}
			h := sha256.Sum256([]byte(t.Secret))
			name := t.Name
			if name == "" {
				name = "token-" + hex.EncodeToString(h[:4])
			}
			a.tokens = append(a.tokens, storedToken{hash: h, ident: Identity{Subject: name, Scopes: slices.Clone(t.Scopes)}})
		}
	case ModeJWT:
		if c.Issuer == "" || c.Resource == "" {
			return nil, errors.New("auth: jwt mode needs an issuer and a resource")
		}
		a.audience = c.Audience
		if a.audience == "" {
			a.audience = c.Resource
		}
		var err error
		switch {
		case c.JWKSFile != "" && c.JWKSURL == "":
			a.keys, err = loadKeyFile(c.JWKSFile)
		case c.JWKSURL != "" && c.JWKSFile == "":
			a.keys, err = newRemoteKeys(&c, a.log, a.now)
		default:
			err = errors.New("jwt mode needs exactly one of a JWKS file and a JWKS URL")
		}
		if err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
		if err := a.buildMetadata(); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
	default:
		return nil, fmt.Errorf("auth: unknown mode %q", c.Mode)
	}
	return a, nil
}

// Authenticate returns the identity behind r's bearer token, or an *Error
// saying why r is refused. Tokens are accepted only in the Authorization
// header; a request carrying access_token in its query string is refused
// even with a valid header.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (Identity, error) {
	if queryHasToken(r.URL) {
		return Identity{}, &Error{Status: http.StatusUnauthorized, Code: "invalid_request", Description: "access tokens are accepted only in the Authorization header, never in the URL"}
	}
	tok, err := bearerToken(r.Header)
	if err != nil {
		return Identity{}, err
	}
	var id Identity
	if a.cfg.Mode == ModeBearer {
		id, err = a.checkStatic(tok)
	} else {
		id, err = a.checkJWT(ctx, tok)
	}
	if err != nil {
		return Identity{}, err
	}
	if missing := a.missingScopes(id); len(missing) > 0 {
		return Identity{}, &Error{Status: http.StatusForbidden, Code: "insufficient_scope",
			Description: "the token lacks the scopes " + strings.Join(missing, " ")}
	}
	return id, nil
}

func (a *Authenticator) missingScopes(id Identity) []string {
	var missing []string
	for _, s := range a.cfg.RequiredScopes {
		if !id.HasScope(s) {
			missing = append(missing, s)
		}
	}
	return missing
}

// checkStatic compares tok with every configured token in constant time
// (all of them, so the time does not tell which one matched).
func (a *Authenticator) checkStatic(tok string) (Identity, error) {
	h := sha256.Sum256([]byte(tok))
	found := -1
	for i := range a.tokens {
		if subtle.ConstantTimeCompare(h[:], a.tokens[i].hash[:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return Identity{}, invalidToken("unknown token")
	}
	return a.tokens[found].ident, nil
}

// queryHasToken reports whether the URL carries an access token.
func queryHasToken(u *url.URL) bool {
	if u.RawQuery == "" {
		return false
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return strings.Contains(strings.ToLower(u.RawQuery), "access_token")
	}
	for k := range q {
		if strings.EqualFold(k, "access_token") {
			return true
		}
	}
	return false
}

// maxTokenLen bounds the tokens accepted (the header limit bounds them
// too; this keeps JWT work small).
const maxTokenLen = 16 << 10

// bearerToken extracts the token of the one Authorization header.
func bearerToken(h http.Header) (string, error) {
	vals := h.Values("Authorization")
	if len(vals) == 0 {
		return "", ErrNoToken
	}
	if len(vals) > 1 {
		return "", &Error{Status: http.StatusUnauthorized, Code: "invalid_request", Description: "more than one Authorization header"}
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", ErrNoToken
	}
	tok = strings.TrimLeft(tok, " ")
	switch {
	case tok == "":
		return "", &Error{Status: http.StatusUnauthorized, Code: "invalid_request", Description: "empty bearer token"}
	case len(tok) > maxTokenLen:
		return "", invalidToken("token too long")
	case !isB64Token(tok):
		return "", &Error{Status: http.StatusUnauthorized, Code: "invalid_request", Description: "malformed bearer token"}
	}
	return tok, nil
}

// isB64Token checks the b64token syntax of RFC 6750 §2.1.
func isB64Token(s string) bool {
	end := len(s)
	for end > 0 && s[end-1] == '=' {
		end--
	}
	if end == 0 {
		return false
	}
	for i := 0; i < end; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '.', c == '_', c == '~', c == '+', c == '/':
		default:
			return false
		}
	}
	return true
}
