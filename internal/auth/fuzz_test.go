package auth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzParseKeySet: any key set document is parsed or refused with an
// error, never a panic, and every key it keeps is one of the accepted
// algorithms.
func FuzzParseKeySet(f *testing.F) {
	f.Add(jwksJSON(newSigner(f, "RS256", "r"), newSigner(f, "ES256", "e"), newSigner(f, "EdDSA", "d")))
	f.Add([]byte(`{"keys":[{"kty":"oct","k":"AAAA"},{"kty":"EC","crv":"P-384","x":"","y":""}]}`))
	f.Add([]byte(`{"keys":[{"kty":"RSA","n":"AQAB","e":"AQAB"}]}`))
	f.Add([]byte(`{"keys":[{"kty":"EC","crv":"P-256","x":"AAAA","y":"AAAA"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ks, err := parseKeySet(data)
		if err != nil {
			return
		}
		for _, k := range ks.keys {
			switch k.alg {
			case "RS256", "ES256", "EdDSA":
			default:
				t.Fatalf("kept a key for %q", k.alg)
			}
			if k.pub == nil {
				t.Fatal("kept a key with no public key")
			}
		}
	})
}

// FuzzCheckJWT: no token that the fuzzer makes up is accepted (it has no
// private key), and none makes the verifier panic. The seeds include a
// real token whose claims the fuzzer may rewrite.
func FuzzCheckJWT(f *testing.F) {
	rs := newSigner(f, "RS256", "rsa-1")
	ed := newSigner(f, "EdDSA", "ed-1")
	good := rs.token(f, claims(nil), nil)
	f.Add(good)
	f.Add(ed.token(f, claims(nil), nil))
	f.Add(good[:strings.LastIndexByte(good, '.')+1])
	f.Add("abc.def.ghi")
	f.Add("..")
	path := filepath.Join(f.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwksJSON(rs, ed), 0o600); err != nil {
		f.Fatal(err)
	}
	a, err := New(&Config{Mode: ModeJWT, Issuer: testIssuer, Resource: testResource, JWKSFile: path, Now: func() time.Time { return fixedNow }})
	if err != nil {
		f.Fatal(err)
	}
	seeds := map[string]bool{good: true, ed.token(f, claims(nil), nil): true}
	f.Fuzz(func(t *testing.T, tok string) {
		id, err := a.checkJWT(context.Background(), tok)
		if err == nil && !seeds[tok] {
			t.Fatalf("accepted a made-up token %q as %+v", tok, id)
		}
	})
}
