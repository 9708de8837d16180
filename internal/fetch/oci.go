package fetch

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Artifact is a plugin in the cache.
type Artifact struct {
	// Ref is what was fetched.
	Ref Ref
	// Digest is what signatures and locks name: the manifest digest of
	// an OCI reference (the index's when the tag names an index), or
	// "sha256:HEX" of the file of an HTTPS URL.
	Digest string
	// SHA256 is the hex SHA-256 of the wasm file.
	SHA256 string
	// Path is the cached wasm file.
	Path string
	// Annotations are the manifest's annotations (OCI only).
	Annotations map[string]string
	// Cached is true when nothing was downloaded.
	Cached bool
}

// manifest is an OCI image manifest or index (or their Docker v2
// equivalents) as read: go-containerregistry's image manifest, with the
// index's manifests beside it, so that one parse tells the two apart.
type manifest struct {
	v1.Manifest
	Manifests []v1.Descriptor `json:"manifests,omitempty"`
}

var manifestAccept = []string{mediaOCIManifest, mediaOCIIndex, mediaDockerV2, mediaDockerList}

func (f *Fetcher) registryURL(r Ref, kind, ref string) string {
	return scheme(r.Host) + "://" + r.Host + "/v2/" + r.Repo + "/" + kind + "/" + ref
}

// Resolve returns the manifest digest a reference names: its digest, or
// what its tag points to now (one request; the manifest is cached).
func (f *Fetcher) Resolve(ctx context.Context, r Ref) (string, error) {
	if !r.OCI {
		return "", fmt.Errorf("%s: only oci:// references have tags to resolve", r)
	}
	if r.Digest != "" {
		return r.Digest, nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	ctx, end := f.begin(ctx)
	_, d, err := f.manifest(ctx, r, r.Tag, "")
	end(err)
	if err != nil {
		return "", fmt.Errorf("%s: %w", r, err)
	}
	return d, nil
}

// manifest returns the manifest of ref (a tag, or a digest when want is
// set) from the cache or the registry, checking its digest.
func (f *Fetcher) manifest(ctx context.Context, r Ref, ref, want string) (*manifest, string, error) {
	var raw []byte
	if want != "" {
		raw, _ = f.cached(ctx, want, f.opts.MaxManifest)
	}
	if raw == nil {
		rt, err := f.transport(ctx, r, false)
		if err != nil {
			return nil, "", err
		}
		resp, err := f.get(ctx, rt, f.registryURL(r, "manifests", ref), manifestAccept...)
		if err != nil {
			return nil, "", fmt.Errorf("manifest %s: %w", ref, err)
		}
		raw, err = readLimited(resp.Body, f.opts.MaxManifest, "manifest")
		resp.Body.Close()
		if err != nil {
			return nil, "", err
		}
		got := digestOf(raw)
		if want == "" && strings.HasPrefix(ref, "sha256:") {
			want = ref
		}
		if hdr := resp.Header.Get("Docker-Content-Digest"); want == "" && hdr != "" && hdr != got {
			return nil, "", fmt.Errorf("%w: manifest %s is %s, registry says %s", ErrDigest, ref, got, hdr)
		}
		if want != "" && got != want {
			return nil, "", fmt.Errorf("%w: manifest %s has digest %s", ErrDigest, want, got)
		}
		if _, err := f.store(ctx, raw); err != nil {
			return nil, "", err
		}
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, "", fmt.Errorf("manifest: %w", err)
	}
	return &m, digestOf(raw), nil
}

// Fetch brings the wasm of r into the cache and returns it. A digest
// reference whose manifest and wasm are cached needs no network; the
// cached blobs are hashed again against the digests that name them (a
// blob altered on disk is discarded and fetched again, or the Fetch
// fails offline). A failed Fetch removes what it put into the cache.
func (f *Fetcher) Fetch(ctx context.Context, r Ref) (a *Artifact, err error) {
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	ctx, end := f.begin(ctx)
	defer func() { end(err) }()
	if r.OCI {
		a, err = f.fetchOCI(ctx, r)
	} else {
		a, err = f.fetchHTTPS(ctx, r, "")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	return a, nil
}

func (f *Fetcher) fetchOCI(ctx context.Context, r Ref) (*Artifact, error) {
	ref := r.Tag
	if r.Digest != "" {
		ref = r.Digest
	}
	m, top, err := f.manifest(ctx, r, ref, r.Digest)
	if err != nil {
		return nil, err
	}
	a := &Artifact{Ref: r, Digest: top, Annotations: m.Annotations, Cached: true}
	if len(m.Manifests) > 0 || m.MediaType == mediaOCIIndex || m.MediaType == mediaDockerList {
		child, err := pickChild(m)
		if err != nil {
			return nil, err
		}
		m, _, err = f.manifest(ctx, r, child.Digest.String(), child.Digest.String())
		if err != nil {
			return nil, err
		}
		if a.Annotations == nil {
			a.Annotations = m.Annotations
		}
	}
	wasm, err := f.wasmOf(ctx, r, m, a)
	if err != nil {
		return nil, err
	}
	a.SHA256 = strings.TrimPrefix(wasm, "sha256:")
	a.Path = f.blobPath(wasm)
	return a, nil
}

// pickChild chooses the manifest of an index: the wasm platform's, else
// the only one.
func pickChild(m *manifest) (v1.Descriptor, error) {
	var wasm []v1.Descriptor
	for _, d := range m.Manifests {
		if d.Platform != nil && (d.Platform.Architecture == "wasm" || strings.HasPrefix(d.Platform.OS, "wasi")) {
			wasm = append(wasm, d)
		}
	}
	switch {
	case len(wasm) == 1:
	case len(m.Manifests) == 1:
		wasm = m.Manifests
	default:
		return v1.Descriptor{}, fmt.Errorf("%w: index of %d manifests, none (or several) for platform wasm", ErrLayout, len(m.Manifests))
	}
	if !digestPattern.MatchString(wasm[0].Digest.String()) {
		return v1.Descriptor{}, fmt.Errorf("%w: manifest digest %q is not sha256:HEX", ErrLayout, wasm[0].Digest.String())
	}
	return wasm[0], nil
}

// wasmOf returns the digest of the cached wasm file of m, downloading it
// when needed. Layouts: one application/wasm layer (CNCF, hyper-mcp v2),
// or image layers whose filesystem holds /plugin.wasm (hyper-mcp).
func (f *Fetcher) wasmOf(ctx context.Context, r Ref, m *manifest, a *Artifact) (string, error) {
	var wasm []v1.Descriptor
	var tars []v1.Descriptor
	var types []string
	for _, l := range m.Layers {
		// Digests name cache files: a manifest's must be well formed
		// before any is used as a path.
		if !digestPattern.MatchString(l.Digest.String()) {
			return "", fmt.Errorf("%w: layer digest %q is not sha256:HEX", ErrLayout, l.Digest.String())
		}
		switch mt := string(l.MediaType); {
		case mt == MediaWasm:
			wasm = append(wasm, l)
		case strings.Contains(mt, "image.layer") || strings.Contains(mt, "image.rootfs"):
			tars = append(tars, l)
		default:
			types = append(types, mt)
		}
	}
	switch {
	case len(wasm) == 1:
		if err := f.ensureBlob(ctx, r, wasm[0], "wasm layer", a); err != nil {
			return "", err
		}
		return wasm[0].Digest.String(), nil
	case len(wasm) > 1:
		return "", fmt.Errorf("%w: %d application/wasm layers, want one", ErrLayout, len(wasm))
	case len(tars) > 0:
		// The last layer holding plugin.wasm wins, as in the image's
		// filesystem.
		for i := len(tars) - 1; i >= 0; i-- {
			d, err := f.pluginFromLayer(ctx, r, tars[i], a)
			if err != nil {
				return "", err
			}
			if d != "" {
				return d, nil
			}
		}
		return "", fmt.Errorf("%w: image has no /plugin.wasm", ErrLayout)
	}
	return "", fmt.Errorf("%w: want one %s layer or an image with /plugin.wasm; layers are %v (config %s)", ErrLayout, MediaWasm, types, m.Config.MediaType)
}

// ensureBlob puts blob l (what it is, for an error) into the cache unless
// it is there and hashes to its digest, refusing one over MaxBlob; a
// download clears a.Cached. A cached blob that does not hash to its
// digest was altered on disk: it is discarded and fetched again.
func (f *Fetcher) ensureBlob(ctx context.Context, r Ref, l v1.Descriptor, what string, a *Artifact) error {
	if l.Size > f.opts.MaxBlob {
		return fmt.Errorf("%w: %s is %d bytes, limit %d", ErrTooLarge, what, l.Size, f.opts.MaxBlob)
	}
	present, ok := f.intact(l.Digest.String(), f.opts.MaxBlob)
	if ok {
		pullOf(ctx).use(l.Digest.String())
		return nil
	}
	a.Cached = false
	if present {
		os.Remove(f.blobPath(l.Digest.String()))
		if err := f.downloadBlob(ctx, r, l); err != nil {
			return altered(what, l.Digest.String(), err)
		}
		return nil
	}
	return f.downloadBlob(ctx, r, l)
}

// altered is the error of a cached blob that did not hash to its digest
// and could not be fetched again.
func altered(what, digest string, err error) error {
	return fmt.Errorf("%w: the cached %s %s was altered on disk (discarded); fetching it again: %w", ErrDigest, what, digest, err)
}

// downloadBlob streams blob l into the cache, checking size and digest.
func (f *Fetcher) downloadBlob(ctx context.Context, r Ref, l v1.Descriptor) error {
	if !digestPattern.MatchString(l.Digest.String()) {
		return fmt.Errorf("layer digest %q is not sha256", l.Digest.String())
	}
	if err := pullOf(ctx).reserve(l.Size, "blob "+l.Digest.String()); err != nil {
		return err
	}
	rt, err := f.transport(ctx, r, false)
	if err != nil {
		return err
	}
	resp, err := f.get(ctx, rt, f.registryURL(r, "blobs", l.Digest.String()))
	if err != nil {
		return fmt.Errorf("blob %s: %w", l.Digest.String(), err)
	}
	defer resp.Body.Close()
	return f.storeStream(ctx, l.Digest.String(), func(w io.Writer) error {
		return f.copyLimited(w, resp.Body, "blob "+l.Digest.String(), r.String(), l.Size)
	})
}

// copyLimited copies r to w, refusing more than MaxBlob bytes, with
// progress lines when it takes long.
func (f *Fetcher) copyLimited(w io.Writer, r io.Reader, what, label string, total int64) error {
	if f.opts.Progress != nil {
		r = newProgress(r, f.opts.Progress, label, total)
	}
	n, err := io.Copy(w, io.LimitReader(r, f.opts.MaxBlob+1))
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, unwrapURL(err))
	}
	if n > f.opts.MaxBlob {
		return fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, what, f.opts.MaxBlob)
	}
	return nil
}

// pluginFromLayer returns the digest of plugin.wasm in image layer l
// ("" when the layer has none), caching the layer and the extracted file.
// The layer is hashed as it is read, in the same pass: a cached layer
// that does not hash to its digest is discarded and fetched again.
func (f *Fetcher) pluginFromLayer(ctx context.Context, r Ref, l v1.Descriptor, a *Artifact) (string, error) {
	if l.Size > f.opts.MaxBlob {
		return "", fmt.Errorf("%w: layer is %d bytes, limit %d", ErrTooLarge, l.Size, f.opts.MaxBlob)
	}
	fresh := false
	if _, err := os.Lstat(f.blobPath(l.Digest.String())); err != nil {
		a.Cached, fresh = false, true
		if err := f.downloadBlob(ctx, r, l); err != nil {
			return "", err
		}
	}
	d, err := f.extractPlugin(ctx, l)
	if fresh || !errors.Is(err, errAltered) {
		return d, err
	}
	os.Remove(f.blobPath(l.Digest.String()))
	a.Cached = false
	if err := f.downloadBlob(ctx, r, l); err != nil {
		return "", altered("layer", l.Digest.String(), err)
	}
	return f.extractPlugin(ctx, l)
}

// errAltered is wrapped by extractPlugin when the cached layer does not
// hash to its digest.
var errAltered = fmt.Errorf("%w: cached layer altered", ErrDigest)

// extractPlugin reads the cached layer l once, hashing every byte, and
// stores its /plugin.wasm only when the layer hashes to l.Digest.String().
func (f *Fetcher) extractPlugin(ctx context.Context, l v1.Descriptor) (string, error) {
	fh, err := openCached(f.blobPath(l.Digest.String()), f.opts.MaxBlob)
	if errors.Is(err, errBadEntry) {
		return "", fmt.Errorf("%w: %w", errAltered, err)
	}
	if err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	defer fh.Close()
	h := sha256.New()
	raw := io.LimitReader(fh, f.opts.MaxBlob+1)
	found, tmp, err := f.findPlugin(io.TeeReader(raw, h), l)
	if tmp != nil {
		defer tmp.discard()
	}
	// The rest of the layer is hashed too, whatever the tar said.
	if _, cerr := io.Copy(h, raw); cerr != nil && err == nil {
		err = fmt.Errorf("cache: %w", cerr)
	}
	if got := "sha256:" + hex.EncodeToString(h.Sum(nil)); got != l.Digest.String() {
		return "", fmt.Errorf("%w: layer %s hashes to %s", errAltered, l.Digest.String(), got)
	}
	pullOf(ctx).use(l.Digest.String())
	if err != nil || !found {
		return "", err
	}
	return tmp.commit(ctx, "")
}

// findPlugin reads the tar (gzipped when l says so) of rd up to its
// /plugin.wasm and copies that into a temporary blob.
func (f *Fetcher) findPlugin(rd io.Reader, l v1.Descriptor) (bool, *tempBlob, error) {
	if strings.HasSuffix(string(l.MediaType), "gzip") {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return false, nil, fmt.Errorf("layer %s: %w", l.Digest.String(), err)
		}
		defer zr.Close()
		rd = zr
	}
	tr := tar.NewReader(io.LimitReader(rd, f.opts.MaxBlob+1))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return false, nil, nil
		}
		if err != nil {
			return false, nil, fmt.Errorf("layer %s: %w", l.Digest.String(), err)
		}
		if path.Clean("/"+h.Name) != "/plugin.wasm" || h.Typeflag != tar.TypeReg {
			continue
		}
		if h.Size > f.opts.MaxBlob {
			return false, nil, fmt.Errorf("%w: /plugin.wasm is %d bytes, limit %d", ErrTooLarge, h.Size, f.opts.MaxBlob)
		}
		tmp, err := f.newTemp()
		if err != nil {
			return false, nil, err
		}
		if _, err := io.Copy(tmp, tr); err != nil {
			return false, tmp, fmt.Errorf("layer %s: /plugin.wasm: %w", l.Digest.String(), err)
		}
		return true, tmp, nil
	}
}

// fetchHTTPS downloads an HTTPS URL into the cache, through a temporary
// file; with pin (hex) set and the file cached and intact, without
// network (a cached file altered on disk is discarded and downloaded
// again).
func (f *Fetcher) fetchHTTPS(ctx context.Context, r Ref, pin string) (*Artifact, error) {
	var wasAltered bool
	if pin != "" {
		d := "sha256:" + pin
		present, ok := f.intact(d, f.opts.MaxBlob)
		if ok {
			pullOf(ctx).use(d)
			return &Artifact{Ref: r, Digest: d, SHA256: pin, Path: f.blobPath(d), Cached: true}, nil
		}
		if present {
			os.Remove(f.blobPath(d))
			wasAltered = true
		}
	}
	a, err := f.downloadHTTPS(ctx, r, pin)
	if err != nil && wasAltered {
		return nil, altered("file", "sha256:"+pin, err)
	}
	return a, err
}

func (f *Fetcher) downloadHTTPS(ctx context.Context, r Ref, pin string) (*Artifact, error) {
	resp, err := f.get(ctx, f.baseFor(ctx, r.Host), r.URL)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := pullOf(ctx).reserve(resp.ContentLength, "file"); err != nil {
		return nil, err
	}
	tmp, err := f.newTemp()
	if err != nil {
		return nil, err
	}
	defer tmp.discard()
	if err := f.copyLimited(tmp, resp.Body, "file", r.String(), max(resp.ContentLength, 0)); err != nil {
		return nil, err
	}
	if d := tmp.digest(); pin != "" && d != "sha256:"+pin {
		return nil, fmt.Errorf("%w: file has %s, pinned sha256:%s", ErrDigest, d, pin)
	}
	d, err := tmp.commit(ctx, "")
	if err != nil {
		return nil, err
	}
	return &Artifact{Ref: r, Digest: d, SHA256: strings.TrimPrefix(d, "sha256:"), Path: f.blobPath(d)}, nil
}

// FetchPinned is Fetch for an HTTPS URL whose SHA-256 (hex) is known: a
// cached file needs no network, and a download that differs is refused.
func (f *Fetcher) FetchPinned(ctx context.Context, r Ref, sha256hex string) (a *Artifact, err error) {
	if r.OCI {
		return f.Fetch(ctx, r)
	}
	ctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	defer cancel()
	ctx, end := f.begin(ctx)
	defer func() { end(err) }()
	a, err = f.fetchHTTPS(ctx, r, sha256hex)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r, err)
	}
	return a, nil
}

var _ = http.StatusOK
