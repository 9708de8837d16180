package verify

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	sgverify "github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/wasmcp/wasmcp/internal/fetch"
)

// Options is a verification policy as configured ([plugins.verify]).
// Either KeyPEM, or Issuer with Identity or IdentityRegexp and
// TrustedRootJSON.
type Options struct {
	// KeyPEM is a cosign public key (PEM, ECDSA, RSA or Ed25519).
	KeyPEM []byte
	// Identity is the exact certificate identity (SAN) of a keyless
	// signature; IdentityRegexp a regular expression it must match.
	Identity, IdentityRegexp string
	// Issuer is the OIDC issuer the certificate must name.
	Issuer string
	// TrustedRootJSON is a Sigstore trusted_root.json.
	TrustedRootJSON []byte

	// noSCT drops the embedded-SCT requirement: the tests' virtual
	// Sigstore issues certificates without SCTs (Fulcio's always carry
	// them).
	noSCT bool
}

// Policy checks signatures. Build one with [New].
type Policy struct {
	key      crypto.PublicKey
	verifier *sgverify.Verifier
	identity *sgverify.CertificateIdentity
}

// Errors callers branch on.
var (
	// ErrUnsigned means no signature was found in either place.
	ErrUnsigned = errors.New("unsigned: no cosign signature in the OCI referrers nor in the sha256-<digest>.sig tag")
	// ErrInvalid means signatures were found but none verifies.
	ErrInvalid = errors.New("no valid signature")
)

// New builds a policy.
func New(o Options) (*Policy, error) {
	if len(o.KeyPEM) > 0 {
		key, err := parseKey(o.KeyPEM)
		if err != nil {
			return nil, err
		}
		sv, err := signature.LoadVerifier(key, crypto.SHA256)
		if err != nil {
			return nil, fmt.Errorf("verify key: %w", err)
		}
		tm := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
			return root.NewExpiringKey(sv, time.Time{}, time.Time{}), nil
		})
		v, err := sgverify.NewVerifier(tm, sgverify.WithNoObserverTimestamps())
		if err != nil {
			return nil, fmt.Errorf("verify key: %w", err)
		}
		return &Policy{key: key, verifier: v}, nil
	}
	tr, err := root.NewTrustedRootFromJSON(o.TrustedRootJSON)
	if err != nil {
		return nil, fmt.Errorf("verify trusted_root: %w", err)
	}
	vopts := []sgverify.VerifierOption{sgverify.WithTransparencyLog(1), sgverify.WithObserverTimestamps(1)}
	if !o.noSCT {
		vopts = append(vopts, sgverify.WithSignedCertificateTimestamps(1))
	}
	v, err := sgverify.NewVerifier(tr, vopts...)
	if err != nil {
		return nil, fmt.Errorf("verify trusted_root: %w", err)
	}
	id, err := sgverify.NewShortCertificateIdentity(o.Issuer, "", o.Identity, o.IdentityRegexp)
	if err != nil {
		return nil, fmt.Errorf("verify identity: %w", err)
	}
	return &Policy{verifier: v, identity: &id}, nil
}

// parseKey reads a PEM public key.
func parseKey(b []byte) (crypto.PublicKey, error) {
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, errors.New("verify key: not PEM")
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return nil, fmt.Errorf("verify key: %w", err)
	}
	switch k.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		return k, nil
	}
	return nil, fmt.Errorf("verify key: unsupported key type %T", k)
}

// Verify returns nil when one of sigs is a valid signature of digest
// ("sha256:HEX", the manifest digest) under p; else an error wrapping
// [ErrUnsigned] or [ErrInvalid] that says why each one failed.
func (p *Policy) Verify(digest string, sigs []fetch.Signature) error {
	raw, err := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	if err != nil || !strings.HasPrefix(digest, "sha256:") || len(raw) != sha256.Size {
		return fmt.Errorf("verify: digest %q is not sha256", digest)
	}
	if len(sigs) == 0 {
		return ErrUnsigned
	}
	var why []string
	for i, s := range sigs {
		var err error
		if len(s.Bundle) > 0 {
			err = p.verifyBundle(raw, s.Bundle)
		} else {
			err = p.verifySimple(digest, s)
		}
		if err == nil {
			return nil
		}
		why = append(why, fmt.Sprintf("%s signature %d: %v", s.Source, i+1, err))
	}
	return fmt.Errorf("%w for %s: %s", ErrInvalid, digest, strings.Join(why, "; "))
}

func (p *Policy) verifyBundle(digest []byte, raw []byte) error {
	var b bundle.Bundle
	if err := b.UnmarshalJSON(raw); err != nil {
		return fmt.Errorf("bundle: %w", err)
	}
	opts := []sgverify.PolicyOption{sgverify.WithKey()}
	if p.identity != nil {
		opts = []sgverify.PolicyOption{sgverify.WithCertificateIdentity(*p.identity)}
	}
	if _, err := p.verifier.Verify(&b, sgverify.NewPolicy(sgverify.WithArtifactDigest("sha256", digest), opts...)); err != nil {
		return err
	}
	return nil
}

// simplePayload is cosign's simple-signing payload.
type simplePayload struct {
	Critical struct {
		Image struct {
			Digest string `json:"docker-manifest-digest"`
		} `json:"image"`
		Type string `json:"type"`
	} `json:"critical"`
}

// verifySimple checks a sha256-<digest>.sig signature: the payload names
// digest and the signature over it verifies with the key.
func (p *Policy) verifySimple(digest string, s fetch.Signature) error {
	var pl simplePayload
	if err := json.Unmarshal(s.Payload, &pl); err != nil {
		return fmt.Errorf("payload: %w", err)
	}
	if pl.Critical.Type != "cosign container image signature" {
		return fmt.Errorf("payload type %q is not a cosign image signature", pl.Critical.Type)
	}
	if pl.Critical.Image.Digest != digest {
		return fmt.Errorf("signature is for %s, not this manifest (the tag moved after signing?)", pl.Critical.Image.Digest)
	}
	if p.key == nil {
		return p.verifySimpleKeyless(s)
	}
	sig, err := base64.StdEncoding.DecodeString(s.Signature)
	if err != nil {
		return fmt.Errorf("signature: %w", err)
	}
	sum := sha256.Sum256(s.Payload)
	ok := false
	switch k := p.key.(type) {
	case *ecdsa.PublicKey:
		ok = ecdsa.VerifyASN1(k, sum[:], sig)
	case *rsa.PublicKey:
		ok = rsa.VerifyPKCS1v15(k, crypto.SHA256, sum[:], sig) == nil || rsa.VerifyPSS(k, crypto.SHA256, sum[:], sig, nil) == nil
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, s.Payload, sig)
	}
	if !ok {
		return errors.New("signature does not verify with the key")
	}
	return nil
}

// rekorBundle is cosign v2's dev.sigstore.cosign/bundle annotation: the
// transparency-log entry of a signature, with its signed entry timestamp.
type rekorBundle struct {
	SignedEntryTimestamp []byte `json:"SignedEntryTimestamp"`
	Payload              struct {
		Body           string `json:"body"`
		IntegratedTime int64  `json:"integratedTime"`
		LogIndex       int64  `json:"logIndex"`
		LogID          string `json:"logID"`
	} `json:"Payload"`
}

// verifySimpleKeyless checks a keyless sha256-<digest>.sig signature (the
// payload already names the digest): its certificate, signature and
// transparency-log entry are put in the shape of a v0.1 Sigstore bundle,
// which sigstore-go verifies against the trusted root and the identity.
func (p *Policy) verifySimpleKeyless(s fetch.Signature) error {
	if s.Certificate == "" || s.RekorBundle == "" {
		return errors.New("keyless signature without a certificate or transparency-log bundle")
	}
	var certs []map[string]string
	rest := []byte(s.Certificate + "\n" + s.Chain)
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			certs = append(certs, map[string]string{"rawBytes": base64.StdEncoding.EncodeToString(blk.Bytes)})
		}
	}
	if len(certs) == 0 {
		return errors.New("keyless signature: certificate is not PEM")
	}
	var rb rekorBundle
	if err := json.Unmarshal([]byte(s.RekorBundle), &rb); err != nil {
		return fmt.Errorf("transparency-log bundle: %w", err)
	}
	body, err := base64.StdEncoding.DecodeString(rb.Payload.Body)
	if err != nil {
		return fmt.Errorf("transparency-log bundle body: %w", err)
	}
	var kind struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
	}
	if err := json.Unmarshal(body, &kind); err != nil {
		return fmt.Errorf("transparency-log entry: %w", err)
	}
	logID, err := hex.DecodeString(rb.Payload.LogID)
	if err != nil {
		return fmt.Errorf("transparency-log bundle logID: %w", err)
	}
	sum := sha256.Sum256(s.Payload)
	doc, err := json.Marshal(map[string]any{
		"mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.1",
		"verificationMaterial": map[string]any{
			"x509CertificateChain": map[string]any{"certificates": certs},
			"tlogEntries": []any{map[string]any{
				"logIndex":          fmt.Sprint(rb.Payload.LogIndex),
				"logId":             map[string]string{"keyId": base64.StdEncoding.EncodeToString(logID)},
				"kindVersion":       map[string]string{"kind": kind.Kind, "version": kind.APIVersion},
				"integratedTime":    fmt.Sprint(rb.Payload.IntegratedTime),
				"inclusionPromise":  map[string]string{"signedEntryTimestamp": base64.StdEncoding.EncodeToString(rb.SignedEntryTimestamp)},
				"canonicalizedBody": base64.StdEncoding.EncodeToString(body),
			}},
		},
		"messageSignature": map[string]any{
			"messageDigest": map[string]string{"algorithm": "SHA2_256", "digest": base64.StdEncoding.EncodeToString(sum[:])},
			"signature":     s.Signature,
		},
	})
	if err != nil {
		return err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(doc); err != nil {
		return fmt.Errorf("keyless signature: %w", err)
	}
	_, err = p.verifier.Verify(&b, sgverify.NewPolicy(sgverify.WithArtifactDigest("sha256", sum[:]), sgverify.WithCertificateIdentity(*p.identity)))
	return err
}
