package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"time"
)

// b64 decodes the unpadded base64url of JWS (RFC 7515 §2), strictly.
var b64 = base64.RawURLEncoding.Strict()

// jwtHeader is the JOSE header fields the verifier reads.
type jwtHeader struct {
	Alg  string          `json:"alg"`
	Kid  string          `json:"kid"`
	Typ  string          `json:"typ"`
	Crit json.RawMessage `json:"crit"`
}

// jwtClaims is the claims the verifier reads.
type jwtClaims struct {
	Iss      *string         `json:"iss"`
	Sub      string          `json:"sub"`
	Aud      json.RawMessage `json:"aud"`
	Exp      *json.Number    `json:"exp"`
	Nbf      *json.Number    `json:"nbf"`
	Scope    string          `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
	ClientID string          `json:"client_id"`
}

// checkJWT verifies a JWT access token: signature by a key of the key
// set, issuer, audience, expiry; it returns the caller it names.
func (a *Authenticator) checkJWT(ctx context.Context, tok string) (Identity, error) {
	h64, rest, ok1 := strings.Cut(tok, ".")
	p64, s64, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s64, ".") {
		return Identity{}, invalidToken("not a JWT")
	}
	hb, err1 := b64.DecodeString(h64)
	pb, err2 := b64.DecodeString(p64)
	sig, err3 := b64.DecodeString(s64)
	if err1 != nil || err2 != nil || err3 != nil {
		return Identity{}, invalidToken("malformed JWT encoding")
	}
	var hd jwtHeader
	if err := json.Unmarshal(hb, &hd); err != nil {
		return Identity{}, invalidToken("malformed JWT header")
	}
	switch {
	case len(hd.Crit) > 0:
		return Identity{}, invalidToken("unsupported critical JWT header")
	case hd.Typ != "" && !strings.EqualFold(hd.Typ, "JWT") && !strings.EqualFold(hd.Typ, "at+jwt") && !strings.EqualFold(hd.Typ, "application/at+jwt"):
		return Identity{}, invalidToken("unexpected token type %q", hd.Typ)
	}
	switch hd.Alg {
	case "RS256", "ES256", "EdDSA":
	default:
		return Identity{}, invalidToken("signature algorithm %q is not accepted", hd.Alg)
	}
	key, err := a.keys.key(ctx, hd.Kid, hd.Alg)
	if err != nil {
		return Identity{}, invalidToken("%v", err)
	}
	if !verifySignature(hd.Alg, key, []byte(tok[:len(h64)+1+len(p64)]), sig) {
		return Identity{}, invalidToken("bad signature")
	}

	var cl jwtClaims
	dec := json.NewDecoder(bytes.NewReader(pb))
	dec.UseNumber()
	if err := dec.Decode(&cl); err != nil {
		return Identity{}, invalidToken("malformed JWT claims")
	}
	if cl.Iss == nil || *cl.Iss != a.cfg.Issuer {
		return Identity{}, invalidToken("wrong issuer")
	}
	if !audienceHas(cl.Aud, a.audience) {
		return Identity{}, invalidToken("the token was not issued for this server (aud)")
	}
	now := a.now()
	leeway := a.cfg.Leeway
	if cl.Exp == nil {
		return Identity{}, invalidToken("the token has no expiry (exp)")
	}
	exp, ok := numericDate(*cl.Exp)
	if !ok {
		return Identity{}, invalidToken("malformed exp")
	}
	if !now.Before(exp.Add(leeway)) {
		return Identity{}, invalidToken("the token expired")
	}
	if cl.Nbf != nil {
		nbf, ok := numericDate(*cl.Nbf)
		if !ok {
			return Identity{}, invalidToken("malformed nbf")
		}
		if now.Add(leeway).Before(nbf) {
			return Identity{}, invalidToken("the token is not valid yet (nbf)")
		}
	}
	id := Identity{Subject: cl.Sub}
	if id.Subject == "" {
		id.Subject = cl.ClientID
	}
	if id.Subject == "" {
		return Identity{}, invalidToken("the token names no subject (sub or client_id)")
	}
	scopes, ok := parseScopes(cl.Scope, cl.Scp)
	if !ok {
		return Identity{}, invalidToken("malformed scp claim")
	}
	id.Scopes = scopes
	return id, nil
}

// audienceHas reports whether aud (a string or an array of strings)
// contains want.
func audienceHas(aud json.RawMessage, want string) bool {
	if len(aud) == 0 {
		return false
	}
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(aud, &many) != nil {
		return false
	}
	for _, a := range many {
		if a == want {
			return true
		}
	}
	return false
}

// numericDate converts a NumericDate (seconds, possibly fractional).
func numericDate(n json.Number) (time.Time, bool) {
	f, err := n.Float64()
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 || f > 1e12 {
		return time.Time{}, false
	}
	sec, frac := math.Modf(f)
	return time.Unix(int64(sec), int64(frac*1e9)), true
}

// parseScopes merges the space-separated scope claim and the scp claim
// (an array of strings, or a space-separated string).
func parseScopes(scope string, scp json.RawMessage) ([]string, bool) {
	out := strings.Fields(scope)
	if len(scp) > 0 && string(scp) != "null" {
		var s string
		var arr []string
		switch {
		case json.Unmarshal(scp, &s) == nil:
			out = append(out, strings.Fields(s)...)
		case json.Unmarshal(scp, &arr) == nil:
			out = append(out, arr...)
		default:
			return nil, false
		}
	}
	return out, true
}

// verifySignature checks sig over signed with key under alg.
func verifySignature(alg string, key crypto.PublicKey, signed, sig []byte) bool {
	switch alg {
	case "RS256":
		k, ok := key.(*rsa.PublicKey)
		if !ok {
			return false
		}
		d := sha256.Sum256(signed)
		return rsa.VerifyPKCS1v15(k, crypto.SHA256, d[:], sig) == nil
	case "ES256":
		k, ok := key.(*ecdsa.PublicKey)
		if !ok || len(sig) != 64 {
			return false
		}
		d := sha256.Sum256(signed)
		r := new(big.Int).SetBytes(sig[:32])
		s := new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, d[:], r, s)
	case "EdDSA":
		k, ok := key.(ed25519.PublicKey)
		if !ok {
			return false
		}
		return ed25519.Verify(k, signed, sig)
	}
	return false
}

// errUnknownKey is a token signed by a key the key set does not have.
var errUnknownKey = errors.New("the token names a key this server does not know (kid)")
