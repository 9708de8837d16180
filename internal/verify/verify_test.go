package verify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/fetch"
)

func testPolicy(t testing.TB) *Policy {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	p, err := New(Options{KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestVerifyRefuses: what is not a valid signature is refused with the
// reason; the accepting cases run end to end in internal/server.
func TestVerifyRefuses(t *testing.T) {
	p := testPolicy(t)
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		name   string
		digest string
		sigs   []fetch.Signature
		err    error
		inErr  string
	}{
		{"no signatures", d, nil, ErrUnsigned, "unsigned"},
		{"bad digest", "sha256:zz", nil, nil, "not sha256"},
		{"garbage bundle", d, []fetch.Signature{{Source: "referrer", Bundle: []byte("{")}}, ErrInvalid, "referrer signature 1: bundle"},
		{"garbage payload", d, []fetch.Signature{{Source: "tag", Payload: []byte("[]")}}, ErrInvalid, "payload"},
		{"other digest", d, []fetch.Signature{{Source: "tag", Payload: []byte(`{"critical":{"image":{"docker-manifest-digest":"sha256:00"},"type":"cosign container image signature"}}`)}}, ErrInvalid, "not this manifest"},
		{"bad signature", d, []fetch.Signature{{Source: "tag", Signature: "AAAA", Payload: []byte(`{"critical":{"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"}}`)}}, ErrInvalid, "does not verify with the key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := p.Verify(c.digest, c.sigs)
			if err == nil || (c.err != nil && !errors.Is(err, c.err)) || !strings.Contains(err.Error(), c.inErr) {
				t.Fatalf("Verify = %v, want %v containing %q", err, c.err, c.inErr)
			}
		})
	}
	if _, err := New(Options{KeyPEM: []byte("not pem")}); err == nil {
		t.Error("New accepted a non-PEM key")
	}
	if _, err := New(Options{TrustedRootJSON: []byte("{}"), Issuer: "i", Identity: "x"}); err == nil {
		t.Error("New accepted an empty trusted root")
	}
}

func FuzzVerify(f *testing.F) {
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`), []byte(`{"critical":{}}`), "AAAA")
	p := testPolicy(f)
	d := "sha256:" + strings.Repeat("ab", 32)
	f.Fuzz(func(t *testing.T, bundle, payload []byte, sig string) {
		sigs := []fetch.Signature{{Source: "referrer", Bundle: bundle}, {Source: "tag", Payload: payload, Signature: sig}}
		if len(bundle) == 0 {
			sigs = sigs[1:]
		}
		if p.Verify(d, sigs) == nil {
			t.Fatal("random material verified")
		}
	})
}
