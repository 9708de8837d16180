package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestCacheKey: the cache key is created 0600 on first use, shared by
// concurrent first uses, refused inside the cache directory or when
// others may read it (the engine then runs without the on-disk cache and
// says why), and entries sealed under one key do not verify under
// another.
func TestCacheKey(t *testing.T) {
	dir := t.TempDir()
	keyFile := filepath.Join(t.TempDir(), "sub", "cache.key")
	var wg sync.WaitGroup
	keys := make([][]byte, 8)
	errs := make([]error, 8)
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = loadCacheKey(keyFile) })
	}
	wg.Wait()
	for i := range keys {
		if errs[i] != nil || !bytes.Equal(keys[i], keys[0]) || len(keys[i]) != 32 {
			t.Fatalf("concurrent first use %d: %x, %v (first %x)", i, keys[i], errs[i], keys[0])
		}
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi.Mode(), err)
	}

	engine := func(t *testing.T, cacheDir, key string) (*Engine, string) {
		var logs bytes.Buffer
		e, err := NewEngine(context.Background(), Config{CacheDir: cacheDir, CacheKeyFile: key, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = e.Close(context.Background()) })
		return e, logs.String()
	}
	t.Run("inside the cache directory", func(t *testing.T) {
		e, logs := engine(t, dir, filepath.Join(dir, "keys", "cache.key"))
		if e.disk != nil || !strings.Contains(logs, "inside the cache directory") {
			t.Errorf("disk cache %v; log %s", e.disk != nil, logs)
		}
	})
	t.Run("readable by others", func(t *testing.T) {
		k := filepath.Join(t.TempDir(), "cache.key")
		if err := os.WriteFile(k, bytes.Repeat([]byte{1}, 32), 0o644); err != nil {
			t.Fatal(err)
		}
		e, logs := engine(t, dir, k)
		if e.disk != nil || !strings.Contains(logs, "accessible to others") {
			t.Errorf("disk cache %v; log %s", e.disk != nil, logs)
		}
	})
	t.Run("another key", func(t *testing.T) {
		wasm := file(t, watGuest)()
		first, _ := engine(t, dir, keyFile)
		if _, err := first.Compile(context.Background(), "guest", wasm); err != nil {
			t.Fatal(err)
		}
		var logs bytes.Buffer
		other, err := NewEngine(context.Background(), Config{CacheDir: dir, CacheKeyFile: filepath.Join(t.TempDir(), "k"), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close(context.Background())
		m, err := other.Compile(context.Background(), "guest", wasm)
		if err != nil {
			t.Fatal(err)
		}
		if m.cached || !strings.Contains(logs.String(), "MAC mismatch") {
			t.Errorf("cached %v under another key; log %s", m.cached, logs.String())
		}
	})
}

// FuzzSealedEntry: whatever a sealed entry holds, reading it never
// panics and never places anything that was not sealed under the key.
func FuzzSealedEntry(f *testing.F) {
	f.Add([]byte(sealMagic + "\x00\x00\x00\x00\x00\x00\x00\x00" + strings.Repeat("\x00", 32)))
	f.Add([]byte(sealMagic + "\x04\x00\x00\x00\x00\x00\x00\x00" + strings.Repeat("\x00", 32) + "WAZE"))
	f.Add([]byte("WAZEVO\x07v1.12.0\xff\xff\xff\xff"))
	key := filepath.Join(f.TempDir(), "cache.key")
	f.Fuzz(func(t *testing.T, entry []byte) {
		root := t.TempDir()
		c, err := newDiskCache(root, root, key, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		defer c.close()
		c.files = c.work
		names := c.names([]byte("module"), false)
		if err := os.WriteFile(filepath.Join(c.sealed, names[0].String()), entry, 0o600); err != nil {
			t.Fatal(err)
		}
		if c.place("fuzz", names) {
			t.Fatalf("placed an entry not sealed under the key: %q", entry)
		}
		if _, err := os.Stat(filepath.Join(c.sealed, names[0].String())); err == nil {
			t.Error("the entry that does not verify was kept")
		}
	})
}

// TestCacheEviction: the sealed entries on disk stay within the cache's
// byte budget: sealing past it deletes the least recently used ones
// (a hit renews an entry), so the module compiled last is kept.
func TestCacheEviction(t *testing.T) {
	dir, key := t.TempDir(), filepath.Join(t.TempDir(), "cache.key")
	entries := func(e *Engine) map[string]int64 {
		ents, err := os.ReadDir(e.disk.sealed)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]int64{}
		for _, de := range ents {
			fi, err := de.Info()
			if err != nil {
				t.Fatal(err)
			}
			out[de.Name()] = fi.Size()
		}
		return out
	}
	compile := func(e *Engine, module string) bool {
		m, err := e.Compile(context.Background(), module, file(t, module)())
		if err != nil {
			t.Fatal(err)
		}
		return m.cached
	}
	first, _ := NewEngine(context.Background(), Config{CacheDir: dir, CacheKeyFile: key})
	defer first.Close(context.Background())
	compile(first, watGuest)
	one := entries(first)
	if len(one) != 1 {
		t.Fatalf("entries after one compile: %v", one)
	}
	var guest string
	var size int64
	for n, s := range one {
		guest, size = n, s
	}
	first.disk.max = size // room for this entry alone
	compile(first, watCmd)
	two := entries(first)
	if _, ok := two[guest]; ok || len(two) != 1 {
		t.Errorf("entries past the budget: %v (the oldest, %s, should be gone)", two, guest)
	}

	second, _ := NewEngine(context.Background(), Config{CacheDir: dir, CacheKeyFile: key})
	defer second.Close(context.Background())
	second.disk.max = first.disk.max
	if compile(second, watGuest) {
		t.Error("the evicted module was a cache hit")
	}
	if _, ok := entries(second)[guest]; !ok {
		t.Errorf("the module compiled last was not kept: %v", entries(second))
	}
}
