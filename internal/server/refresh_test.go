package server

import (
	"strings"
	"testing"
	"time"
)

// withCustomSection returns wasm with a custom section appended: a valid
// module with other bytes (another build of the same plugin).
func withCustomSection(wasm []byte, name string) []byte {
	sec := append(append([]byte{byte(len(name))}, name...), "payload"...)
	return append(append(append([]byte(nil), wasm...), 0, byte(len(sec))), sec...)
}

func pluginSHA(srv *Server, name string) string {
	for _, p := range srv.Registry().Plugins() {
		if p.Name() == name {
			return p.SHA256()
		}
	}
	return ""
}

// TestURLRefresh: with watch and refresh, a tag that moves to a signed
// build is loaded; one that moves to an unsigned build is refused and the
// verified version keeps serving.
func TestURLRefresh(t *testing.T) {
	e := newURLEnv(t)
	dir := t.TempDir()
	key := newKey(t, dir, "cosign.pub")
	e.signTag(t, "good", e.digest, e.digest, key)
	srv, logs := e.serve(t, dir, `
[server]
kv_dir = ":memory:"
cache_dir = "cache"
watch = true
[[plugins]]
name = "fresh"
url = "oci://{{host}}/good:1"
refresh = "100ms"
[plugins.verify]
key = "cosign.pub"
`)
	first := pluginSHA(srv, "fresh")
	if first == "" {
		t.Fatalf("not loaded:\n%s", logs)
	}
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s:\n%s", what, logs)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	v2 := withCustomSection(e.wasm, "v2")
	d2 := e.push(t, "good:1", v2)
	e.signTag(t, "good", d2, d2, key)
	wait("signed new build loaded", func() bool { s := pluginSHA(srv, "fresh"); return s != "" && s != first })
	second := pluginSHA(srv, "fresh")
	if err := echo(t, srv, "echo"); err != nil {
		t.Fatal(err)
	}

	e.push(t, "good:1", withCustomSection(e.wasm, "v3-unsigned"))
	wait("unsigned build refused", func() bool { return strings.Contains(logs.String(), "unsigned: no cosign signature") })
	if got := pluginSHA(srv, "fresh"); got != second {
		t.Fatalf("serving %s after an unsigned tag move, want %s", got, second)
	}
	if err := echo(t, srv, "echo"); err != nil {
		t.Fatal(err)
	}
}
