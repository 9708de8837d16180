package runtime

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCachedValue: a value comes back as it was stored, across engines
// on one cache directory and key; one rewritten on disk, one moved under
// another name's file, one read with another key, and a truncated one
// are refused (and deleted); with the cache off nothing is kept.
func TestCachedValue(t *testing.T) {
	dir, key := t.TempDir(), filepath.Join(t.TempDir(), "key")
	var logs strings.Builder
	open := func(key string) *Engine {
		e, err := NewEngine(context.Background(), Config{CacheDir: dir, CacheKeyFile: key, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return e
	}
	e := open(key)
	if _, ok := e.CachedValue("a"); ok {
		t.Fatal("a value before any was stored")
	}
	e.CacheValue("a", []byte("alpha"))
	e.CacheValue("b", []byte("beta"))
	e.CacheValue("empty", nil)
	if v, ok := open(key).CachedValue("a"); !ok || string(v) != "alpha" {
		t.Fatalf("a: %q %v", v, ok)
	}
	if v, ok := e.CachedValue("empty"); !ok || len(v) != 0 {
		t.Fatalf("empty: %q %v", v, ok)
	}
	if _, ok := open(filepath.Join(t.TempDir(), "other")).CachedValue("a"); ok {
		t.Fatal("a value read back under another key")
	}
	for _, tc := range []struct {
		name   string
		damage func(a, b string)
	}{
		{"rewritten", func(a, _ string) {
			raw, _ := os.ReadFile(a)
			os.WriteFile(a, bytes.Replace(raw, []byte("alpha"), []byte("alphA"), 1), 0o600)
		}},
		{"another name's", func(a, b string) {
			raw, _ := os.ReadFile(b)
			os.WriteFile(a, raw, 0o600)
		}},
		{"truncated", func(a, _ string) {
			raw, _ := os.ReadFile(a)
			os.WriteFile(a, raw[:len(raw)-1], 0o600)
		}},
		{"not a file", func(a, _ string) {
			os.Remove(a)
			os.Mkdir(a, 0o700)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.CacheValue("a", []byte("alpha"))
			e.CacheValue("b", []byte("beta"))
			a := e.disk.valueFile("a")
			tc.damage(a, e.disk.valueFile("b"))
			if v, ok := e.CachedValue("a"); ok {
				t.Fatalf("a damaged value read back: %q", v)
			}
			if fi, err := os.Stat(a); err == nil && fi.Mode().IsRegular() {
				t.Error("a value that does not verify is kept")
			}
			os.Remove(a)
		})
	}
	if !strings.Contains(logs.String(), "does not verify") {
		t.Errorf("refusals not logged:\n%s", logs.String())
	}
	e.CacheValue("big", make([]byte, MaxCachedValue+1))
	if _, ok := e.CachedValue("big"); ok {
		t.Error("a value over MaxCachedValue stored")
	}
	off, err := NewEngine(context.Background(), Config{NoCache: true})
	if err != nil {
		t.Fatal(err)
	}
	defer off.Close(context.Background())
	off.CacheValue("a", []byte("x"))
	if _, ok := off.CachedValue("a"); ok {
		t.Error("a value kept with the cache off")
	}
}
