package auth

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Bounds of Identity.Claims: what a token may carry into authorization
// policies, so that a large token cannot make every request costly.
const (
	// MaxClaimsBytes bounds the kept claims object, in bytes.
	MaxClaimsBytes = 16 << 10
	// MaxClaimString bounds one string (a value or an array element).
	MaxClaimString = 1 << 10
	// MaxClaimArray bounds the strings of one array claim (groups,
	// roles).
	MaxClaimArray = 256
	// maxClaimName bounds a claim's name.
	maxClaimName = 128
)

// BoundClaims returns the claims of the JSON object payload as
// Identity.Claims keeps them (see boundClaims), for a caller that states
// claims rather than verifying a token (`wasmcp authz check`).
func BoundClaims(payload []byte) json.RawMessage { return boundClaims(payload) }

// boundClaims returns the members of the claims object payload that
// policies may read: strings, numbers, booleans and arrays of strings,
// within the bounds above, in name order; nil when none is kept.
// Members of other shapes (objects, mixed arrays, nulls) and members
// past a bound are left out whole, never cut, so that a policy never
// sees a value the token did not carry.
func boundClaims(payload []byte) json.RawMessage {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if dec.Decode(&m) != nil || len(m) == 0 {
		return nil
	}
	names := make([]string, 0, len(m))
	for k := range m {
		if len(k) <= maxClaimName {
			names = append(names, k)
		}
	}
	slices.Sort(names)
	out := []byte{'{'}
	for _, k := range names {
		v := keepClaim(m[k])
		if v == nil {
			continue
		}
		name, _ := json.Marshal(k)
		if len(out)+len(name)+len(v)+2 > MaxClaimsBytes {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, name...), ':'), v...)
	}
	if len(out) == 1 {
		return nil
	}
	return append(out, '}')
}

// keepClaim returns v compacted when it has a shape policies may read,
// else nil.
func keepClaim(v json.RawMessage) []byte {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return nil
	}
	switch v[0] {
	case '"':
		var s string
		if json.Unmarshal(v, &s) != nil || len(s) > MaxClaimString {
			return nil
		}
		b, _ := json.Marshal(s)
		return b
	case 't', 'f':
		return v
	case '[':
		var ss []string
		if json.Unmarshal(v, &ss) != nil || len(ss) > MaxClaimArray {
			return nil
		}
		for _, s := range ss {
			if len(s) > MaxClaimString {
				return nil
			}
		}
		b, _ := json.Marshal(ss)
		return b
	case 'n':
		return nil
	case '{':
		return nil
	}
	var n json.Number
	if json.Unmarshal(v, &n) != nil || len(n) > 64 {
		return nil
	}
	return []byte(n)
}
