package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/fetch"
)

// Pulled is what `wasmcp pull` reports.
type Pulled struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	SHA256   string `json:"sha256"`
	Path     string `json:"path"`
	Verified bool   `json:"verified"`
}

// Pull fetches ref into cfg's plugin cache and verifies it: under
// keyPath when set, else under the [plugins.verify] of the configured
// plugin with that url (if any).
func Pull(ctx context.Context, cfg *config.Config, ref, keyPath string, progress io.Writer) (*Pulled, error) {
	p := &config.Plugin{Name: "pull", URL: ref}
	for i := range cfg.Plugins {
		if cfg.Plugins[i].URL == ref {
			c := cfg.Plugins[i]
			p = &c
		}
	}
	if keyPath != "" {
		p.Verify = &config.Verify{Key: keyPath}
	}
	u, err := newResolver(cfg, progress)
	if err != nil {
		return nil, err
	}
	r, err := u.resolve(ctx, p)
	if err != nil {
		return nil, err
	}
	return &Pulled{Ref: ref, Digest: r.Digest, SHA256: r.SHA256, Path: r.Path, Verified: p.Verify != nil}, nil
}

// newResolver is a urlSources for one-off commands: no lock (they
// resolve tags afresh), logs discarded.
func newResolver(cfg *config.Config, progress io.Writer) (*urlSources, error) {
	dir, err := pluginCacheDir(cfg)
	if err != nil {
		return nil, err
	}
	f, err := fetch.New(fetch.Options{Dir: dir, Progress: progress})
	if err != nil {
		return nil, err
	}
	return &urlSources{cfg: cfg, log: slog.New(slog.DiscardHandler), fetcher: f, state: map[string]*urlState{}}, nil
}

// Annotations written by Push besides the OCI title and version.
const (
	AnnotationCapabilities = "dev.wasmcp.capabilities"
	AnnotationABI          = "dev.wasmcp.abi"
)

// Push uploads the plugin file to ref (oci://) in the CNCF Wasm layout,
// with its name, version, ABI and requested capabilities as annotations.
// It returns the manifest digest.
func Push(ctx context.Context, cfg *config.Config, file, ref string) (string, error) {
	r, err := fetch.ParseRef(ref)
	if err != nil {
		return "", err
	}
	rep, err := Inspect(ctx, cfg, file)
	if err != nil {
		return "", err
	}
	wasm, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	caps, err := json.Marshal(rep.Requested)
	if err != nil {
		return "", err
	}
	// A component has no manifest: its title is its file's name.
	title, version := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), ""
	if rep.Manifest != nil {
		title, version = rep.Manifest.Name, rep.Manifest.Version
	}
	ann := map[string]string{
		"org.opencontainers.image.title": title,
		AnnotationABI:                    rep.ABI,
		AnnotationCapabilities:           string(caps),
	}
	if version != "" {
		ann["org.opencontainers.image.version"] = version
	}
	u, err := newResolver(cfg, nil)
	if err != nil {
		return "", err
	}
	return u.fetcher.Push(ctx, r, wasm, ann)
}

// Lock resolves every url plugin of cfg afresh (tags to what they name
// now), fetches and verifies it, and returns the lock to write beside the
// configuration, with each plugin's current grants; then it loads every
// plugin (path, plugin_dirs and url ones, with their grants) and records
// the definitions each serves (Pins). Every url plugin must resolve and
// every configured plugin load: a partial lock is not written (a
// plugin-directory file that does not load is logged to progress and
// left out, so serve withholds it as unknown). changes lists, per
// plugin, what differs from the previous lock (digest moved, grants
// widened) for a person to review; PinDiff of the previous lock and this
// one says how the definitions changed.
func Lock(ctx context.Context, cfg *config.Config, progress io.Writer) (lock *config.Lock, changes []string, err error) {
	old, err := config.LoadLock(cfg)
	if err != nil {
		return nil, nil, err
	}
	u, err := newResolver(cfg, progress)
	if err != nil {
		return nil, nil, err
	}
	lock = &config.Lock{Version: config.LockVersion}
	for i := range cfg.Plugins {
		p := &cfg.Plugins[i]
		if p.URL == "" {
			continue
		}
		r, err := u.resolve(ctx, p)
		if err != nil {
			return nil, nil, err
		}
		lock.Plugins = append(lock.Plugins, config.LockEntry{Name: p.Name, URL: p.URL, Digest: r.Digest, SHA256: r.SHA256, Grants: p.Grants})
		if prev := old.Entry(p.Name); prev == nil || prev.URL != p.URL {
			changes = append(changes, fmt.Sprintf("%s: + %s", p.Name, r.Digest))
		} else {
			if prev.Digest != r.Digest {
				changes = append(changes, fmt.Sprintf("%s: %s -> %s", p.Name, prev.Digest, r.Digest))
			}
			for _, d := range config.WidenedGrants(&prev.Grants, &p.Grants) {
				changes = append(changes, fmt.Sprintf("%s: grants %s", p.Name, d))
			}
		}
	}
	if lock.Pins, err = describeAll(ctx, cfg, lock, progress); err != nil {
		return nil, nil, err
	}
	return lock, changes, nil
}

// WriteLock writes lock beside cfg's configuration file.
func WriteLock(cfg *config.Config, lock *config.Lock) (string, error) {
	path := config.LockPath(cfg)
	if path == "" {
		return "", fmt.Errorf("lock: no configuration file to put %s beside", config.LockFile)
	}
	b, err := lock.Encode()
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return "", err
	}
	return path, os.Rename(tmp, path)
}
