package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const (
	testIssuer   = "https://as.example"
	testResource = "https://rs.example/mcp"
)

// signer signs test tokens with one key.
type signer struct {
	alg  string
	kid  string
	priv crypto.Signer
}

func newSigner(t testing.TB, alg, kid string) *signer {
	t.Helper()
	var (
		k   crypto.Signer
		err error
	)
	switch alg {
	case "RS256":
		k, err = rsa.GenerateKey(rand.Reader, 2048)
	case "ES256":
		k, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case "EdDSA":
		_, k, err = ed25519.GenerateKey(rand.Reader)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &signer{alg: alg, kid: kid, priv: k}
}

func b64e(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// jwk is the public key as a JWKS entry.
func (s *signer) jwk() map[string]any {
	switch pub := s.priv.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": s.kid, "alg": "RS256", "use": "sig", "n": b64e(pub.N.Bytes()), "e": b64e(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, _ := pub.Bytes()
		return map[string]any{"kty": "EC", "kid": s.kid, "crv": "P-256", "x": b64e(b[1:33]), "y": b64e(b[33:])}
	case ed25519.PublicKey:
		return map[string]any{"kty": "OKP", "kid": s.kid, "crv": "Ed25519", "x": b64e(pub)}
	}
	panic("unknown key")
}

func jwksJSON(signers ...*signer) []byte {
	var keys []any
	for _, s := range signers {
		keys = append(keys, s.jwk())
	}
	b, _ := json.Marshal(map[string]any{"keys": keys})
	return b
}

// token signs claims; header entries in hdr override the defaults.
func (s *signer) token(t testing.TB, claims map[string]any, hdr map[string]any) string {
	t.Helper()
	h := map[string]any{"alg": s.alg, "typ": "JWT", "kid": s.kid}
	for k, v := range hdr {
		if v == nil {
			delete(h, k)
			continue
		}
		h[k] = v
	}
	hb, _ := json.Marshal(h)
	cb, _ := json.Marshal(claims)
	in := b64e(hb) + "." + b64e(cb)
	var sig []byte
	var err error
	switch s.alg {
	case "RS256":
		d := sha256.Sum256([]byte(in))
		sig, err = s.priv.Sign(rand.Reader, d[:], crypto.SHA256)
	case "ES256":
		d := sha256.Sum256([]byte(in))
		r, ss, e := ecdsa.Sign(rand.Reader, s.priv.(*ecdsa.PrivateKey), d[:])
		err = e
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	case "EdDSA":
		sig = ed25519.Sign(s.priv.(ed25519.PrivateKey), []byte(in))
	}
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + b64e(sig)
}

var fixedNow = time.Unix(1_800_000_000, 0)

func claims(mod map[string]any) map[string]any {
	c := map[string]any{
		"iss":   testIssuer,
		"sub":   "alice",
		"aud":   testResource,
		"exp":   fixedNow.Add(time.Hour).Unix(),
		"iat":   fixedNow.Add(-time.Minute).Unix(),
		"scope": "mcp weather:read",
	}
	for k, v := range mod {
		if v == nil {
			delete(c, k)
			continue
		}
		c[k] = v
	}
	return c
}

// jwksServer serves a key set over TLS and counts fetches.
type jwksServer struct {
	ts    *httptest.Server
	body  atomic.Pointer[[]byte]
	count atomic.Int64
}

func newJWKSServer(t testing.TB, body []byte) *jwksServer {
	j := &jwksServer{}
	j.body.Store(&body)
	j.ts = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.count.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(*j.body.Load())
	}))
	t.Cleanup(j.ts.Close)
	return j
}

func (j *jwksServer) set(body []byte) { j.body.Store(&body) }

func newJWT(t testing.TB, j *jwksServer, mod func(*Config)) *Authenticator {
	t.Helper()
	c := &Config{
		Mode:            ModeJWT,
		Issuer:          testIssuer,
		Resource:        testResource,
		JWKSURL:         j.ts.URL + "/jwks",
		HTTPClient:      j.ts.Client(),
		ScopesSupported: []string{"mcp", "weather:read"},
		Now:             func() time.Time { return fixedNow },
	}
	if mod != nil {
		mod(c)
	}
	a, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func req(hdr map[string]string, query string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "http://rs.example/mcp"+query, nil)
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	return r
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func TestJWT(t *testing.T) {
	rs := newSigner(t, "RS256", "rsa-1")
	ec := newSigner(t, "ES256", "ec-1")
	ed := newSigner(t, "EdDSA", "ed-1")
	other := newSigner(t, "RS256", "rsa-1") // same kid, different key
	j := newJWKSServer(t, jwksJSON(rs, ec, ed))
	a := newJWT(t, j, func(c *Config) { c.JWKSMinRefresh = time.Nanosecond })

	hmacNone := func() string {
		// alg=HS256 keyed with the RSA public key (algorithm confusion).
		hb, _ := json.Marshal(map[string]any{"alg": "HS256", "kid": "rsa-1"})
		cb, _ := json.Marshal(claims(nil))
		in := b64e(hb) + "." + b64e(cb)
		m := hmac.New(sha256.New, rs.priv.Public().(*rsa.PublicKey).N.Bytes())
		m.Write([]byte(in))
		return in + "." + b64e(m.Sum(nil))
	}
	algNone := func() string {
		hb, _ := json.Marshal(map[string]any{"alg": "none"})
		cb, _ := json.Marshal(claims(nil))
		return b64e(hb) + "." + b64e(cb) + "."
	}
	tamper := func(tok string) string {
		parts := strings.Split(tok, ".")
		cb, _ := json.Marshal(claims(map[string]any{"sub": "mallory"}))
		return parts[0] + "." + b64e(cb) + "." + parts[2]
	}

	tests := []struct {
		name    string
		hdr     map[string]string
		query   string
		status  int    // 0: accepted
		code    string // OAuth error code
		subject string
	}{
		{name: "rs256", hdr: bearer(rs.token(t, claims(nil), nil)), subject: "alice"},
		{name: "es256", hdr: bearer(ec.token(t, claims(nil), nil)), subject: "alice"},
		{name: "eddsa", hdr: bearer(ed.token(t, claims(nil), nil)), subject: "alice"},
		{name: "aud array", hdr: bearer(rs.token(t, claims(map[string]any{"aud": []string{"other", testResource}}), nil)), subject: "alice"},
		{name: "client_id subject", hdr: bearer(rs.token(t, claims(map[string]any{"sub": nil, "client_id": "bot"}), nil)), subject: "bot"},
		{name: "expired within leeway", hdr: bearer(rs.token(t, claims(map[string]any{"exp": fixedNow.Add(-10 * time.Second).Unix()}), nil)), subject: "alice"},
		{name: "at+jwt type", hdr: bearer(rs.token(t, claims(nil), map[string]any{"typ": "at+jwt"})), subject: "alice"},
		{name: "missing", status: 401},
		{name: "basic scheme", hdr: map[string]string{"Authorization": "Basic YTpi"}, status: 401},
		{name: "expired", hdr: bearer(rs.token(t, claims(map[string]any{"exp": fixedNow.Add(-time.Hour).Unix()}), nil)), status: 401, code: "invalid_token"},
		{name: "no exp", hdr: bearer(rs.token(t, claims(map[string]any{"exp": nil}), nil)), status: 401, code: "invalid_token"},
		{name: "not yet valid", hdr: bearer(rs.token(t, claims(map[string]any{"nbf": fixedNow.Add(time.Hour).Unix()}), nil)), status: 401, code: "invalid_token"},
		{name: "wrong audience", hdr: bearer(rs.token(t, claims(map[string]any{"aud": "https://other.example/mcp"}), nil)), status: 401, code: "invalid_token"},
		{name: "no audience", hdr: bearer(rs.token(t, claims(map[string]any{"aud": nil}), nil)), status: 401, code: "invalid_token"},
		{name: "wrong issuer", hdr: bearer(rs.token(t, claims(map[string]any{"iss": "https://evil.example"}), nil)), status: 401, code: "invalid_token"},
		{name: "bad signature", hdr: bearer(other.token(t, claims(nil), nil)), status: 401, code: "invalid_token"},
		{name: "tampered claims", hdr: bearer(tamper(rs.token(t, claims(nil), nil))), status: 401, code: "invalid_token"},
		{name: "alg none", hdr: bearer(algNone()), status: 401, code: "invalid_token"},
		{name: "alg hs256 confusion", hdr: bearer(hmacNone()), status: 401, code: "invalid_token"},
		{name: "alg mismatch with key", hdr: bearer(ec.token(t, claims(nil), map[string]any{"kid": "rsa-1"})), status: 401, code: "invalid_token"},
		{name: "kid unknown", hdr: bearer(newSigner(t, "RS256", "rsa-9").token(t, claims(nil), nil)), status: 401, code: "invalid_token"},
		{name: "crit header", hdr: bearer(rs.token(t, claims(nil), map[string]any{"crit": []string{"exp"}})), status: 401, code: "invalid_token"},
		{name: "no subject", hdr: bearer(rs.token(t, claims(map[string]any{"sub": nil}), nil)), status: 401, code: "invalid_token"},
		{name: "garbage", hdr: bearer("abc.def.ghi"), status: 401, code: "invalid_token"},
		{name: "malformed token", hdr: map[string]string{"Authorization": "Bearer a b"}, status: 401, code: "invalid_request"},
		{name: "token in query", query: "?access_token=" + rs.token(t, claims(nil), nil), status: 401, code: "invalid_request"},
		{name: "token in query and header", hdr: bearer(rs.token(t, claims(nil), nil)), query: "?Access_Token=x", status: 401, code: "invalid_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := a.Authenticate(context.Background(), req(tt.hdr, tt.query))
			if tt.status == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if id.Subject != tt.subject || !id.HasScope("weather:read") {
					t.Fatalf("identity = %+v", id)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want *Error", err)
			}
			if e.Status != tt.status || e.Code != tt.code {
				t.Fatalf("refusal = %d %q (%s), want %d %q", e.Status, e.Code, e.Description, tt.status, tt.code)
			}
			ch := a.Challenge(err)
			if !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp"`) {
				t.Errorf("challenge = %s", ch)
			}
			if tt.code != "" && !strings.Contains(ch, `error="`+tt.code+`"`) {
				t.Errorf("challenge = %s, want error=%q", ch, tt.code)
			}
		})
	}
}

func TestRequiredScopes(t *testing.T) {
	rs := newSigner(t, "RS256", "k")
	j := newJWKSServer(t, jwksJSON(rs))
	a := newJWT(t, j, func(c *Config) { c.RequiredScopes = []string{"mcp", "admin"} })
	_, err := a.Authenticate(context.Background(), req(bearer(rs.token(t, claims(nil), nil)), ""))
	var e *Error
	if !errors.As(err, &e) || e.Status != 403 || e.Code != "insufficient_scope" {
		t.Fatalf("err = %v, want 403 insufficient_scope", err)
	}
	if ch := a.Challenge(err); !strings.Contains(ch, `error="insufficient_scope"`) || !strings.Contains(ch, `scope="mcp admin"`) {
		t.Errorf("challenge = %s", ch)
	}
	id, err := a.Authenticate(context.Background(), req(bearer(rs.token(t, claims(map[string]any{"scope": nil, "scp": []string{"mcp", "admin"}}), nil)), ""))
	if err != nil || !id.HasScope("admin") {
		t.Fatalf("scp array: %+v %v", id, err)
	}
	// A missing token is challenged with the scopes needed.
	if ch := a.Challenge(ErrNoToken); strings.Contains(ch, "error=") || !strings.Contains(ch, `scope="mcp admin"`) {
		t.Errorf("challenge = %s", ch)
	}
}

func TestJWKSRefresh(t *testing.T) {
	old := newSigner(t, "ES256", "old")
	rotated := newSigner(t, "ES256", "new")
	j := newJWKSServer(t, jwksJSON(old))
	now := fixedNow
	a := newJWT(t, j, func(c *Config) {
		c.JWKSMinRefresh = time.Minute
		c.Now = func() time.Time { return now }
	})
	ctx := context.Background()
	if _, err := a.Authenticate(ctx, req(bearer(old.token(t, claims(nil), nil)), "")); err != nil {
		t.Fatal(err)
	}
	if n := j.count.Load(); n != 1 {
		t.Fatalf("fetches = %d, want 1", n)
	}
	// Flood of unknown kids: at most one fetch per JWKSMinRefresh.
	now = now.Add(2 * time.Minute)
	for i := 0; i < 200; i++ {
		s := newSigner(t, "EdDSA", "forged")
		if _, err := a.Authenticate(ctx, req(bearer(s.token(t, claims(nil), nil)), "")); err == nil {
			t.Fatal("forged key accepted")
		}
	}
	if n := j.count.Load(); n != 2 {
		t.Fatalf("fetches after a flood of unknown kids = %d, want 2 (one refresh)", n)
	}
	// The issuer rotates keys: the new kid is fetched once the rate allows.
	j.set(jwksJSON(old, rotated))
	if _, err := a.Authenticate(ctx, req(bearer(rotated.token(t, claims(nil), nil)), "")); err == nil {
		t.Fatal("rotated key accepted before the refresh interval")
	}
	now = now.Add(2 * time.Minute)
	if _, err := a.Authenticate(ctx, req(bearer(rotated.token(t, claims(nil), nil)), "")); err != nil {
		t.Fatalf("rotated key after refresh: %v", err)
	}
}

func TestJWKSBounds(t *testing.T) {
	rs := newSigner(t, "RS256", "k")
	big := []byte(`{"keys":[],"pad":"` + strings.Repeat("x", 2<<20) + `"}`)
	j := newJWKSServer(t, big)
	a := newJWT(t, j, nil)
	if _, err := a.Authenticate(context.Background(), req(bearer(rs.token(t, claims(nil), nil)), "")); err == nil {
		t.Fatal("accepted with an oversized key set")
	}
	// Weak RSA keys are refused in a key file.
	weak, _ := rsa.GenerateKey(rand.Reader, 1024)
	doc, _ := json.Marshal(map[string]any{"keys": []any{map[string]any{"kty": "RSA", "kid": "w", "n": b64e(weak.N.Bytes()), "e": "AQAB"}}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	os.WriteFile(path, doc, 0o600)
	if _, err := New(&Config{Mode: ModeJWT, Issuer: testIssuer, Resource: testResource, JWKSFile: path}); err == nil || !strings.Contains(err.Error(), "1024 bits") {
		t.Fatalf("weak key: %v", err)
	}
	// A key file works like a URL.
	os.WriteFile(path, jwksJSON(rs), 0o600)
	a, err := New(&Config{Mode: ModeJWT, Issuer: testIssuer, Resource: testResource, JWKSFile: path, Now: func() time.Time { return fixedNow }})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Authenticate(context.Background(), req(bearer(rs.token(t, claims(nil), nil)), "")); err != nil {
		t.Fatal(err)
	}
}

func TestBearer(t *testing.T) {
	a, err := New(&Config{Mode: ModeBearer, Tokens: []Token{
		{Secret: "plain-0123456789abcdef"},
		{Name: "ci", Secret: "ci-0123456789abcdef", Scopes: []string{"weather:read"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		hdr     map[string]string
		query   string
		subject string
		status  int
	}{
		{name: "named", hdr: bearer("ci-0123456789abcdef"), subject: "ci"},
		{name: "plain", hdr: bearer("plain-0123456789abcdef"), subject: "token-"},
		{name: "lower-case scheme", hdr: map[string]string{"Authorization": "bearer ci-0123456789abcdef"}, subject: "ci"},
		{name: "missing", status: 401},
		{name: "wrong", hdr: bearer("ci-0123456789abcdeX"), status: 401},
		{name: "prefix", hdr: bearer("ci-0123456789abcde"), status: 401},
		{name: "query", query: "?access_token=ci-0123456789abcdef", status: 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id, err := a.Authenticate(context.Background(), req(tt.hdr, tt.query))
			if tt.status != 0 {
				var e *Error
				if !errors.As(err, &e) || e.Status != tt.status {
					t.Fatalf("err = %v, want %d", err, tt.status)
				}
				if ch := a.Challenge(err); !strings.HasPrefix(ch, "Bearer ") || strings.Contains(ch, "resource_metadata") {
					t.Errorf("challenge = %s", ch)
				}
				return
			}
			if err != nil || !strings.HasPrefix(id.Subject, tt.subject) {
				t.Fatalf("identity %+v, err %v", id, err)
			}
		})
	}
	if a.MetadataURL() != "" {
		t.Error("bearer mode publishes metadata")
	}
}

func TestMiddleware(t *testing.T) {
	rs := newSigner(t, "RS256", "k")
	j := newJWKSServer(t, jwksJSON(rs))
	a := newJWT(t, j, func(c *Config) { c.Now = time.Now })
	type ctxKey struct{}
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Context().Value(ctxKey{}).(Identity)
		io.WriteString(w, id.Subject)
	})
	h := a.Middleware("/mcp", func(r *http.Request, id Identity) *http.Request {
		return r.WithContext(context.WithValue(r.Context(), ctxKey{}, id))
	})(next)
	ts := httptest.NewServer(h)
	defer ts.Close()

	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || doc["resource"] != testResource {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, doc)
		}
		as, _ := doc["authorization_servers"].([]any)
		if len(as) != 1 || as[0] != testIssuer {
			t.Errorf("authorization_servers = %v", doc["authorization_servers"])
		}
		if sc, _ := doc["scopes_supported"].([]any); len(sc) != 2 {
			t.Errorf("scopes_supported = %v", doc["scopes_supported"])
		}
		if bm, _ := doc["bearer_methods_supported"].([]any); len(bm) != 1 || bm[0] != "header" {
			t.Errorf("bearer_methods_supported = %v", doc["bearer_methods_supported"])
		}
	}

	resp, err := http.Post(ts.URL+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") != `Bearer resource_metadata="https://rs.example/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	var rpc struct {
		Error struct{ Code int } `json:"error"`
	}
	if json.Unmarshal(body, &rpc) != nil || rpc.Error.Code != -32600 {
		t.Errorf("body = %s, want a JSON-RPC error", body)
	}

	r, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(`{}`))
	r.Header.Set("Authorization", "Bearer "+rs.token(t, claims(map[string]any{"exp": time.Now().Add(time.Hour).Unix()}), nil))
	resp, err = http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "alice" {
		t.Fatalf("valid token: %d %s", resp.StatusCode, body)
	}
}

// FuzzAuthenticate checks that no Authorization header makes the
// verifier panic or accept a token it did not see signed.
func FuzzAuthenticate(f *testing.F) {
	rs := newSigner(f, "RS256", "k")
	ec := newSigner(f, "ES256", "e")
	j := newJWKSServer(f, jwksJSON(rs, ec))
	a := newJWT(f, j, nil)
	f.Add("Bearer " + rs.token(f, claims(nil), nil))
	f.Add("Bearer " + ec.token(f, claims(nil), nil))
	f.Add("Bearer eyJhbGciOiJub25lIn0.e30.")
	f.Add("Bearer a.b.c")
	f.Add("bearer ====")
	f.Add("Basic dXNlcjpwYXNz")
	f.Fuzz(func(t *testing.T, header string) {
		r := httptest.NewRequest(http.MethodPost, "http://rs.example/mcp", nil)
		r.Header.Set("Authorization", header)
		id, err := a.Authenticate(context.Background(), r)
		if err == nil && id.Subject != "alice" {
			t.Fatalf("accepted %q as %+v", header, id)
		}
	})
}
