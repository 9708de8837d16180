package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Signature is one piece of signature material found beside an image,
// for package verify to check. Exactly one of Bundle and Payload is set.
type Signature struct {
	// Source says where it was found: "referrer" (OCI 1.1 referrers, a
	// Sigstore bundle, as cosign v3 stores them) or "tag" (the
	// sha256-HEX.sig tag, cosign v2's simple signing).
	Source string `json:"source"`
	// Bundle is a Sigstore bundle (JSON).
	Bundle []byte `json:"bundle,omitempty"`
	// Payload is the simple-signing payload the signature is over, and
	// Signature its base64 signature; Certificate and Chain are PEM
	// (keyless), RekorBundle cosign's transparency-log bundle (JSON).
	Payload     []byte `json:"payload,omitempty"`
	Signature   string `json:"signature,omitempty"`
	Certificate string `json:"certificate,omitempty"`
	Chain       string `json:"chain,omitempty"`
	RekorBundle string `json:"rekor_bundle,omitempty"`
}

// cosign's annotations on a simple-signing layer.
const (
	annSignature   = "dev.cosignproject.cosign/signature"
	annCertificate = "dev.sigstore.cosign/certificate"
	annChain       = "dev.sigstore.cosign/chain"
	annBundle      = "dev.sigstore.cosign/bundle"
	maxSignatures  = 16
)

// sigPath is where the signatures of digest in r's repository are
// cached (the same image may be signed differently in two repositories).
func (f *Fetcher) sigPath(r Ref, digest string) string {
	repo := strings.TrimPrefix(digestOf([]byte(r.Host+"/"+r.Repo)), "sha256:")[:16]
	return filepath.Join(f.opts.Dir, "signatures", repo+"-"+strings.TrimPrefix(digest, "sha256:")+".json")
}

// Signatures returns the signature material stored for digest in r's
// repository: its OCI 1.1 referrers holding a Sigstore bundle and the
// sha256-HEX.sig tag. What it finds is cached; with cached set, the
// cached material is returned without network when there is some (an
// image found unsigned is cached as such). An
// empty result with a nil error means the image is unsigned.
func (f *Fetcher) Signatures(ctx context.Context, r Ref, digest string, cached bool) ([]Signature, error) {
	if !r.OCI {
		return nil, fmt.Errorf("%s: signatures are only looked up in OCI registries", r)
	}
	if cached {
		// An image cached as unsigned is looked up again: it may have
		// been signed since.
		if sigs, ok := f.cachedSignatures(r, digest); ok && len(sigs) > 0 {
			return sigs, nil
		}
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	ctx, end := f.begin(ctx)
	sigs, err := f.lookupSignatures(ctx, r, digest)
	end(err)
	if err != nil {
		if old, ok := f.cachedSignatures(r, digest); ok {
			return old, nil
		}
		return nil, fmt.Errorf("%s: signatures: %w", r, err)
	}
	if b, err := json.Marshal(sigs); err == nil {
		f.writeCache(f.sigPath(r, digest), b)
	}
	return sigs, nil
}

// writeCache replaces the cache file at path with b, through a new
// temporary file (never one that is there: it could be a link), best
// effort.
func (f *Fetcher) writeCache(path string, b []byte) {
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil && cerr == nil {
		_ = os.Rename(tmp.Name(), path)
	}
}

// cachedSignatures reads the cached signature material of digest: at
// most what lookupSignatures keeps (MaxManifest bytes, base64 in JSON),
// from a regular file. package verify checks it as it checks what the
// registry sends.
func (f *Fetcher) cachedSignatures(r Ref, digest string) ([]Signature, bool) {
	limit := 2 * f.opts.MaxManifest
	fh, err := openCached(f.sigPath(r, digest), limit)
	if err != nil {
		return nil, false
	}
	defer fh.Close()
	b, err := readLimited(fh, limit, "cached signatures")
	if err != nil {
		return nil, false
	}
	var sigs []Signature
	if json.Unmarshal(b, &sigs) != nil {
		return nil, false
	}
	return sigs, true
}

func (f *Fetcher) lookupSignatures(ctx context.Context, r Ref, digest string) ([]Signature, error) {
	var sigs []Signature
	// All the material kept for an image is bounded by MaxManifest, as
	// one document would be: it is cached and read back whole.
	total := int64(0)
	keep := func(s Signature) error {
		total += int64(len(s.Bundle) + len(s.Payload) + len(s.Signature) + len(s.Certificate) + len(s.Chain) + len(s.RekorBundle))
		if total > f.opts.MaxManifest {
			return fmt.Errorf("%w: the signature material of %s is over %d bytes", ErrTooLarge, digest, f.opts.MaxManifest)
		}
		sigs = append(sigs, s)
		return nil
	}
	refs, err := f.referrers(ctx, r, digest)
	if err != nil {
		return nil, err
	}
	for _, d := range refs {
		if len(sigs) >= maxSignatures {
			break
		}
		if d.ArtifactType != MediaBundle && d.MediaType != mediaOCIManifest {
			continue
		}
		m, _, err := f.manifest(ctx, r, d.Digest.String(), d.Digest.String())
		if err != nil {
			return nil, fmt.Errorf("referrer %s: %w", d.Digest, err)
		}
		// A referrer is only one if its manifest says so: listings (and
		// the tag-schema fallback index) are not trusted for it.
		if m.Subject == nil || m.Subject.Digest.String() != digest {
			continue
		}
		if m.ArtifactType != MediaBundle && m.Config.MediaType != MediaBundle {
			continue
		}
		for _, l := range m.Layers {
			if l.MediaType != MediaBundle {
				continue
			}
			b, err := f.smallBlob(ctx, r, l)
			if err != nil {
				return nil, fmt.Errorf("referrer %s: %w", d.Digest, err)
			}
			if err := keep(Signature{Source: "referrer", Bundle: b}); err != nil {
				return nil, err
			}
		}
	}
	m, _, err := f.manifest(ctx, r, strings.Replace(digest, ":", "-", 1)+".sig", "")
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("signature tag: %w", err)
	default:
		for _, l := range m.Layers {
			if l.MediaType != MediaSimpleSigning || len(sigs) >= maxSignatures {
				continue
			}
			b, err := f.smallBlob(ctx, r, l)
			if err != nil {
				return nil, fmt.Errorf("signature tag: %w", err)
			}
			if err := keep(Signature{Source: "tag", Payload: b,
				Signature: l.Annotations[annSignature], Certificate: l.Annotations[annCertificate],
				Chain: l.Annotations[annChain], RekorBundle: l.Annotations[annBundle]}); err != nil {
				return nil, err
			}
		}
	}
	return sigs, nil
}

// referrers lists the manifests whose subject is digest: the referrers
// API, else the referrers tag schema (sha256-HEX).
func (f *Fetcher) referrers(ctx context.Context, r Ref, digest string) ([]v1.Descriptor, error) {
	rt, err := f.transport(ctx, r, false)
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, rt, f.registryURL(r, "referrers", digest), mediaOCIIndex)
	var raw []byte
	switch {
	case errors.Is(err, ErrNotFound):
		m, _, err := f.manifest(ctx, r, strings.Replace(digest, ":", "-", 1), "")
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("referrers tag: %w", err)
		}
		return m.Manifests, nil
	case err != nil:
		return nil, fmt.Errorf("referrers: %w", err)
	}
	raw, err = readLimited(resp.Body, f.opts.MaxManifest, "referrers")
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	var idx manifest
	if err := json.Unmarshal(raw, &idx); err != nil {
		return nil, fmt.Errorf("referrers: %w", err)
	}
	return idx.Manifests, nil
}

// smallBlob returns a blob of at most MaxManifest bytes, cached.
func (f *Fetcher) smallBlob(ctx context.Context, r Ref, l v1.Descriptor) ([]byte, error) {
	if !digestPattern.MatchString(l.Digest.String()) {
		return nil, fmt.Errorf("blob digest %q is not sha256", l.Digest.String())
	}
	if b, ok := f.cached(ctx, l.Digest.String(), f.opts.MaxManifest); ok {
		return b, nil
	}
	rt, err := f.transport(ctx, r, false)
	if err != nil {
		return nil, err
	}
	resp, err := f.get(ctx, rt, f.registryURL(r, "blobs", l.Digest.String()))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", l.Digest.String(), err)
	}
	b, err := readLimited(resp.Body, f.opts.MaxManifest, "blob "+l.Digest.String())
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if got := digestOf(b); got != l.Digest.String() {
		return nil, fmt.Errorf("%w: blob %s has digest %s", ErrDigest, l.Digest.String(), got)
	}
	if _, err := f.store(ctx, b); err != nil {
		return nil, err
	}
	return b, nil
}
