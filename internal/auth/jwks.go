package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// Bounds of a key set.
const (
	maxJWKSBytes = 1 << 20
	maxJWKSKeys  = 100
	minRSABits   = 2048
)

// keySource finds the verification key of a token.
type keySource interface {
	key(ctx context.Context, kid, alg string) (crypto.PublicKey, error)
}

// jwkHead is what the key set's filter reads of a key before it is
// parsed: keys of other types, curves or algorithms are skipped unparsed,
// as RFC 7517 §5 asks, so that one key this server cannot use does not
// make the whole set unusable.
type jwkHead struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Crv string `json:"crv"`
}

// keySet is a parsed JWKS: the usable signing keys.
type keySet struct {
	keys []parsedKey
}

type parsedKey struct {
	kid string
	alg string // the algorithm the key is for
	pub crypto.PublicKey
}

// find returns the key for kid and alg. A token without kid matches the
// only key of its algorithm.
func (ks *keySet) find(kid, alg string) (crypto.PublicKey, bool) {
	var match crypto.PublicKey
	n := 0
	for _, k := range ks.keys {
		if k.alg != alg {
			continue
		}
		if kid != "" && k.kid == kid {
			return k.pub, true
		}
		if kid == "" {
			match = k.pub
			n++
		}
	}
	return match, kid == "" && n == 1
}

// parseKeySet decodes a JWKS document, keeping the keys usable for
// signatures with RS256, ES256 or EdDSA. Keys of other types are skipped;
// malformed keys of these types are errors. go-jose parses each key (and
// checks an EC point lies on its curve); the filter and the bounds on
// RSA keys are ours.
func parseKeySet(data []byte) (*keySet, error) {
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("key set: %w", err)
	}
	if doc.Keys == nil {
		return nil, errors.New("key set: no \"keys\" array")
	}
	if len(doc.Keys) > maxJWKSKeys {
		return nil, fmt.Errorf("key set: %d keys, more than %d", len(doc.Keys), maxJWKSKeys)
	}
	ks := &keySet{}
	for i, raw := range doc.Keys {
		var h jwkHead
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("key set: key %d: %w", i, err)
		}
		if h.Use != "" && h.Use != "sig" {
			continue
		}
		alg := keyAlg(&h)
		if alg == "" {
			continue
		}
		pub, err := parseKey(raw, alg)
		if err != nil {
			return nil, fmt.Errorf("key set: key %d (kid %q): %w", i, h.Kid, err)
		}
		ks.keys = append(ks.keys, parsedKey{kid: h.Kid, alg: alg, pub: pub})
	}
	return ks, nil
}

// keyAlg is the accepted algorithm a key is for, or "" for a key this
// server does not use.
func keyAlg(h *jwkHead) string {
	switch {
	case h.Kty == "RSA" && (h.Alg == "" || h.Alg == "RS256"):
		return "RS256"
	case h.Kty == "EC" && h.Crv == "P-256" && (h.Alg == "" || h.Alg == "ES256"):
		return "ES256"
	case h.Kty == "OKP" && h.Crv == "Ed25519" && (h.Alg == "" || h.Alg == "EdDSA" || h.Alg == "Ed25519"):
		return "EdDSA"
	}
	return ""
}

// parseKey parses one key of the set with go-jose and returns its public
// half (a set that carries a private key by mistake still verifies with
// it, and the private half is dropped).
func parseKey(raw json.RawMessage, alg string) (crypto.PublicKey, error) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil {
		return nil, fmt.Errorf("malformed key: %w", err)
	}
	var pub crypto.PublicKey = k.Key
	if priv, ok := k.Key.(crypto.Signer); ok {
		pub = priv.Public()
	}
	switch p := pub.(type) {
	case *rsa.PublicKey:
		if alg != "RS256" {
			break
		}
		if p.N.BitLen() < minRSABits {
			return nil, fmt.Errorf("RSA key of %d bits; at least %d needed", p.N.BitLen(), minRSABits)
		}
		if p.E < 3 || p.E%2 == 0 {
			return nil, errors.New("bad RSA exponent")
		}
		return p, nil
	case *ecdsa.PublicKey:
		if alg == "ES256" {
			return p, nil
		}
	case ed25519.PublicKey:
		if alg == "EdDSA" {
			return p, nil
		}
	}
	return nil, fmt.Errorf("not a %s key", alg)
}

// staticKeys is a key set read from a file.
type staticKeys struct{ ks *keySet }

func loadKeyFile(path string) (*staticKeys, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJWKSBytes {
		return nil, fmt.Errorf("%s: key set larger than %d bytes", path, maxJWKSBytes)
	}
	ks, err := parseKeySet(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(ks.keys) == 0 {
		return nil, fmt.Errorf("%s: no RS256, ES256 or EdDSA signing key", path)
	}
	return &staticKeys{ks}, nil
}

func (s *staticKeys) key(_ context.Context, kid, alg string) (crypto.PublicKey, error) {
	if k, ok := s.ks.find(kid, alg); ok {
		return k, nil
	}
	return nil, errUnknownKey
}

// remoteKeys is a key set fetched from an https URL and cached. It is
// fetched again when it is older than maxAge, or when a token names an
// unknown key, but never more often than minRefresh: a flood of tokens
// with made-up key ids costs one fetch per minRefresh at most. A fetch
// runs in the background, shared by every request that needs it; such a
// request waits for it at most wait, and a request whose key is known
// never waits.
type remoteKeys struct {
	url        string
	client     *http.Client
	minRefresh time.Duration
	maxAge     time.Duration
	wait       time.Duration
	log        *slog.Logger
	now        func() time.Time

	mu          sync.Mutex
	ks          *keySet
	fetched     time.Time // of ks
	lastAttempt time.Time
	inflight    chan struct{} // closed when the fetch in flight ends; nil when none
}

// fetchTimeout bounds one fetch of the key set.
const fetchTimeout = 10 * time.Second

func newRemoteKeys(c *Config, log *slog.Logger, now func() time.Time) (*remoteKeys, error) {
	r := &remoteKeys{url: c.JWKSURL, client: c.HTTPClient, minRefresh: c.JWKSMinRefresh, maxAge: c.JWKSMaxAge, wait: c.JWKSWait, log: log, now: now}
	if r.client == nil {
		r.client = &http.Client{
			Timeout: fetchTimeout,
			CheckRedirect: func(req *http.Request, via []*http.Request) error {
				if req.URL.Scheme != "https" || len(via) >= 3 {
					return errors.New("jwks: refusing redirect")
				}
				return nil
			},
		}
	}
	if r.minRefresh <= 0 {
		r.minRefresh = 30 * time.Second
	}
	if r.maxAge <= 0 {
		r.maxAge = time.Hour
	}
	if r.wait <= 0 {
		r.wait = 2 * time.Second
	}
	return r, nil
}

func (r *remoteKeys) current() (*keySet, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ks, r.fetched
}

func (r *remoteKeys) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	ks, fetched := r.current()
	if ks != nil {
		if k, ok := ks.find(kid, alg); ok {
			if r.now().Sub(fetched) > r.maxAge {
				r.startFetch()
			}
			return k, nil
		}
	}
	// Unknown key (or nothing fetched yet): fetch, if the rate allows,
	// and wait a little for it.
	done := r.startFetch()
	if done == nil {
		return nil, errUnknownKey
	}
	t := time.NewTimer(r.wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		return nil, errUnknownKey
	case <-ctx.Done():
		return nil, errUnknownKey
	}
	if ks, _ = r.current(); ks != nil {
		if k, ok := ks.find(kid, alg); ok {
			return k, nil
		}
	}
	return nil, errUnknownKey
}

// startFetch returns a channel closed when the fetch in flight ends,
// starting one unless the last began less than minRefresh ago; nil when
// there is none.
func (r *remoteKeys) startFetch() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.inflight != nil {
		return r.inflight
	}
	if !r.lastAttempt.IsZero() && r.now().Sub(r.lastAttempt) < r.minRefresh {
		return nil
	}
	r.lastAttempt = r.now()
	done := make(chan struct{})
	r.inflight = done
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
		defer cancel()
		ks, err := r.fetch(ctx)
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			r.log.Warn("fetching the JWKS failed; keeping the keys already known", "url", r.url, "error", err)
		} else {
			r.ks, r.fetched = ks, r.now()
		}
		r.inflight = nil
		close(done)
	}()
	return done
}

func (r *remoteKeys) fetch(ctx context.Context) (*keySet, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxJWKSBytes {
		return nil, fmt.Errorf("key set larger than %d bytes", maxJWKSBytes)
	}
	return parseKeySet(data)
}
