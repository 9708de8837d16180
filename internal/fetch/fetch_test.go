package fetch

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

var testWasm = []byte("\x00asm\x01\x00\x00\x00 test plugin")

// startRegistry serves a real distribution-API registry on loopback;
// wrap, when set, sits in front of it.
func startRegistry(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.WithReferrersSupport(true), registry.Logger(nopLogger()))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func newFetcher(t *testing.T, o Options) *Fetcher {
	t.Helper()
	if o.Dir == "" {
		o.Dir = t.TempDir()
	}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustRef(t *testing.T, s string) Ref {
	t.Helper()
	r, err := ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParseRef(t *testing.T) {
	d := "sha256:" + strings.Repeat("ab", 32)
	for _, c := range []struct {
		in, host, repo, tag, digest string
		ok                          bool
	}{
		{"oci://ghcr.io/acme/time:1.2", "ghcr.io", "acme/time", "1.2", "", true},
		{"oci://localhost:5000/time@" + d, "localhost:5000", "time", "", d, true},
		{"oci://[::1]:5000/a/b:latest", "[::1]:5000", "a/b", "latest", "", true},
		{"https://example.com/p.wasm", "example.com", "", "", "", true},
		{"oci://ghcr.io/acme/time", "", "", "", "", false},
		{"oci://ghcr.io/Acme/time:1", "", "", "", "", false},
		{"oci://ghcr.io/acme/time@sha256:12", "", "", "", "", false},
		{"oci:///time:1", "", "", "", "", false},
		{"oci://user:pw@ghcr.io/time:1", "", "", "", "", false},
		{"http://example.com/p.wasm", "", "", "", "", false},
		{"https://u:p@example.com/p.wasm", "", "", "", "", false},
		{"file:///p.wasm", "", "", "", "", false},
	} {
		r, err := ParseRef(c.in)
		if (err == nil) != c.ok {
			t.Errorf("ParseRef(%q) error = %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if err != nil {
			if !errors.Is(err, ErrBadRef) {
				t.Errorf("ParseRef(%q) error %v does not wrap ErrBadRef", c.in, err)
			}
			if strings.Contains(c.in, "pw@") && strings.Contains(err.Error(), "pw") {
				// The reference is quoted; that is what the operator wrote.
			}
			continue
		}
		if r.Host != c.host || r.Repo != c.repo || r.Tag != c.tag || r.Digest != c.digest {
			t.Errorf("ParseRef(%q) = %+v", c.in, r)
		}
	}
}

func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"oci://ghcr.io/acme/time:1.2", "oci://h/r@sha256:" + strings.Repeat("0", 64), "https://x/y.wasm", "oci://"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRef(s)
		if err != nil {
			return
		}
		if r.OCI {
			if r.Host == "" || r.Repo == "" || (r.Tag == "" && r.Digest == "") {
				t.Fatalf("ParseRef(%q) = %+v: incomplete", s, r)
			}
			if r2, err := ParseRef(r.Pinned("sha256:" + strings.Repeat("0", 64)).URL); err != nil || r2.Repo != r.Repo {
				t.Fatalf("pinned %q does not parse: %v", s, err)
			}
		}
	})
}

// pushLayout pushes a manifest with the given blobs under tag.
func pushLayout(t *testing.T, f *Fetcher, host, repo, tag string, m v1.Manifest, blobs ...[]byte) string {
	t.Helper()
	raw, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.PushManifest(context.Background(), mustRef(t, "oci://"+host+"/"+repo+":"+tag), tag, mediaOCIManifest, raw, blobs...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func tarGz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, b := range files {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
		tw.Write(b)
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func desc(mt string, b []byte) v1.Descriptor {
	return v1.Descriptor{MediaType: types.MediaType(mt), Digest: hashOf(b), Size: int64(len(b))}
}

// image is an image manifest of config and layers.
func imageOf(mt, artifactType string, config v1.Descriptor, layers ...v1.Descriptor) v1.Manifest {
	return v1.Manifest{SchemaVersion: 2, MediaType: types.MediaType(mt), ArtifactType: artifactType, Config: config, Layers: layers}
}

func TestFetchLayouts(t *testing.T) {
	host := startRegistry(t, nil)
	f := newFetcher(t, Options{})
	ctx := context.Background()
	wasmSHA := strings.TrimPrefix(digestOf(testWasm), "sha256:")

	cncf, err := f.Push(ctx, mustRef(t, "oci://"+host+"/acme/cncf:1"), testWasm, map[string]string{"org.opencontainers.image.title": "time"})
	if err != nil {
		t.Fatal(err)
	}
	empty := []byte("{}")
	hyper := pushLayout(t, f, host, "acme/hyper", "1", imageOf(mediaOCIManifest, MediaHyperMCP, desc("application/vnd.oci.empty.v1+json", empty), desc(MediaWasm, testWasm)), empty, testWasm)
	layer := tarGz(t, map[string][]byte{"README": []byte("hi"), "plugin.wasm": testWasm})
	image := pushLayout(t, f, host, "acme/image", "1", imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty), desc("application/vnd.oci.image.layer.v1.tar+gzip", layer)), empty, layer)
	noWasm := tarGz(t, map[string][]byte{"bin/sh": []byte("x")})
	pushLayout(t, f, host, "acme/nowasm", "1", imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty), desc("application/vnd.oci.image.layer.v1.tar+gzip", noWasm)), empty, noWasm)
	pushLayout(t, f, host, "acme/other", "1", imageOf(mediaOCIManifest, "", desc("application/json", empty), desc("text/plain", []byte("hello"))), empty, []byte("hello"))

	// An index whose wasm platform entry is the CNCF manifest, beside a
	// linux one.
	linux := pushLayout(t, f, host, "acme/cncf", "linux", imageOf(mediaOCIManifest, "", desc("application/json", empty), desc("text/plain", []byte("hello"))), empty, []byte("hello"))
	rawIdx, _ := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: mediaOCIIndex, Manifests: []v1.Descriptor{
		{MediaType: mediaOCIManifest, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.TrimPrefix(linux, "sha256:")}, Size: 1, Platform: &v1.Platform{OS: "linux", Architecture: "amd64"}},
		{MediaType: mediaOCIManifest, Digest: v1.Hash{Algorithm: "sha256", Hex: strings.TrimPrefix(cncf, "sha256:")}, Size: 1, Platform: &v1.Platform{OS: "wasip1", Architecture: "wasm"}},
	}})
	index, err := f.PushManifest(ctx, mustRef(t, "oci://"+host+"/acme/cncf:idx"), "idx", mediaOCIIndex, rawIdx)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, ref, digest string
		err               error
	}{
		{"cncf by tag", "acme/cncf:1", cncf, nil},
		{"index (the signed digest is the index's)", "acme/cncf:idx", index, nil},
		{"cncf by digest", "acme/cncf@" + cncf, cncf, nil},
		{"hyper-mcp v2", "acme/hyper:1", hyper, nil},
		{"image with /plugin.wasm", "acme/image:1", image, nil},
		{"image by digest", "acme/image@" + image, image, nil},
		{"image without plugin.wasm", "acme/nowasm:1", "", ErrLayout},
		{"unknown layout", "acme/other:1", "", ErrLayout},
		{"missing tag", "acme/cncf:2", "", ErrNotFound},
		{"wrong digest", "acme/cncf@sha256:" + strings.Repeat("0", 64), "", ErrNotFound},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := newFetcher(t, Options{}).Fetch(ctx, mustRef(t, "oci://"+host+"/"+c.ref))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("Fetch error = %v, want %v", err, c.err)
				}
				if !strings.Contains(err.Error(), c.ref) {
					t.Errorf("error %q does not name the reference", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.Digest != c.digest || a.SHA256 != wasmSHA {
				t.Fatalf("Fetch = digest %s sha %s, want %s %s", a.Digest, a.SHA256, c.digest, wasmSHA)
			}
			if b, err := os.ReadFile(a.Path); err != nil || !bytes.Equal(b, testWasm) {
				t.Fatalf("cached file: %v %q", err, b)
			}
			if a.Cached {
				t.Error("Cached after a fetch into an empty cache")
			}
		})
	}
}

// TestFetchDigestOffline: a digest reference whose content is cached
// needs no network; a tag does.
func TestFetchDigestOffline(t *testing.T) {
	var hits atomic.Int64
	host := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); h.ServeHTTP(w, r) })
	})
	dir := t.TempDir()
	f := newFetcher(t, Options{Dir: dir})
	ctx := context.Background()
	d, err := f.Push(ctx, mustRef(t, "oci://"+host+"/p:1"), testWasm, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newFetcher(t, Options{Dir: dir}).Fetch(ctx, mustRef(t, "oci://"+host+"/p:1")); err != nil {
		t.Fatal(err)
	}
	before := hits.Load()
	a, err := newFetcher(t, Options{Dir: dir}).Fetch(ctx, mustRef(t, "oci://"+host+"/p@"+d))
	if err != nil {
		t.Fatal(err)
	}
	if !a.Cached || hits.Load() != before {
		t.Fatalf("digest fetch from a warm cache made %d requests (cached %v)", hits.Load()-before, a.Cached)
	}
	// A corrupted cached wasm is not trusted: the loader re-hashes it
	// against Artifact.SHA256; a corrupted manifest is fetched again.
	os.WriteFile(f.blobPath(d), []byte("{}"), 0o600)
	if _, err := newFetcher(t, Options{Dir: dir}).Fetch(ctx, mustRef(t, "oci://"+host+"/p@"+d)); err != nil {
		t.Fatalf("corrupt cached manifest not refetched: %v", err)
	}
	if hits.Load() == before {
		t.Fatal("corrupt cached manifest was used")
	}
}

// TestFetchHostile: a registry that lies, stalls, fails or sends too
// much gets a clear error naming the reference, within the timeout.
func TestFetchHostile(t *testing.T) {
	ctx := context.Background()
	big := bytes.Repeat([]byte{1}, 64<<10)
	for _, c := range []struct {
		name  string
		wrap  func(http.Handler) http.Handler
		opts  Options
		wasm  []byte
		err   error
		inErr string
	}{
		{"tampered blob", divertGET(containing("/blobs/"), func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("x"), len(testWasm)))
		}), Options{}, testWasm, ErrDigest, "digest mismatch"},
		{"tampered manifest", divertGET(containing("/manifests/"), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Docker-Content-Digest", "sha256:"+strings.Repeat("1", 64))
			w.Write([]byte(`{"schemaVersion":2,"layers":[]}`))
		}), Options{}, testWasm, ErrDigest, "registry says"},
		{"blob over limit", nil, Options{MaxBlob: 32 << 10}, big, ErrTooLarge, "limit"},
		{"manifest over limit", nil, Options{MaxManifest: 64}, testWasm, ErrTooLarge, "manifest"},
		{"500s", divertGET(func(path string) bool { return path != "/v2/" }, func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", 500)
		}), Options{}, testWasm, nil, "500"},
		{"stall", divertGET(containing("/blobs/"), func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("\x00asm"))
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}), Options{Timeout: 300 * time.Millisecond}, testWasm, context.DeadlineExceeded, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			host := startRegistry(t, c.wrap)
			pusher := newFetcher(t, Options{})
			if _, err := pusher.Push(ctx, mustRef(t, "oci://"+host+"/p:1"), c.wasm, nil); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := newFetcher(t, c.opts).Fetch(ctx, mustRef(t, "oci://"+host+"/p:1"))
			if err == nil {
				t.Fatal("Fetch succeeded")
			}
			if c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("error = %v, want %v", err, c.err)
			}
			if !strings.Contains(err.Error(), c.inErr) || !strings.Contains(err.Error(), "oci://"+host+"/p:1") {
				t.Errorf("error %q does not name the reference and %q", err, c.inErr)
			}
			if time.Since(start) > 30*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
		})
	}
}

// divertGET wraps a registry so that serve answers the GETs whose path
// match holds for.
func divertGET(match func(path string) bool, serve http.HandlerFunc) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet && match(r.URL.Path) {
				serve(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
}

// containing is a path match for divertGET.
func containing(part string) func(string) bool {
	return func(path string) bool { return strings.Contains(path, part) }
}

// TestDockerCredentials: credentials from DOCKER_CONFIG reach the
// registry and never appear in errors.
func TestDockerCredentials(t *testing.T) {
	const user, pass = "robot", "s3cret-Pa55"
	host := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ctx := context.Background()
	writeConfig := func(p string) {
		dir := t.TempDir()
		auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + p))
		os.WriteFile(filepath.Join(dir, "config.json"), []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)), 0o600)
		t.Setenv("DOCKER_CONFIG", dir)
	}
	writeConfig(pass)
	if _, err := newFetcher(t, Options{}).Push(ctx, mustRef(t, "oci://"+host+"/p:1"), testWasm, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := newFetcher(t, Options{}).Fetch(ctx, mustRef(t, "oci://"+host+"/p:1")); err != nil {
		t.Fatal(err)
	}
	writeConfig("wrong-" + pass)
	_, err := newFetcher(t, Options{}).Fetch(ctx, mustRef(t, "oci://"+host+"/p:1"))
	if err == nil {
		t.Fatal("Fetch with wrong credentials succeeded")
	}
	if strings.Contains(err.Error(), pass) || strings.Contains(err.Error(), base64.StdEncoding.EncodeToString([]byte(user+":wrong-"+pass))) {
		t.Fatalf("error leaks the credential: %v", err)
	}
	if !strings.Contains(err.Error(), "401") {
		t.Errorf("error %q does not say 401", err)
	}
}

// TestHTTPS: https:// URLs over a test CA, pinned and not; plain-HTTP
// redirects refused.
func TestHTTPS(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/p.wasm", func(w http.ResponseWriter, r *http.Request) { w.Write(testWasm) })
	mux.HandleFunc("/to-http", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://203.0.113.7/p.wasm", http.StatusFound)
	})
	mux.HandleFunc("/big.wasm", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 2<<20)) })
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ctx := context.Background()
	sha := strings.TrimPrefix(digestOf(testWasm), "sha256:")
	dir := t.TempDir()

	a, err := newFetcher(t, Options{Dir: dir, RootCAs: pool}).Fetch(ctx, mustRef(t, srv.URL+"/p.wasm"))
	if err != nil || a.SHA256 != sha {
		t.Fatalf("Fetch = %+v, %v", a, err)
	}
	srv.Close()
	if a, err := newFetcher(t, Options{Dir: dir, RootCAs: pool}).FetchPinned(ctx, mustRef(t, srv.URL+"/p.wasm"), sha); err != nil || !a.Cached {
		t.Fatalf("pinned cached fetch with the server down: %+v, %v", a, err)
	}

	srv2 := httptest.NewTLSServer(mux)
	defer srv2.Close()
	pool2 := srv2.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, c := range []struct {
		name, path, pin string
		opts            Options
		err             error
		inErr           string
	}{
		{"untrusted CA", "/p.wasm", "", Options{}, nil, "certificate"},
		{"redirect to http", "/to-http", "", Options{RootCAs: pool2}, ErrInsecure, "plain http"},
		{"wrong pin", "/p.wasm", strings.Repeat("0", 64), Options{RootCAs: pool2}, ErrDigest, "pinned"},
		{"too large", "/big.wasm", "", Options{RootCAs: pool2, MaxBlob: 1 << 20}, ErrTooLarge, "over"},
		{"404", "/none.wasm", "", Options{RootCAs: pool2}, ErrNotFound, "404"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := newFetcher(t, c.opts).FetchPinned(ctx, mustRef(t, srv2.URL+c.path), c.pin)
			if err == nil || (c.err != nil && !errors.Is(err, c.err)) || !strings.Contains(err.Error(), c.inErr) {
				t.Fatalf("error = %v, want %v containing %q", err, c.err, c.inErr)
			}
		})
	}
}

// TestRedirectPolicy checks the redirect rule on synthetic requests.
func TestRedirectPolicy(t *testing.T) {
	f := newFetcher(t, Options{})
	check := f.client(http.DefaultTransport).CheckRedirect
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"https://203.0.113.5/v2/x", "https://198.51.100.9/blob", true},
		{"https://203.0.113.5/v2/x", "https://10.1.2.3/blob", false},
		{"https://203.0.113.5/v2/x", "https://127.0.0.1/blob", false},
		{"https://203.0.113.5/v2/x", "https://169.254.169.254/latest", false},
		{"https://203.0.113.5/v2/x", "http://198.51.100.9/blob", false},
		{"http://127.0.0.1:5000/v2/x", "http://127.0.0.1:5001/blob", true},
		{"https://10.0.0.1/v2/x", "https://10.0.0.2/blob", true},
	} {
		from, _ := url.Parse(c.from)
		to, _ := url.Parse(c.to)
		err := check(&http.Request{URL: to}, []*http.Request{{URL: from}})
		if (err == nil) != c.ok {
			t.Errorf("redirect %s -> %s: %v, want ok %v", c.from, c.to, err, c.ok)
		}
	}
	// Plain HTTP to a non-loopback host is refused before any dial.
	req, _ := http.NewRequest(http.MethodGet, "http://198.51.100.9/v2/", nil)
	if _, err := f.base.RoundTrip(req); !errors.Is(err, ErrInsecure) {
		t.Errorf("plain http to a public host: %v", err)
	}
}

// TestProgress: a download that takes longer than a second prints
// progress lines; a quick one prints nothing.
func TestProgress(t *testing.T) {
	testutil.WallClock(t) // a real server's download must take over a second of real time (TestProgressLines checks the lines on a fake clock)
	mux := http.NewServeMux()
	mux.HandleFunc("/slow.wasm", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 5; i++ {
			w.Write(testWasm)
			w.(http.Flusher).Flush()
			time.Sleep(500 * time.Millisecond)
		}
	})
	mux.HandleFunc("/fast.wasm", func(w http.ResponseWriter, r *http.Request) { w.Write(testWasm) })
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	for _, c := range []struct {
		path string
		want bool
	}{{"/slow.wasm", true}, {"/fast.wasm", false}} {
		var buf bytes.Buffer
		if _, err := newFetcher(t, Options{RootCAs: pool, Progress: &buf}).Fetch(context.Background(), mustRef(t, srv.URL+c.path)); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), "wasmcp: downloaded "+srv.URL+c.path); got != c.want {
			t.Errorf("%s: progress %q, want lines %v", c.path, buf.String(), c.want)
		}
	}
}
