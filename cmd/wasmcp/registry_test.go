package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
)

// TestPushPullLockCommands runs wasmcp push, pull and lock against a real
// registry on loopback.
func TestPushPullLockCommands(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	ref := "oci://" + host + "/acme/good:1"
	good, _ := filepath.Abs("../../testdata/hostile/good.wasm")

	out, errOut, code := wasmcp(t, "", "push", good, ref)
	digest := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(digest, "sha256:") {
		t.Fatalf("push: code %d, %q, %s", code, out, errOut)
	}
	out, errOut, code = wasmcp(t, "", "pull", ref)
	if code != 0 || strings.TrimSpace(out) != digest || !strings.Contains(errOut, "not verified") {
		t.Fatalf("pull: code %d, %q, %s", code, out, errOut)
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	key := filepath.Join(dir, "cosign.pub")
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o644)
	out, errOut, code = wasmcp(t, "", "pull", "--key", key, ref)
	if code != 1 || out != "" || !strings.Contains(errOut, "unsigned") {
		t.Fatalf("pull --key of an unsigned image: code %d, %q, %s", code, out, errOut)
	}
	if _, errOut, code = wasmcp(t, "", "push", good, "https://example.com/x.wasm"); code != 2 {
		t.Fatalf("push to https: code %d, %s", code, errOut)
	}

	cfg := filepath.Join(dir, "wasmcp.toml")
	os.WriteFile(cfg, []byte(`
[server]
cache_dir = "cache"
[[plugins]]
name = "good"
url = "`+ref+`"
[plugins.grants]
kv = true
`), 0o644)
	_, errOut, code = wasmcp(t, "", "lock", "--config", cfg)
	if code != 0 || !strings.Contains(errOut, "wrote") {
		t.Fatalf("lock: code %d, %s", code, errOut)
	}
	lock, err := os.ReadFile(filepath.Join(dir, "wasmcp.lock"))
	if err != nil || !strings.Contains(string(lock), digest) || !strings.Contains(string(lock), "kv = true") {
		t.Fatalf("wasmcp.lock: %v\n%s", err, lock)
	}
}

// TestPullHTTPSCertFile: https:// plugins trust the system roots, and
// SSL_CERT_FILE replaces them.
func TestPullHTTPSCertFile(t *testing.T) {
	wasm, err := os.ReadFile("../../testdata/hostile/good.wasm")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(wasm) }))
	defer srv.Close()
	url := srv.URL + "/good.wasm"
	if _, errOut, code := wasmcp(t, "", "pull", url); code != 1 || !strings.Contains(errOut, "certificate") {
		t.Fatalf("pull from an untrusted server: code %d, %s", code, errOut)
	}
	pemFile := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(pemFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)
	t.Setenv("SSL_CERT_FILE", pemFile)
	out, errOut, code := wasmcp(t, "", "pull", url)
	if sum := sha256.Sum256(wasm); code != 0 || strings.TrimSpace(out) != "sha256:"+hex.EncodeToString(sum[:]) {
		t.Fatalf("pull with SSL_CERT_FILE: code %d, %q, %s", code, out, errOut)
	}
}

// TestComponentFromOCI: a component pushed to a real registry on
// loopback, in the layout Wassette's published components use (one
// application/wasm layer), is pulled by a url = "oci://..." plugin,
// detected as a component and served: tools/list has its WIT functions
// under Wassette's names, and a call answers, over stdio.
func TestComponentFromOCI(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	ref := "oci://" + strings.TrimPrefix(srv.URL, "http://") + "/acme/c-text:0.1.0"
	file, _ := filepath.Abs("../../testdata/components/c-text.wasm")
	if out, errOut, code := wasmcp(t, "", "push", file, ref); code != 0 || !strings.HasPrefix(strings.TrimSpace(out), "sha256:") {
		t.Fatalf("push: code %d, %q, %s", code, out, errOut)
	}
	c := newStdioClient(t, "--config", writeConfig(t, "[[plugins]]\nname = \"c-text\"\nurl = \""+ref+"\"\n"))
	// url plugins resolve behind the local ones: poll until it is served.
	var res json.RawMessage
	for deadline := time.Now().Add(30 * time.Second); ; {
		var e *rpcErr
		if res, e, _ = c.call("tools/list", map[string]any{}); e != nil {
			t.Fatal(e)
		}
		if strings.Contains(string(res), `"name":"greet"`) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, want := range []string{`"name":"greet"`, `"name":"add"`, `"name":"wasmcp_c-text_text_0_1_0_upper"`, `"description":"Greets someone by name."`} {
		if !strings.Contains(string(res), want) {
			t.Errorf("tools/list has no %s: %s", want, res)
		}
	}
	res, e, _ := c.call("tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 40}})
	if e != nil || !strings.Contains(string(res), "42") {
		t.Fatalf("add through the OCI component: %s %v", res, e)
	}
}
