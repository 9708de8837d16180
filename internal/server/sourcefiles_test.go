package server

import (
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPluginDirHostileEntries: a plugin directory whose *.wasm entries
// are a symbolic link to /dev/zero and to /dev/urandom, a FIFO, a 64 GiB
// and a 1.5 GiB sparse file is looked at before it is read: each bad
// entry is refused by name without blocking and without reading it, the
// good plugin (and a symbolic link to a regular file) is served, and
// start-up allocates far less than one of the files. Before, /dev/zero
// grew the heap without bound, the FIFO blocked the load forever, the
// 64 GiB file killed the process with "out of memory" and the 1.5 GiB
// one was read whole before the size limit refused it.
func TestPluginDirHostileEntries(t *testing.T) {
	dir := t.TempDir()
	good := copyCorpus(t, "good", t.TempDir(), "good")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(good, filepath.Join(dir, "linked.wasm")))
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero.wasm")))
	must(os.Symlink("/dev/urandom", filepath.Join(dir, "urandom.wasm")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo.wasm"), 0o600))
	for name, size := range map[string]int64{"sparse64g.wasm": 64 << 30, "sparse1g.wasm": 3 << 29} {
		f, err := os.Create(filepath.Join(dir, name))
		must(err)
		must(f.Truncate(size))
		must(f.Close())
	}
	var logs logBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var before, after goruntime.MemStats
	goruntime.ReadMemStats(&before)
	began := time.Now()
	srv, err := buildServer(t, memKV+"plugin_dirs = ["+quote(dir)+"]\n", ".", Options{Version: "test", Logger: log})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	c := startSession(t, srv)
	elapsed := time.Since(began)
	goruntime.ReadMemStats(&after)
	r := c.call("tools/list", map[string]any{})
	if r.Error != nil || !strings.Contains(string(r.Result), `"echo"`) {
		t.Fatalf("tools/list: %s %+v", r.Result, r.Error)
	}
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "served"}))); got.IsError || got.text() != "served" {
		t.Fatalf("good plugin: %+v", got)
	}
	for _, want := range [][]string{
		{"zero.wasm", "not a regular file", "character device"},
		{"urandom.wasm", "not a regular file", "character device"},
		{"fifo.wasm", "not a regular file", "FIFO"},
		{"sparse64g.wasm", "over the module-size limit", "68719476736 bytes"},
		{"sparse1g.wasm", "over the module-size limit", "1610612736 bytes"},
	} {
		logs.waitLog(t, want...)
	}
	if strings.Contains(logs.String(), "linked.wasm") {
		t.Errorf("a symbolic link to a regular plugin file was refused:\n%s", logs.String())
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("start-up with the hostile entries: %v, %d MiB allocated", elapsed.Round(time.Millisecond), alloc>>20)
	if alloc > 512<<20 {
		t.Errorf("start-up allocated %d MiB: a refused file was read", alloc>>20)
	}
}
