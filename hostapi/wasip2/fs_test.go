package wasip2

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	cm "github.com/wasmcp/wasmcp/internal/component"
)

const desc = "wasi:filesystem/types#[method]descriptor."

// fsState makes a State with two mounts of fresh directories: /data
// read-write and /ro read-only, and a file outside both.
func fsState(t *testing.T) (st *State, data, ro uint32, dataDir string) {
	t.Helper()
	base := t.TempDir()
	dataDir, roDir := filepath.Join(base, "data"), filepath.Join(base, "ro")
	for _, d := range []string{dataDir, roDir, filepath.Join(dataDir, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(base, "secret"), "outside")
	write(filepath.Join(dataDir, "a.txt"), "hello")
	write(filepath.Join(roDir, "r.txt"), "read me")
	if err := os.Symlink(filepath.Join(base, "secret"), filepath.Join(dataDir, "out")); err != nil {
		t.Fatal(err)
	}
	open := func(p string) *os.Root {
		r, err := os.OpenRoot(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close() })
		return r
	}
	st = New(Options{Mounts: []Mount{{Root: open(dataDir), Guest: "/data"}, {Root: open(roDir), Guest: "/ro", ReadOnly: true}},
		Limits: Limits{MaxRead: 4}})
	t.Cleanup(func() { st.Close() })
	dirs := mustCall(t, st, "wasi:filesystem/preopens#get-directories").([]any)
	if len(dirs) != 2 || dirs[0].([]any)[1] != "/data" || dirs[1].([]any)[1] != "/ro" {
		t.Fatalf("preopens %v", dirs)
	}
	return st, dirs[0].([]any)[0].(uint32), dirs[1].([]any)[0].(uint32), dataDir
}

var (
	follow = []string{"symlink-follow"}
	none   = []string{}
	rd     = []string{"read"}
	rw     = []string{"read", "write"}
)

// fsOK returns the ok value of a filesystem result, failing on an err.
func fsOK(t *testing.T, v any) any {
	t.Helper()
	r, ok := v.(cm.ResultValue)
	if !ok || r.Err {
		t.Fatalf("want ok, got %#v", v)
	}
	return r.Value
}

// fsCode returns the error-code of a failed filesystem result.
func fsCode(v any) string {
	if r, ok := v.(cm.ResultValue); ok && r.Err {
		s, _ := r.Value.(string)
		return s
	}
	return ""
}

func TestFilesystem(t *testing.T) {
	st, data, ro, dataDir := fsState(t)
	f := fsOK(t, mustCall(t, st, desc+"open-at", data, follow, "a.txt", none, rd)).(uint32)
	// Reads are bounded by MaxRead (4): two reads, then the end.
	got := fsOK(t, mustCall(t, st, desc+"read", f, uint64(1)<<40, uint64(0))).([]any)
	if string(got[0].([]byte)) != "hell" || got[1] != false {
		t.Fatalf("read %v", got)
	}
	got = fsOK(t, mustCall(t, st, desc+"read", f, uint64(100), uint64(4))).([]any)
	if string(got[0].([]byte)) != "o" || got[1] != true {
		t.Fatalf("read at 4: %v", got)
	}
	if s := fsOK(t, mustCall(t, st, desc+"stat", f)).(map[string]any); s["type"] != "regular-file" || s["size"] != uint64(5) {
		t.Fatalf("stat %v", s)
	}
	if c := fsCode(mustCall(t, st, desc+"write", f, []byte("x"), uint64(0))); c != "bad-descriptor" {
		t.Fatalf("write on a read-only descriptor: %q", c)
	}

	// Refusals: out of the mount, however it is named.
	for _, p := range []string{"../secret", "/etc/passwd", "sub/../../secret", "out"} {
		if c := fsCode(mustCall(t, st, desc+"open-at", data, follow, p, none, rd)); c != "not-permitted" {
			t.Errorf("open-at %q: %q, want not-permitted", p, c)
		}
	}
	if c := fsCode(mustCall(t, st, desc+"open-at", data, none, "out", none, rd)); c != "loop" {
		t.Errorf("open-at of a symlink without symlink-follow: %q", c)
	}
	if c := fsCode(mustCall(t, st, desc+"symlink-at", data, "/etc", "etc")); c != "not-permitted" {
		t.Errorf("symlink-at: %q", c)
	}
	// A read-only mount: reads work, every change is read-only.
	r := fsOK(t, mustCall(t, st, desc+"open-at", ro, follow, "r.txt", none, rd)).(uint32)
	if got := fsOK(t, mustCall(t, st, desc+"read", r, uint64(4), uint64(0))).([]any); string(got[0].([]byte)) != "read" {
		t.Fatalf("read-only mount read: %v", got)
	}
	for _, c := range []struct {
		name string
		args []any
	}{
		{"open-at", []any{ro, follow, "r.txt", none, rw}},
		{"open-at", []any{ro, follow, "new", []string{"create"}, rd}},
		{"create-directory-at", []any{ro, "d"}},
		{"unlink-file-at", []any{ro, "r.txt"}},
		{"rename-at", []any{ro, "r.txt", ro, "s.txt"}},
		{"set-times-at", []any{ro, follow, "r.txt", cm.Case{Name: "now"}, cm.Case{Name: "no-change"}}},
	} {
		if code := fsCode(mustCall(t, st, desc+c.name, c.args...)); code != "read-only" {
			t.Errorf("%s on a read-only mount: %q", c.name, code)
		}
	}
	if fl := fsOK(t, mustCall(t, st, desc+"get-flags", ro)); !slices.Equal(fl.([]string), []string{"read"}) {
		t.Errorf("read-only preopen flags %v", fl)
	}

	// A read-write mount: create, write (directly and through streams),
	// list, rename, remove.
	n := fsOK(t, mustCall(t, st, desc+"open-at", data, follow, "sub/new.txt", []string{"create", "exclusive"}, rw)).(uint32)
	if k := fsOK(t, mustCall(t, st, desc+"write", n, []byte("abc"), uint64(0))); k != uint64(3) {
		t.Fatalf("write = %v", k)
	}
	w := fsOK(t, mustCall(t, st, desc+"append-via-stream", n)).(uint32)
	mustCall(t, st, "wasi:io/streams#[method]output-stream.blocking-write-and-flush", w, []byte("def"))
	in := fsOK(t, mustCall(t, st, desc+"read-via-stream", n, uint64(2))).(uint32)
	if b := fsOK(t, mustCall(t, st, "wasi:io/streams#[method]input-stream.read", in, uint64(100))); string(b.([]byte)) != "cdef" {
		t.Fatalf("read-via-stream: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dataDir, "sub", "new.txt")); string(b) != "abcdef" {
		t.Fatalf("on disk: %q", b)
	}
	if c := fsCode(mustCall(t, st, desc+"open-at", data, follow, "sub/new.txt", []string{"create", "exclusive"}, rw)); c != "exist" {
		t.Fatalf("exclusive create of an existing file: %q", c)
	}
	sub := fsOK(t, mustCall(t, st, desc+"open-at", data, follow, "sub", []string{"directory"}, rd)).(uint32)
	ds := fsOK(t, mustCall(t, st, desc+"read-directory", sub)).(uint32)
	var names []string
	for range 10 {
		e := fsOK(t, mustCall(t, st, "wasi:filesystem/types#[method]directory-entry-stream.read-directory-entry", ds))
		if e == nil {
			break
		}
		ent := e.(cm.Some).Value.(map[string]any)
		names = append(names, ent["name"].(string)+":"+ent["type"].(string))
	}
	if !slices.Equal(names, []string{"new.txt:regular-file"}) {
		t.Fatalf("directory entries %v", names)
	}
	fsOK(t, mustCall(t, st, desc+"rename-at", sub, "new.txt", data, "moved.txt"))
	if c := fsCode(mustCall(t, st, desc+"rename-at", data, "moved.txt", ro, "x")); c != "cross-device" {
		t.Fatalf("rename across mounts: %q", c)
	}
	if c := fsCode(mustCall(t, st, desc+"remove-directory-at", data, "moved.txt")); c != "not-directory" {
		t.Fatalf("remove-directory-at a file: %q", c)
	}
	fsOK(t, mustCall(t, st, desc+"unlink-file-at", data, "moved.txt"))
	fsOK(t, mustCall(t, st, desc+"remove-directory-at", data, "sub"))
	if _, err := os.Stat(filepath.Join(dataDir, "sub")); !os.IsNotExist(err) {
		t.Fatalf("sub still there: %v", err)
	}
	if c := fsCode(mustCall(t, st, desc+"stat-at", data, follow, "sub")); c != "no-entry" {
		t.Fatalf("stat-at of a removed directory: %q", c)
	}
	if mustCall(t, st, desc+"is-same-object", data, data) != true || mustCall(t, st, desc+"is-same-object", data, ro) != false {
		t.Fatal("is-same-object")
	}
}

func TestFilesystemBadInput(t *testing.T) {
	ctx := context.Background()
	st, data, _, _ := fsState(t)
	p := mustCall(t, st, "wasi:clocks/monotonic-clock#subscribe-duration", uint64(1))
	for _, c := range []struct {
		name string
		args []any
	}{
		{desc + "stat", []any{p}},                               // a pollable as a descriptor
		{desc + "stat", []any{uint32(12345)}},                   // not live
		{desc + "open-at", []any{data, follow, 7, none, rd}},    // a path that is not a string
		{desc + "open-at", []any{data, "x", "a.txt", none, rd}}, // flags that are not flags
		{desc + "set-times", []any{data, cm.Case{Name: "bogus"}, cm.Case{Name: "now"}}},
		{desc + "rename-at", []any{data, "a.txt", p, "b"}},           // a pollable as the new directory
		{"wasi:filesystem/types#filesystem-error-code", []any{data}}, // a descriptor as an error
	} {
		if v, err := call(ctx, st, c.name, c.args...); err == nil {
			t.Errorf("%s%v = %v, want a trap", c.name, c.args, v)
		}
	}
	if c := fsCode(mustCall(t, st, desc+"open-at", data, follow, "a\x00b", none, rd)); c != "not-permitted" {
		t.Errorf("a NUL in a path: %q", c)
	}
}
