package fetch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// FuzzManifest feeds arbitrary manifest bytes to Fetch through the cache
// (a digest reference whose manifest is cached; the registry address
// refuses connections): parsing, index and layout selection must never
// panic, and an accepted one names a wasm file in the cache.
func FuzzManifest(f *testing.F) {
	wasm := desc(MediaWasm, testWasm)
	for _, s := range []string{
		`{"schemaVersion":2,"config":{"mediaType":"application/vnd.wasm.config.v0+json"},"layers":[` + mustJSON(wasm) + `]}`,
		`{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"digest":"sha256:00","platform":{"os":"wasip1","architecture":"wasm"}}]}`,
		`{"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:zz","size":-1}]}`,
		`{}`, `[]`, `null`,
	} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	fe, err := New(Options{Dir: dir, Timeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	if _, err := fe.store(context.Background(), testWasm); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := fe.store(context.Background(), b)
		if err != nil {
			t.Fatal(err)
		}
		a, err := fe.Fetch(context.Background(), Ref{URL: "oci://127.0.0.1:1/r@" + d, OCI: true, Host: "127.0.0.1:1", Repo: "r", Digest: d})
		if err != nil {
			return
		}
		if a.Digest != d || len(a.SHA256) != 64 || !strings.HasPrefix(a.Path, dir+string(filepath.Separator)) {
			t.Fatalf("Fetch = %+v", a)
		}
	})
}

func mustJSON(d v1.Descriptor) string {
	return `{"mediaType":"` + string(d.MediaType) + `","digest":"` + d.Digest.String() + `","size":` + itoa(d.Size) + `}`
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestManifestDigestPaths: a manifest's digests name cache files, so one
// that is not sha256:HEX is refused before it is used as a path (a
// layer digest of sha256:../../… named a file outside the cache).
func TestManifestDigestPaths(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "outside.wasm"), testWasm, 0o600)
	fe := newFetcher(t, Options{Dir: filepath.Join(dir, "cache")})
	for _, m := range []string{
		`{"schemaVersion":2,"layers":[{"mediaType":"application/wasm","digest":"sha256:../../../outside.wasm","size":1}]}`,
		`{"schemaVersion":2,"manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:../../../outside.wasm","size":1}]}`,
		`{"schemaVersion":2,"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:../../../outside.wasm","size":1}]}`,
	} {
		d, err := fe.store(context.Background(), []byte(m))
		if err != nil {
			t.Fatal(err)
		}
		a, err := fe.Fetch(context.Background(), Ref{URL: "oci://127.0.0.1:1/r@" + d, OCI: true, Host: "127.0.0.1:1", Repo: "r", Digest: d})
		if err == nil {
			t.Errorf("Fetch of %s = %s, want an error", m, a.Path)
		}
	}
}
