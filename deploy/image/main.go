// Command image builds the wasmcp container image without Docker and
// without pulling a base image: a static wasmcp binary (CGO_ENABLED=0)
// built from a source tree, the host's CA bundle, a passwd entry and
// writable /tmp and home directories for the non-root user 65532, in one
// layer on an empty base, written as an OCI image tarball (an OCI layout
// in a tar, as `podman load`, `skopeo copy oci-archive:` and Docker 25+
// read) or as a `docker save` tarball.
//
//	go -C deploy/image run . -o wasmcp-image.tar
//	go -C deploy/image run . -o wasmcp-image.tar -format docker -tag wasmcp:dev
//
// It is a module of its own so that the root module keeps one importer
// per third-party module (go-containerregistry is internal/fetch's).
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's layout: where the binary goes, who runs it, what it runs.
const (
	binPath   = "/usr/local/bin/wasmcp"
	uid       = 65532
	home      = "/home/nonroot"
	caPath    = "/etc/ssl/certs/ca-certificates.crt"
	configDir = "/etc/wasmcp"
	port      = "8080"
)

// Options is what one image build takes.
type Options struct {
	Src    string // the wasmcp source tree (its root, with go.mod)
	Out    string // the tarball to write
	Format string // "oci" (an OCI layout in a tar) or "docker" (docker save)
	Tag    string // the image's name: the OCI ref.name annotation, the docker tag
	Arch   string // GOARCH of the binary and the image's platform
	CA     string // a CA bundle to copy to caPath; "" for none
}

func main() {
	var o Options
	flag.StringVar(&o.Src, "src", "../..", "the wasmcp source tree to build")
	flag.StringVar(&o.Out, "o", "wasmcp-image.tar", "the image tarball to write")
	flag.StringVar(&o.Format, "format", "oci", "oci (OCI layout in a tar) or docker (docker save tarball)")
	flag.StringVar(&o.Tag, "tag", "wasmcp:latest", "the image name recorded in the tarball")
	flag.StringVar(&o.Arch, "arch", runtime.GOARCH, "the GOARCH to build for (linux)")
	flag.StringVar(&o.CA, "ca", "/etc/ssl/certs/ca-certificates.crt", "CA bundle to include (\"\" for none)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "image: no arguments expected; see -h")
		os.Exit(2)
	}
	if err := Build(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
	fmt.Println("image: wrote", o.Out)
}

// Build builds the binary and writes the image tarball o.Out.
func Build(o Options) error {
	if o.Format != "oci" && o.Format != "docker" {
		return fmt.Errorf("format %q: want oci or docker", o.Format)
	}
	tmp, err := os.MkdirTemp("", "wasmcp-image")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "wasmcp")
	if err := buildBinary(o.Src, o.Arch, bin); err != nil {
		return err
	}
	img, err := image(bin, o.CA, o.Arch)
	if err != nil {
		return err
	}
	if o.Format == "docker" {
		ref, err := name.NewTag(o.Tag)
		if err != nil {
			return fmt.Errorf("tag: %w", err)
		}
		return tarball.WriteToFile(o.Out, ref, img)
	}
	return writeOCIArchive(filepath.Join(tmp, "layout"), o.Out, o.Tag, img)
}

// buildBinary builds a static cmd/wasmcp of src for linux/arch into out.
func buildBinary(src, arch, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", abs, "./cmd/wasmcp")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build ./cmd/wasmcp in %s: %w", src, err)
	}
	return nil
}

// image is the one-layer image holding bin (and the CA bundle at ca, when
// given), configured to run it as uid 65532.
func image(bin, ca, arch string) (v1.Image, error) {
	layer, err := rootfs(bin, ca)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(mutate.MediaType(empty.Image, types.OCIManifestSchema1), layer)
	if err != nil {
		return nil, err
	}
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", arch
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config = v1.Config{
		User:         fmt.Sprintf("%d:%d", uid, uid),
		Entrypoint:   []string{binPath},
		Cmd:          []string{"serve", "--config", configDir + "/wasmcp.toml", "--http", "0.0.0.0:" + port},
		WorkingDir:   home,
		Env:          []string{"HOME=" + home, "PATH=/usr/local/bin", "SSL_CERT_FILE=" + caPath},
		ExposedPorts: map[string]struct{}{port + "/tcp": {}},
		Labels: map[string]string{
			"org.opencontainers.image.title":       "wasmcp",
			"org.opencontainers.image.description": "MCP server whose tools are WebAssembly plugins",
		},
	}
	return mutate.ConfigFile(img, cf)
}

// rootfs is the image's only layer, built in memory with fixed times so
// that the same inputs give the same digest.
func rootfs(bin, ca string) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dir := func(path string, mode int64, owner int) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: path + "/", Mode: mode, Uid: owner, Gid: owner, ModTime: epoch})
	}
	file := func(path string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	binData, err := os.ReadFile(bin)
	if err != nil {
		return nil, err
	}
	var caData []byte
	if ca != "" {
		if caData, err = os.ReadFile(ca); err != nil {
			return nil, fmt.Errorf("CA bundle: %w", err)
		}
	}
	steps := []func() error{
		func() error { return dir("etc", 0o755, 0) },
		func() error {
			return file("etc/passwd", 0o644, []byte(fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:%s:/sbin/nologin\n", uid, uid, home)))
		},
		func() error { return file("etc/group", 0o644, []byte(fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", uid))) },
		func() error { return dir("etc/wasmcp", 0o755, 0) },
		func() error { return dir("home", 0o755, 0) },
		func() error { return dir(strings.TrimPrefix(home, "/"), 0o700, uid) },
		func() error { return dir("tmp", 0o1777, 0) },
		func() error { return dir("usr", 0o755, 0) },
		func() error { return dir("usr/local", 0o755, 0) },
		func() error { return dir("usr/local/bin", 0o755, 0) },
		func() error { return file(strings.TrimPrefix(binPath, "/"), 0o755, binData) },
	}
	if caData != nil {
		steps = append(steps,
			func() error { return dir("etc/ssl", 0o755, 0) },
			func() error { return dir("etc/ssl/certs", 0o755, 0) },
			func() error { return file(strings.TrimPrefix(caPath, "/"), 0o644, caData) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// writeOCIArchive writes img as an OCI image layout in dir, named tag,
// then tars dir into out.
func writeOCIArchive(dir, out, tag string, img v1.Image) error {
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	if err := p.AppendImage(img,
		layout.WithPlatform(v1.Platform{OS: cf.OS, Architecture: cf.Architecture}),
		layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": tag})); err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(f)
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: rel + "/", Mode: 0o755, ModTime: time.Unix(0, 0)})
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: rel, Mode: 0o644, Size: int64(len(data)), ModTime: time.Unix(0, 0)}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	err = errors.Join(err, tw.Close(), f.Close())
	if err != nil {
		os.Remove(out)
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
