package verify

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/wasmcp/wasmcp/internal/fetch"
)

// keylessBundle signs artifact with a certificate the virtual Sigstore
// issues for identity and issuer, and returns the bundle as JSON (v0.1:
// the virtual log gives an inclusion promise, not a proof).
func keylessBundle(t *testing.T, vs *ca.VirtualSigstore, identity, issuer string, artifact []byte) []byte {
	t.Helper()
	e, err := vs.Sign(identity, issuer, artifact)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	cert := vc.Certificate()
	sc, _ := e.SignatureContent()
	ms := sc.MessageSignatureContent()
	entries, _ := e.TlogEntries()
	tss, _ := e.Timestamps()
	b := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle+json;version=0.1",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content: &protobundle.VerificationMaterial_X509CertificateChain{X509CertificateChain: &protocommon.X509CertificateChain{
				Certificates: []*protocommon.X509Certificate{{RawBytes: cert.Raw}}}},
			TlogEntries:               nil,
			TimestampVerificationData: &protobundle.TimestampVerificationData{},
		},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: ms.Digest()},
			Signature:     ms.Signature(),
		}},
	}
	logID, err := vs.RekorLogID()
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		// The virtual log's entry keeps its signed entry timestamp to
		// itself: sign the same payload again for the bundle.
		tle := proto.Clone(en.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		set, err := vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: logID})
		if err != nil {
			t.Fatal(err)
		}
		tle.KindVersion = &protorekor.KindVersion{Kind: "hashedrekord", Version: "0.0.1"}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		b.VerificationMaterial.TlogEntries = append(b.VerificationMaterial.TlogEntries, tle)
	}
	for _, ts := range tss {
		b.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps = append(b.VerificationMaterial.TimestampVerificationData.Rfc3161Timestamps, &protocommon.RFC3161SignedTimestamp{SignedTimestamp: ts})
	}
	raw, err := protojson.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// TestKeyless verifies keyless bundles offline against a trusted root and
// certificates the test mints: the right identity (exact and by regular
// expression) and issuer pass; another identity, another issuer, another
// root or another digest fail.
func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	rootJSON := trustedRootJSON(t, vs)
	other, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	otherJSON := trustedRootJSON(t, other)

	const (
		id     = "https://github.com/acme/time/.github/workflows/release.yml@refs/tags/v1"
		issuer = "https://token.actions.githubusercontent.com"
	)
	manifest := []byte(`{"schemaVersion":2,"layers":[]}`)
	sum := sha256.Sum256(manifest)
	digest := "sha256:" + strings.TrimPrefix(fmtHex(sum[:]), "")
	good := []fetch.Signature{{Source: "referrer", Bundle: keylessBundle(t, vs, id, issuer, manifest)}}
	for _, c := range []struct {
		name  string
		opts  Options
		dig   string
		sigs  []fetch.Signature
		inErr string
	}{
		{"exact identity", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON}, digest, good, ""},
		{"identity regexp", Options{IdentityRegexp: "^https://github.com/acme/", Issuer: issuer, TrustedRootJSON: rootJSON}, digest, good, ""},
		{"other identity", Options{Identity: "https://github.com/evil/x", Issuer: issuer, TrustedRootJSON: rootJSON}, digest, good, "SAN"},
		{"other regexp", Options{IdentityRegexp: "^https://github.com/evil/", Issuer: issuer, TrustedRootJSON: rootJSON}, digest, good, "SAN"},
		{"other issuer", Options{Identity: id, Issuer: "https://accounts.google.com", TrustedRootJSON: rootJSON}, digest, good, "ssuer"},
		{"other root", Options{Identity: id, Issuer: issuer, TrustedRootJSON: otherJSON}, digest, good, "transparency log"},
		{"no SCT (required by default)", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON, noSCT: false}, digest, good, "signed certificate timestamp"},
		{"other digest", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON}, "sha256:" + strings.Repeat("0", 64), good, "digest"},
		{"v2 tag signature", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON}, digest, []fetch.Signature{keylessTag(t, vs, id, issuer, digest)}, ""},
		{"v2 tag signature, other identity", Options{Identity: "https://github.com/evil/x", Issuer: issuer, TrustedRootJSON: rootJSON}, digest, []fetch.Signature{keylessTag(t, vs, id, issuer, digest)}, "SAN"},
		{"v2 tag signature, other root", Options{Identity: id, Issuer: issuer, TrustedRootJSON: otherJSON}, digest, []fetch.Signature{keylessTag(t, vs, id, issuer, digest)}, "transparency log"},
		{"v2 tag signature of another digest", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON}, digest, []fetch.Signature{keylessTag(t, vs, id, issuer, "sha256:"+strings.Repeat("1", 64))}, "not this manifest"},
		{"v2 tag signature without a log bundle", Options{Identity: id, Issuer: issuer, TrustedRootJSON: rootJSON}, digest, func() []fetch.Signature {
			s := keylessTag(t, vs, id, issuer, digest)
			s.RekorBundle = ""
			return []fetch.Signature{s}
		}(), "without a certificate or transparency-log bundle"},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.noSCT = !strings.HasPrefix(c.name, "no SCT")
			p, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			err = p.Verify(c.dig, c.sigs)
			if c.inErr == "" {
				if err != nil {
					t.Fatalf("Verify = %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.inErr) {
				t.Fatalf("Verify = %v, want ErrInvalid containing %q", err, c.inErr)
			}
		})
	}
}

func fmtHex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, x := range b {
		out = append(out, digits[x>>4], digits[x&15])
	}
	return string(out)
}

// trustedRootJSON writes the virtual Sigstore's keys as a trusted_root.json.
// Its logs carry their IDs as the hex text of the map key; the file wants
// the raw key ID.
func trustedRootJSON(t *testing.T, vs *ca.VirtualSigstore) []byte {
	t.Helper()
	fix := func(logs map[string]*root.TransparencyLog) map[string]*root.TransparencyLog {
		out := map[string]*root.TransparencyLog{}
		for k, v := range logs {
			c := *v
			raw, err := hex.DecodeString(k)
			if err != nil {
				t.Fatal(err)
			}
			c.ID = raw
			out[k] = &c
		}
		return out
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, vs.FulcioCertificateAuthorities(), fix(vs.CTLogs()), vs.TimestampingAuthorities(), fix(vs.RekorLogs()))
	if err != nil {
		t.Fatal(err)
	}
	b, err := tr.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// keylessTag signs digest as cosign v2 does keylessly: a simple-signing
// payload, the signature, the certificate and the log's bundle as the
// annotations of the sha256-HEX.sig tag's layer.
func keylessTag(t *testing.T, vs *ca.VirtualSigstore, identity, issuer, digest string) fetch.Signature {
	t.Helper()
	payload := []byte(`{"critical":{"identity":{"docker-reference":"h/r"},"image":{"docker-manifest-digest":"` + digest + `"},"type":"cosign container image signature"},"optional":null}`)
	e, err := vs.Sign(identity, issuer, payload)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	sc, _ := e.SignatureContent()
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	logID, _ := vs.RekorLogID()
	body := base64.StdEncoding.EncodeToString(tle.CanonicalizedBody)
	set, err := vs.RekorSignPayload(tlog.RekorPayload{Body: body, IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: logID})
	if err != nil {
		t.Fatal(err)
	}
	rb, _ := json.Marshal(map[string]any{"SignedEntryTimestamp": set, "Payload": map[string]any{"body": body, "integratedTime": tle.IntegratedTime, "logIndex": tle.LogIndex, "logID": logID}})
	return fetch.Signature{Source: "tag", Payload: payload,
		Signature:   base64.StdEncoding.EncodeToString(sc.MessageSignatureContent().Signature()),
		Certificate: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: vc.Certificate().Raw})),
		RekorBundle: string(rb)}
}
