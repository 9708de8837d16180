package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/fetch"
)

func newKey(t *testing.T, dir, name string) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err := os.WriteFile(filepath.Join(dir, name), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return k
}

func sha(b []byte) string { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]) }

// pushRaw pushes a manifest (and its blobs) under ref in repo.
func (e *urlEnv) pushRaw(t *testing.T, repo, ref string, m map[string]any, blobs ...[]byte) string {
	t.Helper()
	raw, _ := json.Marshal(m)
	r, _ := fetch.ParseRef("oci://" + e.host + "/" + repo + ":x")
	d, err := e.fetcher.PushManifest(context.Background(), r, ref, "application/vnd.oci.image.manifest.v1+json", raw, blobs...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func blobDesc(mt string, b []byte, ann map[string]string) map[string]any {
	d := map[string]any{"mediaType": mt, "digest": sha(b), "size": len(b)}
	if ann != nil {
		d["annotations"] = ann
	}
	return d
}

// signTag signs digest cosign v2 style: a simple-signing payload under
// the sha256-HEX.sig tag; payloadDigest is what the payload names.
func (e *urlEnv) signTag(t *testing.T, repo, digest, payloadDigest string, k *ecdsa.PrivateKey) {
	t.Helper()
	payload := []byte(fmt.Sprintf(`{"critical":{"identity":{"docker-reference":"%s/%s"},"image":{"docker-manifest-digest":%q},"type":"cosign container image signature"},"optional":null}`, e.host, repo, payloadDigest))
	sum := sha256.Sum256(payload)
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	cfg := []byte("{}")
	e.pushRaw(t, repo, strings.Replace(digest, ":", "-", 1)+".sig", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": blobDesc("application/vnd.oci.image.config.v1+json", cfg, nil),
		"layers": []any{blobDesc(fetch.MediaSimpleSigning, payload, map[string]string{"dev.cosignproject.cosign/signature": base64.StdEncoding.EncodeToString(sig)})},
	}, cfg, payload)
}

// pushBundle pushes a Sigstore bundle about digest as an OCI 1.1 referrer
// of it in repo.
func (e *urlEnv) pushBundle(t *testing.T, repo, digest string, bundle []byte) {
	t.Helper()
	empty := []byte("{}")
	e.pushRaw(t, repo, "", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"artifactType": fetch.MediaBundle,
		"config":       blobDesc("application/vnd.oci.empty.v1+json", empty, nil),
		"layers":       []any{blobDesc(fetch.MediaBundle, bundle, nil)},
		"subject":      map[string]any{"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": digest, "size": 1},
	}, empty, bundle)
}

// signReferrer signs digest cosign v3 style: a Sigstore bundle (message
// signature over the manifest digest) in an OCI 1.1 referrer.
func (e *urlEnv) signReferrer(t *testing.T, repo, digest string, k *ecdsa.PrivateKey) {
	t.Helper()
	raw, _ := hex.DecodeString(strings.TrimPrefix(digest, "sha256:"))
	sig, err := ecdsa.SignASN1(rand.Reader, k, raw)
	if err != nil {
		t.Fatal(err)
	}
	bundle := []byte(fmt.Sprintf(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"test"}},"messageSignature":{"messageDigest":{"algorithm":"SHA2_256","digest":%q},"signature":%q}}`,
		base64.StdEncoding.EncodeToString(raw), base64.StdEncoding.EncodeToString(sig)))
	e.pushBundle(t, repo, digest, bundle)
}

// signReferrerDSSE signs digest as cosign v3 does for images: a
// Sigstore bundle holding a DSSE envelope of an in-toto statement whose
// subject is the manifest digest, in an OCI 1.1 referrer.
func (e *urlEnv) signReferrerDSSE(t *testing.T, repo, digest string, k *ecdsa.PrivateKey) {
	t.Helper()
	stmt := []byte(fmt.Sprintf(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"%s/%s","digest":{"sha256":%q}}],"predicateType":"https://sigstore.dev/cosign/sign/v1","predicate":{}}`,
		e.host, repo, strings.TrimPrefix(digest, "sha256:")))
	const typ = "application/vnd.in-toto+json"
	pae := fmt.Sprintf("DSSEv1 %d %s %d %s", len(typ), typ, len(stmt), stmt)
	sum := sha256.Sum256([]byte(pae))
	sig, err := ecdsa.SignASN1(rand.Reader, k, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	bundle := []byte(fmt.Sprintf(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","verificationMaterial":{"publicKey":{"hint":"test"}},"dsseEnvelope":{"payload":%q,"payloadType":%q,"signatures":[{"sig":%q}]}}`,
		base64.StdEncoding.EncodeToString(stmt), typ, base64.StdEncoding.EncodeToString(sig)))
	e.pushBundle(t, repo, digest, bundle)
}

// TestURLVerify: cosign signatures in both places, checked on every load;
// wrong key, unsigned, a tag moved after signing and a signature copied
// to another digest are refused with a clear message while the others
// serve; a restart from the cache with the registry down verifies again.
func TestURLVerify(t *testing.T) {
	e := newURLEnv(t)
	dir := t.TempDir()
	key := newKey(t, dir, "cosign.pub")
	other := newKey(t, dir, "other.pub")

	e.signTag(t, "good", e.digest, e.digest, key) // good:1, cosign v2
	d2 := e.push(t, "v3:1", e.wasm)
	e.signReferrer(t, "v3", d2, key) // cosign v3
	e.push(t, "unsigned:1", e.wasm)
	d6 := e.push(t, "dsse:1", withCustomSection(e.wasm, "dsse"))
	e.signReferrerDSSE(t, "dsse", d6, key)
	e.signReferrerDSSE(t, "dssewrong", e.push(t, "dssewrong:1", withCustomSection(e.wasm, "dssewrong")), other)
	d4 := e.push(t, "moved:1", e.wasm)
	e.signTag(t, "moved", d4, d4, key)
	e.push(t, "moved:1", append(append([]byte(nil), e.wasm...), 0, 0)) // the tag moves; not signed
	d5 := e.push(t, "copied:1", append(append([]byte(nil), e.wasm...), 1))
	e.signTag(t, "copied", d5, e.digest, key) // a valid signature of another image

	cfg := urlHeader + `
[[plugins]]
name = "v2"
url = "oci://{{host}}/good:1"
prefix = "a_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "v3"
url = "oci://{{host}}/v3@` + d2 + `"
prefix = "b_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "dsse"
url = "oci://{{host}}/dsse:1"
prefix = "g_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "dssewrong"
url = "oci://{{host}}/dssewrong:1"
prefix = "h_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "wrongkey"
url = "oci://{{host}}/good:1"
prefix = "c_"
[plugins.verify]
key = "other.pub"
[[plugins]]
name = "unsigned"
url = "oci://{{host}}/unsigned:1"
prefix = "d_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "moved"
url = "oci://{{host}}/moved:1"
prefix = "e_"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "copied"
url = "oci://{{host}}/copied:1"
prefix = "f_"
[plugins.verify]
key = "cosign.pub"
`
	check := func(srv *Server, logs *logBuffer) {
		t.Helper()
		for _, tool := range []string{"a_echo", "b_echo", "g_echo"} {
			if err := echo(t, srv, tool); err != nil {
				t.Errorf("%s: %v", tool, err)
			}
		}
		for _, tool := range []string{"c_echo", "d_echo", "e_echo", "f_echo", "h_echo"} {
			if echo(t, srv, tool) == nil {
				t.Errorf("%s is served", tool)
			}
		}
		out := logs.String()
		for _, want := range []string{
			`plugin \"wrongkey\"`, "signature does not verify with the key",
			`plugin \"unsigned\"`, "unsigned: no cosign signature",
			`plugin \"moved\"`,
			`plugin \"copied\"`, "not this manifest",
			`plugin \"dssewrong\"`,
		} {
			if !strings.Contains(out, want) {
				t.Errorf("log does not say %q:\n%s", want, out)
			}
		}
	}
	srv, logs := e.serve(t, dir, cfg)
	check(srv, logs)
	srv.Close(context.Background())

	// From the cache, with the registry down: the digest reference loads
	// and is verified again from the cached signatures.
	e.down.Store(true)
	srv, logs = e.serve(t, dir, urlHeader+`
[[plugins]]
name = "v3"
url = "oci://{{host}}/v3@`+d2+`"
[plugins.verify]
key = "cosign.pub"
[[plugins]]
name = "v3other"
url = "oci://{{host}}/v3@`+d2+`"
prefix = "o_"
[plugins.verify]
key = "other.pub"
`)
	if err := echo(t, srv, "echo"); err != nil {
		t.Errorf("cached, verified plugin: %v\n%s", err, logs)
	}
	if echo(t, srv, "o_echo") == nil {
		t.Errorf("cache hit served without a valid signature for its key:\n%s", logs)
	}
}
