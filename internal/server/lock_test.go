package server

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/fetch"
)

// TestPushPullLock: push writes the CNCF layout with the plugin's name,
// version and capabilities; pull fetches and verifies; lock pins the
// digests, so that serve loads the locked version after the tag moved,
// starts with the registry down, and refuses a plugin whose grants
// widened since, printing the difference, while the others serve.
func TestPushPullLock(t *testing.T) {
	e := newURLEnv(t)
	dir := t.TempDir()
	good, _ := filepath.Abs("../../testdata/hostile/good.wasm")
	ctx := context.Background()
	base := config.Default()
	base.Server.CacheDir = filepath.Join(dir, "cache")

	d, err := Push(ctx, base, good, "oci://"+e.host+"/acme/good:1")
	if err != nil {
		t.Fatal(err)
	}
	// The manifest is the CNCF layout with the annotations.
	ref, _ := fetch.ParseRef("oci://" + e.host + "/acme/good@" + d)
	a, err := e.fetcher.Fetch(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	if a.Annotations["org.opencontainers.image.title"] != "good" || a.Annotations["org.opencontainers.image.version"] != "1.0.0" ||
		a.Annotations[AnnotationABI] != "wasmcp/1" || !json.Valid([]byte(a.Annotations[AnnotationCapabilities])) {
		t.Errorf("annotations = %v", a.Annotations)
	}
	raw, _ := os.ReadFile(filepath.Join(e.fetcherDir(t), "blobs", "sha256", strings.TrimPrefix(d, "sha256:")))
	if !strings.Contains(string(raw), `"mediaType":"application/vnd.wasm.config.v0+json"`) || !strings.Contains(string(raw), `"mediaType":"application/wasm"`) {
		t.Errorf("manifest is not the CNCF layout: %s", raw)
	}

	key := newKey(t, dir, "cosign.pub")
	e.signReferrer(t, "acme/good", d, key)
	if p, err := Pull(ctx, base, "oci://"+e.host+"/acme/good:1", filepath.Join(dir, "cosign.pub"), nil); err != nil || p.Digest != d || !p.Verified {
		t.Fatalf("Pull = %+v, %v", p, err)
	}
	newKey(t, dir, "other.pub")
	if _, err := Pull(ctx, base, "oci://"+e.host+"/acme/good:1", filepath.Join(dir, "other.pub"), nil); err == nil || !strings.Contains(err.Error(), "does not verify") && !strings.Contains(err.Error(), "no valid signature") {
		t.Fatalf("Pull with the wrong key = %v", err)
	}

	cfgText := func(grants string) string {
		return urlHeader + `
[[plugins]]
name = "locked"
url = "oci://{{host}}/acme/good:1"
[plugins.verify]
key = "cosign.pub"
[plugins.grants]
` + grants + `
[[plugins]]
name = "other"
url = "oci://{{host}}/acme/good:1"
prefix = "o_"
`
	}
	write := func(text string) *config.Config {
		text = strings.ReplaceAll(text, "{{host}}", e.host)
		os.WriteFile(filepath.Join(dir, "wasmcp.toml"), []byte(text), 0o644)
		cfg, err := config.Load(filepath.Join(dir, "wasmcp.toml"))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := write(cfgText(`kv = true`))
	lock, changes, err := Lock(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WriteLock(cfg, lock); err != nil {
		t.Fatal(err)
	}
	if len(lock.Plugins) != 2 || lock.Plugins[0].Digest != d || len(changes) != 2 {
		t.Fatalf("lock = %+v, changes %q", lock, changes)
	}

	// The tag moves to an unsigned build: serve keeps the locked digest,
	// with the registry down.
	e.push(t, "acme/good:1", append(append([]byte(nil), e.wasm...), 0))
	e.down.Store(true)
	srv, logs := e.serve(t, dir, cfgText(`kv = true`))
	for _, tool := range []string{"echo", "o_echo"} {
		if err := echo(t, srv, tool); err != nil {
			t.Fatalf("%s from the lock, offline: %v\n%s", tool, err, logs)
		}
	}
	srv.Close(ctx)

	// Grants widened since the lock: refused with the difference; the
	// other plugin serves.
	srv, logs = e.serve(t, dir, cfgText(`kv = true
http = ["https://api.example.com/"]
sampling = true`))
	if echo(t, srv, "echo") == nil {
		t.Fatal("plugin with widened grants is served")
	}
	if err := echo(t, srv, "o_echo"); err != nil {
		t.Fatalf("other plugin: %v", err)
	}
	for _, want := range []string{"grants widened since wasmcp.lock", "+ http https://api.example.com/", "+ sampling", "wasmcp lock"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, logs)
		}
	}
}
