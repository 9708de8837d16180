package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestJWKSStalled stalls the key server while tokens with unknown key ids
// arrive: each of them is refused within a short bounded wait (not the
// fetch's 10 s timeout), they share one fetch, and tokens with a known key
// id are accepted meanwhile without waiting for it.
func TestJWKSStalled(t *testing.T) {
	known := newSigner(t, "ES256", "k")
	var stall atomic.Bool
	var count atomic.Int64
	release := make(chan struct{})
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		count.Add(1)
		if stall.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(jwksJSON(known))
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(func() { close(release) }) // runs first: the stalled handler returns
	var mu sync.Mutex
	now := fixedNow
	a, err := New(&Config{
		Mode: ModeJWT, Issuer: testIssuer, Resource: testResource,
		JWKSURL: ts.URL + "/jwks", HTTPClient: ts.Client(),
		JWKSWait: 200 * time.Millisecond,
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
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := newSigner(t, "EdDSA", fmt.Sprintf("forged-%d", i))
			start := time.Now()
			_, err := a.Authenticate(ctx, req(bearer(s.token(t, claims(nil), nil)), ""))
			if took := time.Since(start); took > 5*time.Second {
				errs <- fmt.Errorf("an unknown kid waited %v for the stalled key server", took)
			} else if err == nil {
				errs <- fmt.Errorf("forged key accepted")
			}
		}()
	}
	// A known key id does not wait for the fetch in flight.
	start := time.Now()
	if _, err := a.Authenticate(ctx, req(bearer(known.token(t, claims(nil), nil)), "")); err != nil {
		t.Fatalf("known kid during the stall: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
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
}
