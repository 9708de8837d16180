package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Push uploads wasm to r (a tag or a digest reference) in the CNCF Wasm
// OCI layout: config application/vnd.wasm.config.v0+json, one
// application/wasm layer, annotations on the manifest. It returns the
// manifest digest.
func (f *Fetcher) Push(ctx context.Context, r Ref, wasm []byte, annotations map[string]string) (string, error) {
	if !r.OCI {
		return "", fmt.Errorf("%s: push needs an oci:// reference", r)
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
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
	rt, err := f.transport(ctx, r, true)
	if err != nil {
		return "", fmt.Errorf("%s: %w", r, err)
	}
	for _, b := range [][]byte{cfg, wasm} {
		if err := f.uploadBlob(ctx, rt, r, b); err != nil {
			return "", fmt.Errorf("%s: %w", r, err)
		}
	}
	ref := r.Tag
	if r.Digest != "" {
		ref = r.Digest
	}
	if err := f.put(ctx, rt, f.registryURL(r, "manifests", ref), mediaOCIManifest, raw); err != nil {
		return "", fmt.Errorf("%s: manifest: %w", r, err)
	}
	d := digestOf(raw)
	if r.Digest != "" && r.Digest != d {
		return "", fmt.Errorf("%s: %w: pushed manifest is %s", r, ErrDigest, d)
	}
	return d, nil
}

// PushManifest uploads a manifest's blobs and the manifest itself under
// ref (a tag or its digest); it returns the manifest digest. Tests and
// tools use it for layouts Push does not write.
func (f *Fetcher) PushManifest(ctx context.Context, r Ref, ref string, mediaType string, raw []byte, blobs ...[]byte) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	rt, err := f.transport(ctx, r, true)
	if err != nil {
		return "", err
	}
	for _, b := range blobs {
		if err := f.uploadBlob(ctx, rt, r, b); err != nil {
			return "", err
		}
	}
	if ref == "" {
		ref = digestOf(raw)
	}
	if err := f.put(ctx, rt, f.registryURL(r, "manifests", ref), mediaType, raw); err != nil {
		return "", err
	}
	return digestOf(raw), nil
}

// uploadBlob uploads b with a monolithic POST+PUT unless it is there.
func (f *Fetcher) uploadBlob(ctx context.Context, rt http.RoundTripper, r Ref, b []byte) error {
	d := digestOf(b)
	head, err := http.NewRequestWithContext(ctx, http.MethodHead, f.registryURL(r, "blobs", d), nil)
	if err != nil {
		return err
	}
	if resp, err := f.client(rt).Do(head); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme(r.Host)+"://"+r.Host+"/v2/"+r.Repo+"/blobs/uploads/", nil)
	if err != nil {
		return err
	}
	resp, err := f.client(rt).Do(req)
	if err != nil {
		return fmt.Errorf("blob upload: %w", unwrapURL(err))
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("blob upload: registry answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	loc, err := resp.Request.URL.Parse(resp.Header.Get("Location"))
	if err != nil || resp.Header.Get("Location") == "" {
		return fmt.Errorf("blob upload: bad Location")
	}
	q := loc.Query()
	q.Set("digest", d)
	loc.RawQuery = q.Encode()
	return f.put(ctx, rt, loc.String(), "application/octet-stream", b)
}

func (f *Fetcher) put(ctx context.Context, rt http.RoundTripper, u, contentType string, b []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := f.client(rt).Do(req)
	if err != nil {
		return unwrapURL(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusAccepted && resp.StatusCode != http.StatusOK {
		p, _ := url.Parse(u)
		return fmt.Errorf("PUT %s: registry answered %d %s", strings.SplitN(p.Path, "?", 2)[0], resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return nil
}
