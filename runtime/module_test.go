package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCompileRefusesUnknownImports(t *testing.T) {
	wasm, err := os.ReadFile(filepath.Join("testdata", "badimport.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = testEngine.Compile(context.Background(), "bad", wasm)
	var ie *ImportError
	if !errors.As(err, &ie) {
		t.Fatalf("err = %v, want *ImportError", err)
	}
	msg := err.Error()
	for _, want := range []string{"wasi_snapshot_preview1.sock_accept", "env.system", "wasmcp.http_fetch", "env.memory", "wasmcp.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not name %s", msg, want)
		}
	}
	if strings.Contains(msg, "fd_write") {
		t.Errorf("message %q names the allowed fd_write", msg)
	}
	if len(ie.Unknown) != 4 || len(ie.Mismatched) != 1 {
		t.Errorf("unknown = %v, mismatched = %v", ie.Unknown, ie.Mismatched)
	}
}

func TestCompileRefusesBadModules(t *testing.T) {
	tests := []struct {
		name string
		wasm func() []byte
		want string
	}{
		{"no entry point", file(t, "noentry.wasm"), "neither wasmcp_call nor _start"},
		{"no memory", file(t, "nomemory.wasm"), "does not export memory"},
		{"not wasm", func() []byte { return []byte("hello") }, "invalid wasm module"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := testEngine.Compile(context.Background(), tt.name, tt.wasm())
			e := callErr(t, err, KindBadModule)
			if !strings.Contains(e.Message, tt.want) {
				t.Errorf("message %q, want %q", e.Message, tt.want)
			}
		})
	}
}

func file(t *testing.T, name string) func() []byte {
	return func() []byte {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}

func TestCompileDetectsMode(t *testing.T) {
	tests := []struct {
		path string
		mode Mode
	}{
		{watGuest, Reactor},
		{watCmd, Command},
		{goPlugin, Reactor},
		{goCommand, Command},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			m := fixture(t, tt.path)
			if m.Mode() != tt.mode {
				t.Errorf("mode = %v, want %v", m.Mode(), tt.mode)
			}
			if m.Size() == 0 || m.Name() != tt.path || len(m.Imports()) == 0 {
				t.Errorf("size %d, name %q, imports %v", m.Size(), m.Name(), m.Imports())
			}
			want := "wasmcp_call"
			if tt.mode == Command {
				want = "_start"
			}
			if !slices.Contains(m.Exports(), want) {
				t.Errorf("exports %v lack %s", m.Exports(), want)
			}
		})
	}
}

func TestNewPoolChecksMinimumMemory(t *testing.T) {
	m := fixture(t, "bigmemory.wasm")
	if _, err := m.NewPool(Limits{Memory: 1 << 20}, Sandbox{}); err == nil {
		t.Fatal("NewPool with 1 MiB accepted a module that needs 4 MiB")
	}
	p, err := m.NewPool(Limits{Memory: 4 << 20}, Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	_ = p.Close(context.Background())
}

func TestCacheDirIsPrivateAndVersioned(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	e, err := NewEngine(context.Background(), Config{CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o700 {
		t.Errorf("cache dir mode %v, want 0700", st.Mode().Perm())
	}
	if _, err := os.Stat(filepath.Join(dir, "wazero-"+wazeroVersion())); err != nil {
		t.Errorf("no versioned subdirectory: %v", err)
	}
	if v := wazeroVersion(); v == "unknown" || v == "" {
		t.Errorf("wazero version %q", v)
	}
}

func TestEngineCloseClosesPools(t *testing.T) {
	e, m, p := closableGuest(t, Limits{})
	if _, _, err := p.Call(context.Background(), []byte("e"), nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, _, err := p.Call(context.Background(), []byte("e"), nil, nil)
	callErr(t, err, KindClosed)
	if _, err := e.Compile(context.Background(), "g", file(t, watGuest)()); err == nil {
		t.Error("Compile after Close succeeded")
	}
	if _, err := m.NewPool(Limits{}, Sandbox{}); err == nil {
		t.Error("NewPool after Close succeeded")
	}
}
