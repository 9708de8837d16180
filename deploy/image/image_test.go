package main

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestImage builds the image of this tree in both formats, reads each
// tarball back, and checks its config (non-root user, entrypoint,
// platform), its files, and that the binary inside is static and runs
// `version` (as uid 65532 when the test runs as root).
func TestImage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		format string
		read   func(t *testing.T, path string) v1.Image
	}{
		{"oci", readOCIArchive},
		{"docker", func(t *testing.T, path string) v1.Image {
			img, err := tarball.ImageFromPath(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			return img
		}},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			out := filepath.Join(dir, c.format+".tar")
			ca := "/etc/ssl/certs/ca-certificates.crt"
			if _, err := os.Stat(ca); err != nil {
				ca = ""
			}
			if err := Build(Options{Src: "../..", Out: out, Format: c.format, Tag: "wasmcp:test", Arch: runtime.GOARCH, CA: ca}); err != nil {
				t.Fatal(err)
			}
			img := c.read(t, out)
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if cf.Config.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532", cf.Config.User)
			}
			if got := strings.Join(cf.Config.Entrypoint, " "); got != binPath {
				t.Errorf("entrypoint %q, want %s", got, binPath)
			}
			if got := strings.Join(cf.Config.Cmd, " "); !strings.HasPrefix(got, "serve ") {
				t.Errorf("cmd %q, want serve ...", got)
			}
			if cf.OS != "linux" || cf.Architecture != runtime.GOARCH {
				t.Errorf("platform %s/%s", cf.OS, cf.Architecture)
			}
			files, bin := unpack(t, img)
			for _, want := range []string{binPath, "/etc/passwd", "/tmp"} {
				if _, ok := files[want]; !ok {
					t.Errorf("%s missing from the image", want)
				}
			}
			if h := files["/tmp"]; h != nil && h.Mode&0o1777 != 0o1777 {
				t.Errorf("/tmp mode %o, want 1777", h.Mode)
			}
			if h := files[home]; h == nil || h.Uid != uid {
				t.Errorf("%s not owned by %d: %+v", home, uid, h)
			}
			checkStatic(t, bin)
			cmd := exec.Command(bin, "version")
			if os.Geteuid() == 0 {
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
			}
			out2, err := cmd.CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out2), "wasmcp ") {
				t.Fatalf("%s version: %v: %s", binPath, err, out2)
			}
		})
	}
}

// TestBuildRejects: a bad format or tag is an error, and no tarball is
// left behind.
func TestBuildRejects(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.tar")
	for _, o := range []Options{
		{Src: "../..", Out: out, Format: "zip", Arch: runtime.GOARCH},
		{Src: "/nonexistent", Out: out, Format: "oci", Arch: runtime.GOARCH},
	} {
		if err := Build(o); err == nil {
			t.Errorf("%+v: no error", o)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v: left %s", o, out)
		}
	}
}

// readOCIArchive untars an OCI archive and returns its one image.
func readOCIArchive(t *testing.T, path string) v1.Image {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	eachEntry(t, f, func(h *tar.Header, tr *tar.Reader) {
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	})
	lp, err := layout.FromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Manifests) != 1 {
		t.Fatalf("%d manifests in the index, want 1", len(im.Manifests))
	}
	if got := im.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; got != "wasmcp:test" {
		t.Errorf("ref.name %q", got)
	}
	img, err := lp.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// unpack lists the image's files by absolute path and writes the binary
// into a directory that uid 65532 can reach, returning its path there.
func unpack(t *testing.T, img v1.Image) (files map[string]*tar.Header, bin string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "wasmcp-image-bin")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("%d layers, want 1", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	files = map[string]*tar.Header{}
	eachEntry(t, rc, func(h *tar.Header, tr *tar.Reader) {
		p := "/" + strings.TrimSuffix(h.Name, "/")
		if p == binPath {
			bin = filepath.Join(dir, "wasmcp")
			f, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}
		files[p] = h
	})
	if bin == "" {
		t.Fatalf("no %s in the layer", binPath)
	}
	return files, bin
}

// eachEntry calls fn for each entry of the tar stream r.
func eachEntry(t *testing.T, r io.Reader, fn func(*tar.Header, *tar.Reader)) {
	t.Helper()
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		fn(h, tr)
	}
}

// checkStatic fails unless bin is an ELF executable with no interpreter
// and no shared libraries.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has an ELF interpreter: not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
}
