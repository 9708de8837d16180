package server

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/config"
)

// hostileDir holds the hostile-plugin corpus (testdata/hostile/README.md).
const hostileDir = "../../testdata/hostile"

// hostilePath returns the absolute path of corpus module name.wasm.
func hostilePath(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(hostileDir, name+".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNewRefusesBrokenPlugin: a [[plugins]] entry that cannot load makes
// New return an error naming the problem (it used to panic on a nil
// *Server in its own cleanup).
func TestNewRefusesBrokenPlugin(t *testing.T) {
	cfg, err := config.Parse([]byte(`
[server]
kv_dir = ":memory:"
[[plugins]]
name = "socket"
path = `+quote(hostilePath(t, "socket"))+`
`), ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.CacheDir = testCacheDir(t)
	srv, err := New(context.Background(), cfg, Options{})
	if err == nil {
		srv.Close(context.Background())
		t.Fatal("New loaded a plugin that imports sockets")
	}
	for _, want := range []string{"wasi_snapshot_preview1.sock_accept", "wasi_snapshot_preview1.sock_recv"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
