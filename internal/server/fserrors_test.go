package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGuestFSErrors: what a real guest's libc reports for file system
// operations it may not do. Writing under a read-only mount is EROFS
// ("Read-only file system"); a path outside every mount does not exist
// (ENOENT), and creating one directly under / is permission denied
// (EACCES), never "Bad file number" (EBADF, what Go and wasi-libc report
// when no preopened directory holds the path) or "Not implemented"
// (ENOSYS). / lists the mount points. Go (testdata/hostile/gofs) and C
// (testdata/hostile/sandbox, wasi-libc), each with /data mounted
// read-only and nothing else.
func TestGuestFSErrors(t *testing.T) {
	data := t.TempDir()
	if err := os.WriteFile(filepath.Join(data, "ok.txt"), []byte("fine"), 0o644); err != nil {
		t.Fatal(err)
	}
	mount := "fs = [{ host = " + quote(data) + `, guest = "/data" }]`
	toml := memKV + corpusTOML(t, "gofs", `prefix = "go_"`, "[plugins.grants]", mount) +
		corpusTOML(t, "sandbox", `prefix = "c_"`, "[plugins.grants]", mount)
	srv := newTestServer(t, toml)
	c := startSession(t, srv)

	goFS := func(op, path string) map[string]any {
		return map[string]any{"name": "go_fs", "arguments": map[string]any{"op": op, "path": path}}
	}
	cTool := func(tool, path string) map[string]any {
		return map[string]any{"name": "c_" + tool, "arguments": map[string]any{"path": path}}
	}
	const (
		erofs  = "Read-only file system"
		enoent = "No such file or directory"
		eacces = "Permission denied"
	)
	for _, tc := range []struct {
		name   string
		params map[string]any
		want   string
	}{
		{"go read inside", goFS("read", "/data/ok.txt"), "ok"},
		{"go create under the read-only mount", goFS("write", "/data/new.txt"), erofs + " (errno EROFS)"},
		{"go overwrite under the read-only mount", goFS("write", "/data/ok.txt"), erofs + " (errno EROFS)"},
		{"go append under the read-only mount", goFS("append", "/data/ok.txt"), erofs + " (errno EROFS)"},
		{"go mkdir under the read-only mount", goFS("mkdir", "/data/d"), erofs + " (errno EROFS)"},
		{"go remove under the read-only mount", goFS("remove", "/data/ok.txt"), erofs + " (errno EROFS)"},
		{"go rename under the read-only mount", goFS("rename", "/data/ok.txt"), erofs + " (errno EROFS)"},
		{"go symlink under the read-only mount", goFS("symlink", "/data/l"), erofs + " (errno EROFS)"},
		{"go truncate under the read-only mount", goFS("truncate", "/data/ok.txt"), erofs + " (errno EROFS)"},
		{"go read outside", goFS("read", "/etc/passwd"), enoent + " (errno ENOENT)"},
		{"go read outside through ..", goFS("read", "/data/../etc/passwd"), enoent + " (errno ENOENT)"},
		{"go list outside", goFS("list", "/etc"), enoent + " (errno ENOENT)"},
		{"go create outside", goFS("write", "/tmp/x"), enoent + " (errno ENOENT)"},
		{"go create under /", goFS("write", "/x"), eacces + " (errno EACCES)"},
		{"go mkdir under /", goFS("mkdir", "/x"), eacces + " (errno EACCES)"},
		{"go remove outside", goFS("remove", "/etc/passwd"), enoent + " (errno ENOENT)"},
		{"go rename outside", goFS("rename", "/etc/passwd"), enoent + " (errno ENOENT)"},
		{"go list /", goFS("list", "/"), "ok:data"},
		{"c read inside", cTool("read", "/data/ok.txt"), "ok:fine"},
		{"c create under the read-only mount", cTool("write", "/data/new.txt"), "error:" + erofs},
		{"c read outside", cTool("read", "/etc/passwd"), "error:" + enoent},
		{"c create outside", cTool("write", "/tmp/x"), "error:" + enoent},
		{"c create under /", cTool("write", "/x"), "error:" + eacces},
		{"c list outside", cTool("list", "/etc"), "error:" + enoent},
		{"c list /", cTool("list", "/"), "ok:.;..;data;"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := c.call("tools/call", tc.params)
			if r.Error != nil {
				t.Fatalf("error %+v", r.Error)
			}
			got := decodeTool(t, r).text()
			if !strings.HasSuffix(got, tc.want) {
				t.Errorf("got %q, want it to end in %q", got, tc.want)
			}
		})
	}
	if ents, err := os.ReadDir(data); err != nil || len(ents) != 1 {
		t.Errorf("the read-only mount holds %v (%v), want only ok.txt", ents, err)
	}
}
