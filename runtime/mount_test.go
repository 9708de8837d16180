package runtime

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMountsConfined: neither "..", nor a symlink inside a mount, nor one
// the plugin creates in a read-write mount reaches a file outside it;
// symlinks that stay inside work.
func TestMountsConfined(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.txt")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(secret, []byte("TOP SECRET"), 0o644))
	var mounts []Mount
	for _, name := range []string{"ro", "rw"} {
		m := filepath.Join(dir, name)
		must(os.MkdirAll(filepath.Join(m, "sub"), 0o755))
		must(os.WriteFile(filepath.Join(m, "sub", "in.txt"), []byte("inside"), 0o644))
		must(os.Symlink("../secret.txt", filepath.Join(m, "rel")))
		must(os.Symlink(secret, filepath.Join(m, "abs")))
		must(os.Symlink("..", filepath.Join(m, "up")))
		must(os.Symlink("sub", filepath.Join(m, "in")))
		mounts = append(mounts, Mount{HostPath: m, GuestPath: "/" + name, ReadOnly: name == "ro"})
	}
	p := newPool(t, goPlugin, Limits{}, Sandbox{Mounts: mounts})
	read := func(path string) (data, readErr, writeErr string) { return readFile(t, p, path) }
	for _, m := range []string{"/ro", "/rw"} {
		for _, path := range []string{m + "/rel", m + "/abs", m + "/up/secret.txt", m + "/../secret.txt", m + "/sub/../../secret.txt"} {
			if data, readErr, _ := read(path); data != "" || readErr == "" {
				t.Errorf("%s: read %q (error %q), want an error", path, data, readErr)
			}
		}
		if data, readErr, _ := read(m + "/in/in.txt"); data != "inside" {
			t.Errorf("%s/in/in.txt (a symlink inside): %q, %s", m, data, readErr)
		}
	}
	// Writing through an escaping symlink of a read-write mount: refused,
	// and nothing appears next to the secret.
	if _, _, writeErr := read("/rw/up/secret.txt"); writeErr == "" {
		t.Error("wrote through /rw/up")
	}
	if _, err := os.Stat(secret + ".new"); err == nil {
		t.Error("a file appeared outside the mount")
	}
	if _, _, writeErr := read("/rw/sub/in.txt"); writeErr != "" {
		t.Errorf("read-write mount not writable: %s", writeErr)
	}

	// A plugin that creates its own way out of a read-write mount.
	rp := hostilePool(t, "rawfs", Limits{}, mounts[1])
	_, out, err := rp.Call(context.Background(), []byte(`{"method":"tools/call","params":{"name":"mklink"}}`), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "read:") || !strings.Contains(string(out), "symlink errno 63") {
		t.Errorf("path_symlink out of the mount: %s, want errno 63 (EPERM) and nothing read", out)
	}
	if _, err := os.Lstat(filepath.Join(mounts[1].HostPath, "esc")); err == nil {
		t.Error("the plugin created a symlink in the mount")
	}
}
