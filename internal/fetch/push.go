package fetch

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// Push uploads wasm to r (a tag or a digest reference) in the CNCF Wasm
// OCI layout: config application/vnd.wasm.config.v0+json, one
// application/wasm layer, annotations on the manifest. It returns the
// manifest digest.
func (f *Fetcher) Push(ctx context.Context, r Ref, wasm []byte, annotations map[string]string) (string, error) {
	if !r.OCI {
		return "", fmt.Errorf("%s: push needs an oci:// reference", r)
	}
	layer := v1.Descriptor{MediaType: MediaWasm, Digest: hashOf(wasm), Size: int64(len(wasm))}
	cfg, _ := json.Marshal(map[string]any{"architecture": "wasm", "os": "wasip1", "layerDigests": []string{layer.Digest.String()}})
	m := v1.Manifest{SchemaVersion: 2, MediaType: mediaOCIManifest, ArtifactType: MediaWasm,
		Config:      v1.Descriptor{MediaType: MediaWasmConfig, Digest: hashOf(cfg), Size: int64(len(cfg))},
		Layers:      []v1.Descriptor{layer},
		Annotations: annotations}
	raw, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	ref := r.Tag
	if r.Digest != "" {
		ref = r.Digest
	}
	d, err := f.PushManifest(ctx, r, ref, mediaOCIManifest, raw, cfg, wasm)
	if err != nil {
		return "", fmt.Errorf("%s: %w", r, err)
	}
	if r.Digest != "" && r.Digest != d {
		return "", fmt.Errorf("%s: %w: pushed manifest is %s", r, ErrDigest, d)
	}
	return d, nil
}

// PushManifest uploads a manifest's blobs and the manifest itself under
// ref (a tag or its digest; "" for the digest) with go-containerregistry's
// remote; it returns the manifest digest. Tests and tools use it for
// layouts Push does not write.
func (f *Fetcher) PushManifest(ctx context.Context, r Ref, ref string, mediaType string, raw []byte, blobs ...[]byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	rt, err := f.transport(ctx, r, true)
	if err != nil {
		return "", err
	}
	var opts []name.Option
	if loopback(r.Host) {
		opts = append(opts, name.Insecure)
	}
	repo, err := name.NewRepository(r.Host+"/"+r.Repo, opts...)
	if err != nil {
		return "", fmt.Errorf("repository: %w", err)
	}
	ropts := []remote.Option{remote.WithContext(ctx), remote.WithTransport(rt)}
	for _, b := range blobs {
		if err := remote.WriteLayer(repo, static.NewLayer(b, "application/octet-stream"), ropts...); err != nil {
			return "", fmt.Errorf("blob upload: %w", redact(unwrapURL(err)))
		}
	}
	d := digestOf(raw)
	if ref == "" {
		ref = d
	}
	var dst name.Reference = repo.Tag(ref)
	if strings.HasPrefix(ref, "sha256:") {
		dst = repo.Digest(ref)
	}
	if err := remote.Put(dst, rawManifest{raw, types.MediaType(mediaType)}, ropts...); err != nil {
		return "", fmt.Errorf("manifest: %w", redact(unwrapURL(err)))
	}
	return d, nil
}

// rawManifest is a manifest as bytes, for remote.Put.
type rawManifest struct {
	raw []byte
	mt  types.MediaType
}

func (m rawManifest) RawManifest() ([]byte, error)        { return m.raw, nil }
func (m rawManifest) MediaType() (types.MediaType, error) { return m.mt, nil }
