//go:build unix

package fetch

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCacheEntriesHostile: a cache entry replaced by a FIFO, a link to
// /dev/zero or a sparse file far over its limit is looked at before it is
// read: nothing blocks, nothing big is read into memory, and the entry is
// fetched again (online) or the call fails (offline), promptly.
func TestCacheEntriesHostile(t *testing.T) {
	e := newCacheEnv(t)
	host, down, img, cncf, layer := e.host, &e.down, e.image, e.cncf, e.layer
	ctx := context.Background()
	plant := map[string]func(path string) error{
		"FIFO":              func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"sparse 300 MiB": func(p string) error {
			fh, err := os.Create(p)
			if err != nil {
				return err
			}
			defer fh.Close()
			return fh.Truncate(300 << 20)
		},
	}
	type target struct {
		ref  string
		path func(f *Fetcher, r Ref) string
		op   func(f *Fetcher, r Ref) error
	}
	fetch := func(f *Fetcher, r Ref) error { _, err := f.Fetch(ctx, r); return err }
	targets := map[string]target{
		"manifest":    {"acme/cncf@" + cncf, func(f *Fetcher, r Ref) string { return f.blobPath(cncf) }, fetch},
		"wasm layer":  {"acme/cncf@" + cncf, func(f *Fetcher, r Ref) string { return f.blobPath(digestOf(testWasm)) }, fetch},
		"image layer": {"acme/image@" + img, func(f *Fetcher, r Ref) string { return f.blobPath(digestOf(layer)) }, fetch},
		"signatures": {"acme/cncf@" + cncf, func(f *Fetcher, r Ref) string { return f.sigPath(r, cncf) },
			func(f *Fetcher, r Ref) error { _, err := f.Signatures(ctx, r, cncf, true); return err }},
	}
	for tname, tg := range targets {
		for pname, mk := range plant {
			t.Run(tname+" "+pname, func(t *testing.T) {
				dir := t.TempDir()
				ref := mustRef(t, "oci://"+host+"/"+tg.ref)
				down.Store(false)
				f := newFetcher(t, Options{Dir: dir})
				if err := tg.op(f, ref); err != nil {
					t.Fatal(err)
				}
				if _, err := f.Signatures(ctx, ref, cncf, false); err != nil && tname == "signatures" {
					t.Fatal(err)
				}
				for _, online := range []bool{false, true} {
					p := tg.path(f, ref)
					os.Remove(p)
					if err := mk(p); err != nil {
						t.Fatal(err)
					}
					down.Store(!online)
					var err error
					peak := heapPeak(t, func() {
						err = within(t, 10*time.Second, func() error { return tg.op(newFetcher(t, Options{Dir: dir}), ref) })
					})
					if errors.Is(err, errBlocked) {
						t.Fatalf("online %v: blocked on the planted entry", online)
					}
					if online && err != nil {
						t.Errorf("online: %v", err)
					}
					if !online && err == nil && tname != "signatures" {
						t.Errorf("offline: a planted %s served", tname)
					}
					if peak > 64<<20 {
						t.Errorf("online %v: heap peak %d MiB", online, peak>>20)
					}
				}
			})
		}
	}
}

var errBlocked = errors.New("blocked")

// within runs fn, giving up (errBlocked) after d; a blocked fn's
// goroutine is left behind.
func within(t *testing.T, d time.Duration, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return errBlocked
	}
}

// TestSignatureMaterialBound: the signature material kept for an image
// (and cached, and read back) is bounded in total, not only per
// document: two 700 KiB simple-signing payloads under a 1 MiB
// MaxManifest are refused.
func TestSignatureMaterialBound(t *testing.T) {
	e := newCacheEnv(t)
	ctx := context.Background()
	pusher := newFetcher(t, Options{})
	empty := []byte("{}")
	a, b := make([]byte, 700<<10), make([]byte, 700<<10)
	a[0], b[0] = 'a', 'b'
	sig := strings.Replace(e.cncf, ":", "-", 1) + ".sig"
	pushLayout(t, pusher, e.host, "acme/cncf", sig, imageOf(mediaOCIManifest, "", desc("application/vnd.oci.image.config.v1+json", empty),
		desc(MediaSimpleSigning, a), desc(MediaSimpleSigning, b)), empty, a, b)
	ref := mustRef(t, "oci://"+e.host+"/acme/cncf@"+e.cncf)
	if sigs, err := newFetcher(t, Options{}).Signatures(ctx, ref, e.cncf, false); err != nil || len(sigs) != 2 {
		t.Fatalf("within the default bound: %d signatures, %v", len(sigs), err)
	}
	_, err := newFetcher(t, Options{MaxManifest: 1 << 20}).Signatures(ctx, ref, e.cncf, false)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("error = %v, want ErrTooLarge", err)
	}
}

// TestNamedEntryReplaced: a plugin's named path (what the loader reads)
// replaced by a FIFO, a link to /dev/zero or other bytes is made again
// from the verified blob.
func TestNamedEntryReplaced(t *testing.T) {
	e := newCacheEnv(t)
	f := newFetcher(t, Options{})
	a, err := f.Fetch(context.Background(), mustRef(t, "oci://"+e.host+"/acme/cncf@"+e.cncf))
	if err != nil {
		t.Fatal(err)
	}
	for name, mk := range map[string]func(p string) error{
		"FIFO":              func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"other bytes":       func(p string) error { return os.WriteFile(p, []byte("\x00asm\x01\x00\x00\x00 evil"), 0o600) },
	} {
		t.Run(name, func(t *testing.T) {
			p, err := f.Named("time", a)
			if err != nil {
				t.Fatal(err)
			}
			os.Remove(p)
			if err := mk(p); err != nil {
				t.Fatal(err)
			}
			if p, err = f.Named("time", a); err != nil {
				t.Fatal(err)
			}
			if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("named path is %v (%v)", fi.Mode(), err)
			}
			if b, _ := os.ReadFile(p); digestOf(b) != digestOf(testWasm) {
				t.Fatalf("named path holds %q", b)
			}
		})
	}
}
