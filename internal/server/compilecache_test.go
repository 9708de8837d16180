package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// TestCompileCacheUntrusted: the compilation cache directory is
// untrusted. An entry of the runaway plugin rewritten on disk (bytes
// flipped, truncated, its function count set to 2^32-1, replaced by
// another module's entry with wazero's checksum adjusted, replaced by a
// FIFO or a symbolic link to /dev/zero) is discarded with a log line
// naming the plugin, and the plugin is compiled again: it runs
// instrumented (its guest time is counted, the fallback runtime's
// warning is not logged), its busy loop is stopped at the deadline, the
// good plugin answers, nothing runs out of memory, and the next start
// finds a good entry again.
func TestCompileCacheUntrusted(t *testing.T) {
	// A key of the test's own, outside every cache directory.
	t.Setenv("WASMCP_CACHE_KEY", filepath.Join(t.TempDir(), "cache.key"))
	good, runaway := pluginTOML("good", hostilePath(t, "good")), pluginTOML("runaway", hostilePath(t, "runaway"), `timeout = "1s"`)

	// The entries of the good plugin alone, then those runaway adds.
	primed := t.TempDir()
	startCached(t, primed, good).close()
	goodEntries := cacheEntries(t, primed)
	startCached(t, primed, good+runaway).close()
	var runawayEntries []string
	for _, p := range cacheEntries(t, primed) {
		if !slices.Contains(goodEntries, p) {
			runawayEntries = append(runawayEntries, p)
		}
	}
	if len(goodEntries) == 0 || len(runawayEntries) == 0 {
		t.Fatalf("entries: good %q, runaway %q", goodEntries, runawayEntries)
	}

	tests := []struct {
		name    string
		corrupt func(t *testing.T, entry, other string)
	}{
		{"bytes flipped", func(t *testing.T, entry, _ string) {
			rewrite(t, entry, func(b []byte) []byte {
				for i := len(b) / 2; i < len(b)/2+16; i++ {
					b[i] ^= 0xff
				}
				return b
			})
		}},
		{"truncated", func(t *testing.T, entry, _ string) {
			rewrite(t, entry, func(b []byte) []byte { return b[:len(b)/2] })
		}},
		{"function count 2^32-1", func(t *testing.T, entry, _ string) {
			rewrite(t, entry, func(b []byte) []byte {
				at := wazevoHeader(t, b)
				binary.LittleEndian.PutUint32(b[at-4:at], 0xffffffff)
				return b
			})
		}},
		{"another module's entry, checksum adjusted", func(t *testing.T, entry, other string) {
			b, err := os.ReadFile(other)
			if err != nil {
				t.Fatal(err)
			}
			// Change one byte of the other module's native code and
			// adjust wazero's CRC, as an attacker writing code would.
			at := wazevoHeader(t, b)
			n := int(binary.LittleEndian.Uint32(b[at-4 : at]))
			codeLen := int(binary.LittleEndian.Uint64(b[at+8*n:]))
			code := b[at+8*n+8 : at+8*n+8+codeLen]
			code[len(code)/2] ^= 1
			binary.LittleEndian.PutUint32(b[at+8*n+8+codeLen:], crc32.Checksum(code, crc32.MakeTable(crc32.Castagnoli)))
			if err := os.WriteFile(entry, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"a FIFO", func(t *testing.T, entry, _ string) {
			if err := os.Remove(entry); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(entry, 0o600); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}},
		{"a link to /dev/zero", func(t *testing.T, entry, _ string) {
			if err := os.Remove(entry); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("/dev/zero", entry); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			copyTree(t, primed, dir)
			rel := func(p string) string {
				r, err := filepath.Rel(primed, p)
				if err != nil {
					t.Fatal(err)
				}
				return filepath.Join(dir, r)
			}
			for _, p := range runawayEntries {
				tc.corrupt(t, rel(p), rel(goodEntries[0]))
			}

			s := startCached(t, dir, good+runaway)
			s.check(t)
			logs := s.close()
			if !strings.Contains(logs, "compilation cache: entry does not verify; discarded") || !strings.Contains(logs, "plugin=runaway") {
				t.Errorf("no log line says the entry was discarded for runaway:\n%s", logs)
			}

			// Compiled again and stored: the next start finds it whole.
			s = startCached(t, dir, good+runaway)
			s.check(t)
			if logs := s.close(); strings.Contains(logs, "does not verify") {
				t.Errorf("the recompiled entry does not verify on the next start:\n%s", logs)
			}
		})
	}
}

// cachedServer is a server on a given compilation cache directory.
type cachedServer struct {
	srv  *Server
	c    *stdioClient
	logs *testutil.Buffer
	done bool
}

// startCached starts a server of plugins on the compilation cache dir,
// with a 1 s deadline for runaway, logging into a buffer.
func startCached(t *testing.T, dir, plugins string) *cachedServer {
	t.Helper()
	cfg, err := config.Parse([]byte(memKV+"[limits]\ntimeout = \"5s\"\nmemory = \"16MiB\"\n"+plugins), ".")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.CacheDir = dir
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	logs := &testutil.Buffer{Max: 1 << 20}
	srv, err := New(context.Background(), cfg, Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("New: %v\n%s", err, logs)
	}
	s := &cachedServer{srv: srv, logs: logs}
	t.Cleanup(func() { s.close() })
	return s
}

// check: the good plugin echoes, runaway's busy loop is stopped at its
// deadline after running instrumented.
func (s *cachedServer) check(t *testing.T) {
	t.Helper()
	c := startSession(t, s.srv)
	r := c.call("tools/call", tool("echo", map[string]any{"text": "hi"}))
	if r.Error != nil || !strings.Contains(string(r.Result), "hi") {
		t.Errorf("echo: %s %+v", r.Result, r.Error)
	}
	r = c.call("tools/call", tool("spin", nil))
	if r.Error == nil || r.Error.Code != -32001 {
		t.Errorf("spin: %s %+v, want -32001", r.Result, r.Error)
	}
	for _, p := range s.srv.Registry().Plugins() {
		if p.Name() == "runaway" && p.Stats().GuestCPU == 0 {
			t.Error("runaway ran no instrumented guest time: it is not instrumented")
		}
	}
	if logs := s.logs.String(); strings.Contains(logs, "not instrumented") {
		t.Errorf("a plugin runs uninstrumented:\n%s", logs)
	}
}

// close closes the server once and returns its log.
func (s *cachedServer) close() string {
	if !s.done {
		s.done = true
		s.srv.Close(context.Background())
	}
	return s.logs.String()
}

// cacheEntries lists the files under dir that hold wazero's native code
// (its header, "WAZEVO", in their first 64 bytes), sorted.
func cacheEntries(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		head := make([]byte, 64)
		n, _ := f.Read(head)
		if bytes.Contains(head[:n], []byte("WAZEVO")) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// wazevoHeader returns the offset just past wazero's header in entry b
// ("WAZEVO", the version's length and text, the function count).
func wazevoHeader(t *testing.T, b []byte) int {
	t.Helper()
	i := bytes.Index(b, []byte("WAZEVO"))
	if i < 0 || i+7 > len(b) {
		t.Fatal("no wazero header")
	}
	return i + 7 + int(b[i+6]) + 4
}

// rewrite replaces the file at p with f of its content.
func rewrite(t *testing.T, p string, f func([]byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, f(b), 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyTree copies the regular files and directories under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, r)
		if d.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}
