package server

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestURLCachedLayerAltered: a signed hyper-mcp image whose cached layer
// is rewritten on disk after the pull (with another plugin that would
// serve the same tools) is not served on the next start, offline: the
// layer is hashed again against the digest the signed manifest names,
// and the log says so. Online, the layer is fetched again and the signed
// plugin serves.
func TestURLCachedLayerAltered(t *testing.T) {
	e := newURLEnv(t)
	dir := t.TempDir()
	key := newKey(t, dir, "cosign.pub")
	layerOf := func(wasm []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		tw := tar.NewWriter(zw)
		tw.WriteHeader(&tar.Header{Name: "plugin.wasm", Mode: 0o644, Size: int64(len(wasm)), Typeflag: tar.TypeReg})
		tw.Write(wasm)
		tw.Close()
		zw.Close()
		return buf.Bytes()
	}
	layer := layerOf(e.wasm)
	cfg := []byte("{}")
	d := e.pushRaw(t, "image", "1", map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": blobDesc("application/vnd.oci.image.config.v1+json", cfg, nil),
		"layers": []any{blobDesc("application/vnd.oci.image.layer.v1.tar+gzip", layer, nil)},
	}, cfg, layer)
	e.signReferrer(t, "image", d, key)
	toml := urlHeader + `
[[plugins]]
name = "img"
url = "oci://{{host}}/image@` + d + `"
[plugins.verify]
key = "cosign.pub"
`
	srv, logs := e.serve(t, dir, toml)
	if err := echo(t, srv, "echo"); err != nil {
		t.Fatalf("signed image: %v\n%s", err, logs)
	}
	srv.Close(context.Background())

	cached := filepath.Join(dir, "cache", "plugins", "blobs", "sha256", strings.TrimPrefix(sha(layer), "sha256:"))
	if err := os.WriteFile(cached, layerOf(withCustomSection(e.wasm, "not signed")), 0o600); err != nil {
		t.Fatal(err)
	}
	e.down.Store(true)
	srv, logs = e.serve(t, dir, toml)
	if echo(t, srv, "echo") == nil {
		t.Fatalf("a rewritten cached layer is served offline:\n%s", logs)
	}
	if out := logs.String(); !strings.Contains(out, "altered on disk") || !strings.Contains(out, sha(layer)) {
		t.Errorf("log does not name the altered layer:\n%s", out)
	}
	srv.Close(context.Background())

	if err := os.WriteFile(cached, layerOf(withCustomSection(e.wasm, "not signed")), 0o600); err != nil {
		t.Fatal(err)
	}
	e.down.Store(false)
	srv, logs = e.serve(t, dir, toml)
	if err := echo(t, srv, "echo"); err != nil {
		t.Fatalf("online after a rewrite: %v\n%s", err, logs)
	}
	b, _ := os.ReadFile(cached)
	if sha(b) != sha(layer) {
		t.Error("the cached layer was not fetched again")
	}
}
