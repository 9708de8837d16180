package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// acceptedAlgs is the allow-list of signature algorithms: go-jose
// refuses a token signed with any other before it looks for a key, so
// "none" and HMAC keyed with a public key (algorithm confusion) never
// verify.
var acceptedAlgs = []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.EdDSA}

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
	jws, err := jose.ParseSignedCompact(tok, acceptedAlgs)
	if err != nil {
		return Identity{}, invalidToken("not a JWT signed with RS256, ES256 or EdDSA")
	}
	hd := jws.Signatures[0].Protected
	if _, ok := hd.ExtraHeaders["crit"]; ok {
		return Identity{}, invalidToken("unsupported critical JWT header")
	}
	if typ, _ := hd.ExtraHeaders[jose.HeaderType].(string); typ != "" && !strings.EqualFold(typ, "JWT") && !strings.EqualFold(typ, "at+jwt") && !strings.EqualFold(typ, "application/at+jwt") {
		return Identity{}, invalidToken("unexpected token type %q", typ)
	}
	key, err := a.keys.key(ctx, hd.KeyID, hd.Algorithm)
	if err != nil {
		return Identity{}, invalidToken("%v", err)
	}
	pb, err := jws.Verify(key)
	if err != nil {
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
	if a.cfg.Claims {
		id.Claims = boundClaims(pb)
	}
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

// errUnknownKey is a token signed by a key the key set does not have.
var errUnknownKey = errors.New("the token names a key this server does not know (kid)")
