package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// roundTripper is an http.RoundTripper made of a function: a key server
// without a network, for tests on a fake clock.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestJWKSStalled (on a fake clock) stalls the key server while tokens
// with unknown key ids arrive: each of them is refused after exactly the
// short bounded wait (JWKSWait, not the fetch's 10 s timeout), they share
// one fetch, and tokens with a known key id are accepted meanwhile
// without waiting for it.
func TestJWKSStalled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const wait = 200 * time.Millisecond
		known := newSigner(t, "ES256", "k")
		var stall atomic.Bool
		var count atomic.Int64
		release := make(chan struct{})
		defer close(release) // the stalled fetch returns
		server := roundTripper(func(r *http.Request) (*http.Response, error) {
			count.Add(1)
			if stall.Load() {
				select {
				case <-release:
				case <-r.Context().Done():
				}
				return nil, errors.New("stalled")
			}
			return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}},
				Body: io.NopCloser(bytes.NewReader(jwksJSON(known))), Request: r}, nil
		})
		var mu sync.Mutex
		now := fixedNow
		a, err := New(&Config{
			Mode: ModeJWT, Issuer: testIssuer, Resource: testResource,
			JWKSURL: "https://keys.example/jwks", HTTPClient: &http.Client{Transport: server},
			JWKSWait: wait,
			Now: func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return now
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, err := a.Authenticate(ctx, req(bearer(known.token(t, claims(nil), nil)), "")); err != nil {
			t.Fatal(err)
		}
		stall.Store(true)
		mu.Lock()
		now = now.Add(time.Hour) // the keys are stale and a refetch is allowed
		mu.Unlock()

		// A flood of unknown key ids while the key server stalls.
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for i := range 20 {
			wg.Go(func() {
				s := newSigner(t, "EdDSA", fmt.Sprintf("forged-%d", i))
				start := time.Now()
				_, err := a.Authenticate(ctx, req(bearer(s.token(t, claims(nil), nil)), ""))
				if took := time.Since(start); took != wait {
					errs <- fmt.Errorf("an unknown kid waited %v for the stalled key server, want %v", took, wait)
				} else if err == nil {
					errs <- fmt.Errorf("forged key accepted")
				}
			})
		}
		// A known key id does not wait for the fetch in flight.
		start := time.Now()
		if _, err := a.Authenticate(ctx, req(bearer(known.token(t, claims(nil), nil)), "")); err != nil {
			t.Fatalf("known kid during the stall: %v", err)
		}
		if took := time.Since(start); took != 0 {
			t.Errorf("a known kid waited %v", took)
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if n := count.Load(); n != 2 {
			t.Errorf("%d fetches, want 2 (one refetch shared by every waiting token)", n)
		}
	})
}
