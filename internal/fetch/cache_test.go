package fetch

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// TestCachedBlobRehashed: a blob of the cache rewritten on disk after a
// pull is never served as what the manifest (and so its signature)
// names: every Fetch hashes it again; online it is discarded and fetched
// again, offline the Fetch fails naming the digest.
func TestCachedBlobRehashed(t *testing.T) {
	e := newCacheEnv(t)
	host, down, image, cncf, layer := e.host, &e.down, e.image, e.cncf, e.layer
	ctx := context.Background()
	evil := []byte("\x00asm\x01\x00\x00\x00 evil plugin!")
	wasmSHA := strings.TrimPrefix(digestOf(testWasm), "sha256:")
	for _, c := range []struct {
		name, ref string
		blob      string // the cached blob rewritten
		rewrite   []byte
	}{
		{"hyper-mcp image layer", "acme/image@" + image, digestOf(layer), tarGz(t, map[string][]byte{"plugin.wasm": evil})},
		{"wasm layer", "acme/cncf@" + cncf, digestOf(testWasm), evil},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ref := mustRef(t, "oci://"+host+"/"+c.ref)
			down.Store(false)
			if _, err := newFetcher(t, Options{Dir: dir}).Fetch(ctx, ref); err != nil {
				t.Fatal(err)
			}
			f := newFetcher(t, Options{Dir: dir})
			if err := os.WriteFile(f.blobPath(c.blob), c.rewrite, 0o600); err != nil {
				t.Fatal(err)
			}
			down.Store(true)
			a, err := f.Fetch(ctx, ref)
			if err == nil {
				b, _ := os.ReadFile(a.Path)
				t.Fatalf("offline Fetch of a rewritten cache entry succeeded: sha256 %s, %q", a.SHA256, b)
			}
			t.Logf("offline: %v", err)
			if !errors.Is(err, ErrDigest) || !strings.Contains(err.Error(), c.blob) {
				t.Fatalf("offline error = %v, want ErrDigest naming %s", err, c.blob)
			}
			if _, err := os.Stat(f.blobPath(c.blob)); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the rewritten entry is still cached: %v", err)
			}
			// Rewritten again, then online: fetched again, the right bytes.
			os.WriteFile(f.blobPath(c.blob), c.rewrite, 0o600)
			down.Store(false)
			a, err = f.Fetch(ctx, ref)
			if err != nil {
				t.Fatalf("online Fetch after a rewrite: %v", err)
			}
			if b, err := os.ReadFile(a.Path); err != nil || !bytes.Equal(b, testWasm) || a.SHA256 != wasmSHA || a.Cached {
				t.Fatalf("online Fetch = sha256 %s cached %v, file %q (%v)", a.SHA256, a.Cached, b, err)
			}
			if b, _ := os.ReadFile(f.blobPath(c.blob)); digestOf(b) != c.blob {
				t.Errorf("the cache entry was not restored")
			}
		})
	}
}

// cacheEnv is a loopback registry that can be taken down, holding
// acme/image (hyper-mcp's image layout, /plugin.wasm in a gzipped layer)
// and acme/cncf:1 (the CNCF layout), both of testWasm.
type cacheEnv struct {
	host        string
	down        atomic.Bool // the registry answers 503
	image, cncf string      // manifest digests
	layer       []byte      // acme/image's layer
}

func newCacheEnv(t *testing.T) *cacheEnv {
	t.Helper()
	e := &cacheEnv{}
	e.host = startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if e.down.Load() {
				http.Error(w, "down", http.StatusServiceUnavailable)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	pusher := newFetcher(t, Options{})
	empty := []byte("{}")
	e.layer = tarGz(t, map[string][]byte{"plugin.wasm": testWasm})
	e.image = pushLayout(t, pusher, e.host, "acme/image", "1", imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty), desc("application/vnd.oci.image.layer.v1.tar+gzip", e.layer)), empty, e.layer)
	var err error
	if e.cncf, err = pusher.Push(context.Background(), mustRef(t, "oci://"+e.host+"/acme/cncf:1"), testWasm, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// heapPeak samples the heap in use every millisecond while run runs and
// returns its largest value above the heap before.
func heapPeak(t *testing.T, run func()) uint64 {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	run()
	close(done)
	<-stopped
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

// bigStream writes n bytes of zeros in 1 MiB writes, stopping early when
// the client goes away.
func bigStream(n int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 1<<20)
		for sent := int64(0); sent < n; sent += int64(len(chunk)) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}
}

// TestHTTPSStreamBounded: an https source streaming far past the size
// limit is written to a temporary file under the limit, never held in
// memory, and refused; nothing of it stays in the cache.
func TestHTTPSStreamBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 128 MiB")
	}
	const limit = 128 << 20
	srv := httptest.NewTLSServer(bigStream(limit + 300<<20))
	defer srv.Close()
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	dir := t.TempDir()
	f := newFetcher(t, Options{Dir: dir, RootCAs: pool, MaxBlob: limit})
	var err error
	peak := heapPeak(t, func() { _, err = f.Fetch(context.Background(), mustRef(t, srv.URL+"/big.wasm")) })
	t.Logf("heap peak above the start: %.1f MiB (limit %d MiB)", float64(peak)/(1<<20), limit>>20)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Fetch error = %v, want ErrTooLarge", err)
	}
	// Without -race the copy peaks at a few MiB; a buffered body at
	// the limit (128 MiB) or more.
	if peak > 48<<20 {
		t.Errorf("heap peak %.1f MiB above the start: the body was held in memory", float64(peak)/(1<<20))
	}
	if n := cacheBytes(t, dir); n != 0 {
		t.Errorf("the refused download left %d bytes in the cache", n)
	}
}

// cacheBytes sums the sizes of the regular files under dir.
func cacheBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// tarOf is an uncompressed tar of one file.
func tarOf(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg})
	tw.Write(b)
	tw.Close()
	return buf.Bytes()
}

// TestPullBudget: a pull of an image of many large layers stops at the
// pull's byte budget (MaxPull), and a failed pull leaves nothing it
// fetched in the cache; what was cached before stays.
func TestPullBudget(t *testing.T) {
	host := startRegistry(t, nil)
	ctx := context.Background()
	pusher := newFetcher(t, Options{})
	const blob = 1 << 20
	empty := []byte("{}")
	// Six layers of 900 KiB of noise, none with /plugin.wasm: each is a
	// valid layer, so the old code downloaded all six.
	var layers [][]byte
	var descs []v1.Descriptor
	for i := 0; i < 6; i++ {
		noise := make([]byte, 900<<10)
		rand.Read(noise)
		l := tarOf(t, "data.bin", noise)
		layers = append(layers, l)
		descs = append(descs, desc("application/vnd.oci.image.layer.v1.tar", l))
	}
	pushLayout(t, pusher, host, "acme/many", "1", imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty), descs...), append([][]byte{empty}, layers...)...)
	// Two small layers without /plugin.wasm: within the budget, but the
	// pull fails.
	pushLayout(t, pusher, host, "acme/nowasm", "1", imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty), descs[:2]...), append([][]byte{empty}, layers[:2]...)...)
	if _, err := pusher.Push(ctx, mustRef(t, "oci://"+host+"/acme/good:1"), testWasm, nil); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	f := newFetcher(t, Options{Dir: dir, MaxBlob: blob})
	good, err := f.Fetch(ctx, mustRef(t, "oci://"+host+"/acme/good:1"))
	if err != nil {
		t.Fatal(err)
	}
	before := cacheBytes(t, dir)
	for _, c := range []struct {
		name string
		ref  string
		err  error
	}{
		{"six layers past the budget", "acme/many:1", ErrTooLarge},
		{"a failed pull within it", "acme/nowasm:1", ErrLayout},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.Fetch(ctx, mustRef(t, "oci://"+host+"/"+c.ref))
			if !errors.Is(err, c.err) {
				t.Fatalf("Fetch error = %v, want %v", err, c.err)
			}
			after := cacheBytes(t, dir)
			t.Logf("cache after the failed pull: %d bytes more", after-before)
			if after != before {
				t.Errorf("the failed pull left %d bytes in the cache", after-before)
			}
			if b, err := os.ReadFile(good.Path); err != nil || !bytes.Equal(b, testWasm) {
				t.Errorf("the good plugin's cached wasm is gone: %v", err)
			}
		})
	}
	_ = io.Discard
}

// TestPullBudgetEveryResponse: the pull's budget counts every response
// it reads, not only manifests and blobs: a registry whose first answer
// (go-containerregistry's ping of /v2/, which it reads to the end) never
// ends is cut off at the budget, long before the pull's timeout.
func TestPullBudgetEveryResponse(t *testing.T) {
	var endless atomic.Bool
	host := startRegistry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v2/" && endless.Load() {
				bigStream(1<<40)(w, r)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	if _, err := newFetcher(t, Options{}).Push(context.Background(), mustRef(t, "oci://"+host+"/p:1"), testWasm, nil); err != nil {
		t.Fatal(err)
	}
	endless.Store(true)
	f := newFetcher(t, Options{MaxBlob: 1 << 20, Timeout: 20 * time.Second})
	start := time.Now()
	_, err := f.Fetch(context.Background(), mustRef(t, "oci://"+host+"/p:1"))
	t.Logf("%v after %v", err, time.Since(start))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
}
