package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net/http"
	"os"
	"sync"
	"time"
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

// jwk is one key of a JSON Web Key Set (RFC 7517, 7518, 8037).
type jwk struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Alg string `json:"alg"`
	Use string `json:"use"`
	Crv string `json:"crv"`
	N   string `json:"n"`
	E   string `json:"e"`
	X   string `json:"x"`
	Y   string `json:"y"`
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
// malformed keys of these types are errors.
func parseKeySet(data []byte) (*keySet, error) {
	var doc struct {
		Keys []jwk `json:"keys"`
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
	for i, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		pk, err := parseKey(&k)
		if err != nil {
			return nil, fmt.Errorf("key set: key %d (kid %q): %w", i, k.Kid, err)
		}
		if pk.pub == nil {
			continue
		}
		ks.keys = append(ks.keys, pk)
	}
	return ks, nil
}

func parseKey(k *jwk) (parsedKey, error) {
	pk := parsedKey{kid: k.Kid}
	switch k.Kty {
	case "RSA":
		if k.Alg != "" && k.Alg != "RS256" {
			return pk, nil
		}
		n, err1 := b64.DecodeString(k.N)
		e, err2 := b64.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return pk, errors.New("malformed RSA key")
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < minRSABits {
			return pk, fmt.Errorf("RSA key of %d bits; at least %d needed", pub.N.BitLen(), minRSABits)
		}
		if pub.E < 3 || pub.E%2 == 0 {
			return pk, errors.New("bad RSA exponent")
		}
		pk.alg, pk.pub = "RS256", pub
	case "EC":
		if (k.Alg != "" && k.Alg != "ES256") || k.Crv != "P-256" {
			return pk, nil
		}
		x, err1 := b64.DecodeString(k.X)
		y, err2 := b64.DecodeString(k.Y)
		if err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return pk, errors.New("malformed P-256 key")
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return pk, fmt.Errorf("bad P-256 key: %w", err)
		}
		pk.alg, pk.pub = "ES256", pub
	case "OKP":
		if (k.Alg != "" && k.Alg != "EdDSA" && k.Alg != "Ed25519") || k.Crv != "Ed25519" {
			return pk, nil
		}
		x, err := b64.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			return pk, errors.New("malformed Ed25519 key")
		}
		pk.alg, pk.pub = "EdDSA", ed25519.PublicKey(x)
	}
	return pk, nil
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
