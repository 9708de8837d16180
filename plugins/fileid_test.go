//go:build linux

package plugins

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKnownDigest: a new plugin whose module file is the one read at the
// last start is listed from its cached manifest by the digest kept then,
// before its module is read; a file replaced since, or changed within
// the last two seconds, is read and hashed first; a kept digest that
// does not match the file (the worst a stale one can do) is listed only
// until the load's own answer replaces it.
func TestKnownDigest(t *testing.T) {
	e := newEarlyEnv(t)
	spec := e.spec(earlyM1)
	reg := e.registry(t, nil)
	d := reg.deps()

	// A file changed just now has no identity.
	if err := reg.Load(context.Background(), []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	if got, _ := knownDigest(d, e.path); got != "" {
		t.Fatalf("a digest kept for a file changed just now: %s", got)
	}

	defer func(s time.Duration) { settled = s }(settled)
	settled = 0
	reg = e.registry(t, nil)
	if err := reg.Load(context.Background(), []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	d = reg.deps()
	if got, size := knownDigest(d, e.path); got != digestOf(e.wasm) || size != int64(len(e.wasm)) {
		t.Fatalf("kept digest %q (size %d), want %s (%d)", got, size, digestOf(e.wasm), len(e.wasm))
	}
	reg = e.registry(t, nil)
	listed, early, release := e.loadHeld(t, reg, []Spec{spec})
	if listed != "ok,relie" || !early {
		t.Fatalf("listed %q (early %v) by the kept digest, want the cached ok,relie", listed, early)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}

	// The file rewritten in place (its inode kept), or replaced, with
	// another module: its identity is new.
	other := append(append([]byte(nil), e.wasm...), 0, 4, 1, 'x', 0, 0) // a custom section more
	if err := os.WriteFile(e.path, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, _ := knownDigest(d, e.path); got != "" {
		t.Fatalf("a digest kept for a file rewritten in place: %s", got)
	}
	tmp := filepath.Join(filepath.Dir(e.path), "new.wasm")
	if err := os.WriteFile(tmp, other, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, e.path); err != nil {
		t.Fatal(err)
	}
	if got, _ := knownDigest(d, e.path); got != "" {
		t.Fatalf("a digest kept for a replaced file: %s", got)
	}
	reg = e.registry(t, nil)
	if got := listedBeforeCompile(t, reg, spec, digestOf(other)); got != "" {
		t.Errorf("a replaced module listed %q before it compiled", got)
	}

	// A kept digest that is wrong: what it finds is listed until the
	// load, whose answer replaces it.
	fi, err := os.Stat(e.path)
	if err != nil {
		t.Fatal(err)
	}
	ghost := digestOf([]byte("another module"))
	d.engine.CacheValue(digestKey(fileIdentity(fi, time.Now())), []byte(ghost))
	d.engine.CacheValue(manifestKey(spec, ghost, d.manifest), []byte(earlyM2))
	reg = e.registry(t, nil)
	listed, early, release = e.loadHeld2(t, reg, []Spec{spec}, digestOf(other))
	if listed != "ok,other" || !early {
		t.Fatalf("listed %q (early %v) by the planted digest, want its ok,other", listed, early)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg); got != "ok,relie" {
		t.Fatalf("after the load: %q, want what the module describes", got)
	}
	if got, _ := knownDigest(d, e.path); got != digestOf(other) {
		t.Errorf("after the load the kept digest is %q, want the file's", got)
	}
}
