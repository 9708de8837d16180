package fetch

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Options configures a [Fetcher]. Zero fields are the documented defaults.
type Options struct {
	// Dir is the cache directory; required. Blobs are kept under
	// Dir/blobs/sha256/HEX, named by the SHA-256 of their content.
	Dir string
	// MaxManifest bounds a manifest, index or signature document.
	// Default 4MiB.
	MaxManifest int64
	// MaxBlob bounds a downloaded wasm file or image layer (compressed
	// and decompressed). Default 256MiB.
	MaxBlob int64
	// MaxPull bounds the bytes one Fetch, Resolve or Signatures reads
	// from the network, over all its manifests and blobs (an image of
	// many layers). Default 2 × MaxBlob.
	MaxPull int64
	// Timeout bounds one Fetch, Resolve, Signatures or Push, from the
	// first request to the last byte. Default 2m.
	Timeout time.Duration
	// RootCAs are the roots trusted for HTTPS; nil means the system roots
	// (SSL_CERT_FILE and SSL_CERT_DIR are honoured).
	RootCAs *x509.CertPool
	// Progress, when set, receives a line every second or so while a
	// download is running for more than a second.
	Progress io.Writer
}

// Defaults of [Options].
const (
	DefaultMaxManifest = 4 << 20
	DefaultMaxBlob     = 256 << 20
	DefaultTimeout     = 2 * time.Minute
)

// Media types read and written.
const (
	MediaWasm          = "application/wasm"
	MediaWasmConfig    = "application/vnd.wasm.config.v0+json"
	MediaHyperMCP      = "application/vnd.hyper-mcp.plugin.v2"
	MediaBundle        = "application/vnd.dev.sigstore.bundle.v0.3+json"
	MediaSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	mediaOCIManifest   = "application/vnd.oci.image.manifest.v1+json"
	mediaOCIIndex      = "application/vnd.oci.image.index.v1+json"
	mediaDockerList    = "application/vnd.docker.distribution.manifest.list.v2+json"
	mediaDockerV2      = "application/vnd.docker.distribution.manifest.v2+json"
)

// Errors callers branch on; each is wrapped with the detail.
var (
	// ErrDigest means bytes did not match the digest that named them.
	ErrDigest = errors.New("digest mismatch")
	// ErrTooLarge means a document or blob was over its limit.
	ErrTooLarge = errors.New("too large")
	// ErrNotFound means the registry or server has no such manifest,
	// tag or file.
	ErrNotFound = errors.New("not found")
	// ErrLayout means the manifest holds no wasm in a known layout.
	ErrLayout = errors.New("no wasm in a known layout")
	// ErrInsecure means a request would have left HTTPS for a host
	// that is not loopback, or would have connected (for the registry,
	// its token realm, a redirect or a blob store) to a loopback, private
	// or link-local address that the source's own host is not.
	ErrInsecure = errors.New("refused insecure transport")
)

// Fetcher downloads plugins into its cache. It is safe for concurrent use.
type Fetcher struct {
	opts Options
	base http.RoundTripper // reaches public addresses only

	mu      sync.Mutex
	trans   map[string]http.RoundTripper   // authenticated transports by host|scope
	bases   map[netClass]http.RoundTripper // transports by what they may reach (baseFor)
	proxies map[string]bool                // proxy addresses (host:port) the environment named
	live    map[string]int                 // cached blobs in use by running pulls
	kept    map[string]bool                // cached blobs a successful pull used

	// public, set by tests only, lists addresses the address policy
	// counts as public: a loopback registry standing for a public one.
	public map[netip.AddrPort]bool
}

// New returns a Fetcher caching under opts.Dir.
func New(opts Options) (*Fetcher, error) {
	if opts.Dir == "" {
		return nil, errors.New("fetch: no cache directory")
	}
	if opts.MaxManifest <= 0 {
		opts.MaxManifest = DefaultMaxManifest
	}
	if opts.MaxBlob <= 0 {
		opts.MaxBlob = DefaultMaxBlob
	}
	if opts.MaxPull <= 0 {
		opts.MaxPull = 2 * opts.MaxBlob
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if err := os.MkdirAll(filepath.Join(opts.Dir, "blobs", "sha256"), 0o700); err != nil {
		return nil, fmt.Errorf("fetch: cache: %w", err)
	}
	f := &Fetcher{opts: opts, trans: map[string]http.RoundTripper{}, bases: map[netClass]http.RoundTripper{},
		proxies: map[string]bool{}, live: map[string]int{}, kept: map[string]bool{}}
	f.base = guard{f.newTransport(netPublic)}
	f.bases[netPublic] = f.base
	return f, nil
}

// guard refuses plain HTTP to anything but loopback, wherever the request
// comes from (a redirect, a token realm, go-containerregistry's ping
// falling back to http for private addresses), and counts what a pull
// reads against its budget; its transport's dialer refuses the addresses
// the source may not reach (baseFor).
type guard struct{ inner http.RoundTripper }

func (g guard) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" && !(req.URL.Scheme == "http" && loopback(req.URL.Host)) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, fmt.Errorf("%w: plain %s to %s (only loopback hosts are spoken to without TLS)", ErrInsecure, req.URL.Scheme, req.URL.Host)
	}
	resp, err := g.inner.RoundTrip(req)
	if err == nil {
		// Every answer a pull reads counts against its budget: the
		// registry's ping and token answers too, not only manifests
		// and blobs.
		resp.Body = pullOf(req.Context()).count(resp.Body)
	}
	return resp, err
}

// client returns an HTTP client over rt that refuses redirects to plain
// HTTP or to private and loopback addresses the first request did not
// name.
func (f *Fetcher) client(rt http.RoundTripper) *http.Client {
	return &http.Client{Transport: rt, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("more than 5 redirects")
		}
		orig := via[0].URL
		if req.URL.Scheme != "https" && !(loopback(orig.Host) && loopback(req.URL.Host)) {
			return fmt.Errorf("%w: redirect from %s to plain %s://%s", ErrInsecure, orig.Host, req.URL.Scheme, req.URL.Host)
		}
		if !strings.EqualFold(req.URL.Hostname(), orig.Hostname()) && f.private(req.Context(), req.URL.Hostname()) && !f.private(req.Context(), orig.Hostname()) {
			return fmt.Errorf("%w: redirect from %s to private address %s", ErrInsecure, orig.Host, req.URL.Host)
		}
		return nil
	}}
}

// private reports whether host is, or resolves to, an address that is
// not public (loopback, private, link-local, unspecified, reserved); an
// unresolvable host counts as private.
func (f *Fetcher) private(ctx context.Context, host string) bool {
	c := f.classesOf(ctx, host)
	return c == 0 || c&^netPublic != 0
}

// transport returns the authenticated transport for a registry and
// repository, with credentials from the Docker configuration.
func (f *Fetcher) transport(ctx context.Context, r Ref, push bool) (http.RoundTripper, error) {
	action := transport.PullScope
	if push {
		action = transport.PushScope
	}
	key := r.Host + "|" + r.Repo + "|" + action
	f.mu.Lock()
	rt, ok := f.trans[key]
	f.mu.Unlock()
	if ok {
		return rt, nil
	}
	var opts []name.Option
	if loopback(r.Host) {
		opts = append(opts, name.Insecure)
	}
	reg, err := name.NewRegistry(r.Host, opts...)
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", r.Host, err)
	}
	auth, err := authn.DefaultKeychain.Resolve(reg)
	if err != nil {
		return nil, fmt.Errorf("registry %s: docker credentials: %w", r.Host, redact(err))
	}
	repo := reg.Repo(r.Repo)
	rt, err = transport.NewWithContext(ctx, reg, auth, f.baseFor(ctx, r.Host), []string{repo.Scope(action)})
	if err != nil {
		return nil, fmt.Errorf("registry %s: %w", r.Host, redact(err))
	}
	f.mu.Lock()
	f.trans[key] = rt
	f.mu.Unlock()
	return rt, nil
}

// redact drops an error's text past what can carry a credential: the
// transport's errors quote registry responses, never the credentials
// sent, but a token endpoint may echo them back.
func redact(err error) error {
	var te *transport.Error
	if errors.As(err, &te) {
		return fmt.Errorf("registry answered %d %s", te.StatusCode, http.StatusText(te.StatusCode))
	}
	return err
}

// scheme is the URL scheme for host: http on loopback, else https.
func scheme(host string) string {
	if loopback(host) {
		return "http"
	}
	return "https"
}

// get performs a GET of u with accept and returns the response (status
// 200) or an error naming the status.
func (f *Fetcher) get(ctx context.Context, rt http.RoundTripper, u string, accept ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	if len(accept) > 0 {
		req.Header.Set("Accept", strings.Join(accept, ", "))
	}
	resp, err := f.client(rt).Do(req)
	if err != nil {
		return nil, unwrapURL(err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w (404)", ErrNotFound)
	}
	return nil, fmt.Errorf("server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
}

// unwrapURL turns *url.Error (which repeats the URL, possibly with a
// query string) into its cause with the method and host.
func unwrapURL(err error) error {
	var ue interface {
		Unwrap() error
		Timeout() bool
	}
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return fmt.Errorf("timed out: %w", ue.Unwrap())
		}
		return ue.Unwrap()
	}
	return err
}

// readLimited reads all of r, refusing more than limit bytes.
func readLimited(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, unwrapURL(err))
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrTooLarge, what, limit)
	}
	return b, nil
}

// digestOf returns "sha256:HEX" of b.
func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// hashOf returns the SHA-256 of b as a go-containerregistry hash.
func hashOf(b []byte) v1.Hash {
	sum := sha256.Sum256(b)
	return v1.Hash{Algorithm: "sha256", Hex: hex.EncodeToString(sum[:])}
}

// blobPath is where the cache keeps the blob of digest ("sha256:HEX").
func (f *Fetcher) blobPath(digest string) string {
	return filepath.Join(f.opts.Dir, "blobs", "sha256", strings.TrimPrefix(digest, "sha256:"))
}

// errBadEntry is wrapped by openCached for a cache entry that is there
// but cannot be what wasmcp wrote: not a regular file, or too large.
var errBadEntry = errors.New("not a cache entry")

// openCached opens the cache file at path for reading, looking before it
// reads: the cache directory is not trusted, so an entry must be a
// regular file (not a symbolic link, device or FIFO; opened without
// blocking and checked again through the descriptor) of at most limit
// bytes. A missing entry is an error wrapping fs.ErrNotExist; a bad one
// wraps errBadEntry.
func openCached(path string, limit int64) (*os.File, error) {
	check := func(fi os.FileInfo) error {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("%w: %s is %s", errBadEntry, filepath.Base(path), fi.Mode().Type())
		}
		if fi.Size() > limit {
			return fmt.Errorf("%w: %s is %d bytes, over %d", errBadEntry, filepath.Base(path), fi.Size(), limit)
		}
		return nil
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := check(fi); err != nil {
		return nil, err
	}
	fh, err := openNonblock(path)
	if err != nil {
		return nil, err
	}
	if fi, err = fh.Stat(); err == nil {
		err = check(fi)
	}
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
}

// cached returns the cached bytes of digest when present and intact.
func (f *Fetcher) cached(ctx context.Context, digest string, limit int64) ([]byte, bool) {
	if !digestPattern.MatchString(digest) {
		return nil, false
	}
	fh, err := openCached(f.blobPath(digest), limit)
	if err != nil {
		return nil, false
	}
	defer fh.Close()
	b, err := readLimited(fh, limit, "cached blob")
	if err != nil || digestOf(b) != digest {
		return nil, false
	}
	pullOf(ctx).use(digest)
	return b, true
}

// intact reports whether the cached blob of digest is there and hashes
// to digest (read at most limit+1 bytes). The cache directory is not
// trusted: what a signature covers is hashed again on every use.
func (f *Fetcher) intact(digest string, limit int64) (present, ok bool) {
	return intactAt(f.blobPath(digest), digest, limit)
}

// intactAt is intact for the cache file at path.
func intactAt(path, digest string, limit int64) (present, ok bool) {
	fh, err := openCached(path, limit)
	if err != nil {
		_, lerr := os.Lstat(path)
		return lerr == nil, false
	}
	defer fh.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(fh, limit+1))
	return true, err == nil && n <= limit && "sha256:"+hex.EncodeToString(h.Sum(nil)) == digest
}

// store writes b into the cache under its digest.
func (f *Fetcher) store(ctx context.Context, b []byte) (string, error) {
	t, err := f.newTemp()
	if err != nil {
		return "", err
	}
	defer t.discard()
	if _, err := t.Write(b); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	return t.commit(ctx, "")
}

// storeStream writes a blob whose digest is known in advance through a
// temporary file, checking the digest before renaming it into place.
func (f *Fetcher) storeStream(ctx context.Context, digest string, write func(io.Writer) error) error {
	t, err := f.newTemp()
	if err != nil {
		return err
	}
	defer t.discard()
	if err := write(t); err != nil {
		return err
	}
	_, err = t.commit(ctx, digest)
	return err
}

// tempBlob is a blob being written: a temporary file in the cache's blob
// directory and the hash of what was written, renamed into place by
// commit. Nothing downloaded is held in memory.
type tempBlob struct {
	f    *Fetcher
	file *os.File
	h    hash.Hash
	done bool
}

func (f *Fetcher) newTemp() (*tempBlob, error) {
	file, err := os.CreateTemp(filepath.Join(f.opts.Dir, "blobs", "sha256"), ".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	return &tempBlob{f: f, file: file, h: sha256.New()}, nil
}

func (t *tempBlob) Write(b []byte) (int, error) {
	n, err := t.file.Write(b)
	t.h.Write(b[:n])
	return n, err
}

// digest is "sha256:HEX" of what was written.
func (t *tempBlob) digest() string { return "sha256:" + hex.EncodeToString(t.h.Sum(nil)) }

// commit renames the blob into place under its digest, refusing it when
// want is set and differs; the pull of ctx records a blob it created.
func (t *tempBlob) commit(ctx context.Context, want string) (string, error) {
	d := t.digest()
	if want != "" && d != want {
		return "", fmt.Errorf("%w: got %s, want %s", ErrDigest, d, want)
	}
	if err := t.file.Close(); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	dst := t.f.blobPath(d)
	_, statErr := os.Stat(dst)
	if err := os.Rename(t.file.Name(), dst); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	t.done = true
	p := pullOf(ctx)
	p.use(d)
	if statErr != nil {
		p.created(d)
	}
	return d, nil
}

// discard removes the temporary file unless it was committed.
func (t *tempBlob) discard() {
	if !t.done {
		t.file.Close()
		os.Remove(t.file.Name())
	}
}

// Named returns a path of a's wasm file that is its own for plugin name
// (Dir/named/NAME/SHA256.wasm, a hard link, else a copy): the plugin
// registry tells plugins apart by path, and two plugins may share bytes.
// What is at that path is used only when it is a hard link of a's file
// or a regular file with its bytes; anything else (a FIFO, a link,
// other bytes) is replaced.
func (f *Fetcher) Named(name string, a *Artifact) (string, error) {
	if name == "" || strings.ContainsAny(name, `/\.`) {
		return "", fmt.Errorf("fetch: bad plugin name %q", name)
	}
	dst := filepath.Join(f.opts.Dir, "named", name, a.SHA256+".wasm")
	if fi, err := os.Lstat(dst); err == nil {
		if src, err := os.Stat(a.Path); err == nil && fi.Mode().IsRegular() && os.SameFile(fi, src) {
			return dst, nil
		}
		if _, ok := intactAt(dst, "sha256:"+a.SHA256, f.opts.MaxBlob); ok {
			return dst, nil
		}
		if err := os.Remove(dst); err != nil {
			return "", fmt.Errorf("cache: %w", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return "", fmt.Errorf("cache: %w", err)
	}
	if err := os.Link(a.Path, dst); err == nil || errors.Is(err, os.ErrExist) {
		return dst, nil
	}
	err := f.storeCopy(a.Path, dst)
	if err != nil {
		return "", err
	}
	return dst, nil
}

func (f *Fetcher) storeCopy(src, dst string) error {
	in, err := openCached(src, f.opts.MaxBlob)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".tmp-*")
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, in); err != nil {
		tmp.Close()
		return fmt.Errorf("cache: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	return os.Rename(tmp.Name(), dst)
}
