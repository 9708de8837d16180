package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/fetch"
	"github.com/wasmcp/wasmcp/internal/verify"
)

// urlSources turns the url plugins of a configuration into cached files:
// fetched, verified, pinned to the wasm's SHA-256 (so that the loader
// re-hashes the very bytes it compiles). A plugin that cannot be resolved
// is left out of the specs, reported, and retried with backoff; one with
// refresh set has its tag re-resolved that often.
type urlSources struct {
	cfg     *config.Config
	log     *slog.Logger
	fetcher *fetch.Fetcher
	lock    *config.Lock // nil without wasmcp.lock

	mu    sync.Mutex
	state map[string]*urlState // by plugin name
}

// urlState is what is known of one url plugin.
type urlState struct {
	cur     *resolved // nil until resolved
	err     error     // the last failure
	fails   int
	next    time.Time // when to retry or refresh
	refresh time.Duration
}

// resolved is a url plugin in the cache, verified.
type resolved struct {
	Ref    fetch.Ref
	Digest string // what was verified and locked: the manifest digest
	SHA256 string // of the wasm file
	Path   string
}

// Backoff of failed url plugins: doubling from retryMin to retryMax.
const (
	retryMin = time.Second
	retryMax = 5 * time.Minute
)

// pluginCacheDir is where url plugins are cached: cache_dir/plugins, else
// the user cache directory's wasmcp/plugins.
func pluginCacheDir(cfg *config.Config) (string, error) {
	if cfg.Server.CacheDir != "" {
		return filepath.Join(cfg.Server.CacheDir, "plugins"), nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("plugin cache: %w", err)
	}
	return filepath.Join(base, "wasmcp", "plugins"), nil
}

// newURLSources returns nil when cfg has no url plugin. The url plugins
// load by lock, or wasmcp.lock when lock is nil.
func newURLSources(cfg *config.Config, log *slog.Logger, roots *x509.CertPool, progress io.Writer, lock *config.Lock) (*urlSources, error) {
	any := false
	for i := range cfg.Plugins {
		any = any || cfg.Plugins[i].URL != ""
	}
	if !any {
		return nil, nil
	}
	dir, err := pluginCacheDir(cfg)
	if err != nil {
		return nil, err
	}
	f, err := fetch.New(fetch.Options{Dir: dir, RootCAs: roots, Progress: progress})
	if err != nil {
		return nil, err
	}
	if lock == nil {
		if lock, err = config.LoadLock(cfg); err != nil {
			return nil, err
		}
	}
	return &urlSources{cfg: cfg, log: log, fetcher: f, lock: lock, state: map[string]*urlState{}}, nil
}

// resolveAll resolves every url plugin in parallel and calls resolved
// (if set) for each one resolved, as soon as it is. The failures of
// required plugins are returned; the others are logged and retried. With
// wait > 0 an optional plugin gets at most wait (a stalling registry does
// not hold up a start that waits for it past the load wait); the fetch's
// own timeouts bound the rest.
func (u *urlSources) resolveAll(ctx context.Context, wait time.Duration, resolved func(*config.Plugin)) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var fatal []error
	for i := range u.cfg.Plugins {
		p := &u.cfg.Plugins[i]
		if p.URL == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pctx := ctx
			if !p.Required && wait > 0 {
				var cancel context.CancelFunc
				pctx, cancel = context.WithTimeout(ctx, wait)
				defer cancel()
			}
			err := u.update(pctx, p)
			if err == nil && resolved != nil {
				resolved(p)
			}
			if err != nil && p.Required {
				mu.Lock()
				fatal = append(fatal, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(fatal...)
}

// update resolves p and records the outcome; it reports whether the
// resolved file changed.
func (u *urlSources) update(ctx context.Context, p *config.Plugin) error {
	r, err := u.resolve(ctx, p)
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.state[p.Name]
	if st == nil {
		st = &urlState{}
		u.state[p.Name] = st
	}
	now := time.Now()
	if err != nil {
		st.err = err
		st.fails++
		d := retryMin << min(st.fails-1, 16)
		st.next = now.Add(min(d, retryMax))
		u.log.Error("url plugin not available; others are served", "plugin", p.Name, "error", err, "retry_in", min(d, retryMax).String())
		return err
	}
	if st.cur == nil || st.cur.Path != r.Path {
		u.log.Info("url plugin resolved", "plugin", p.Name, "url", p.URL, "digest", r.Digest)
	}
	st.cur, st.err, st.fails = r, nil, 0
	st.refresh = 0
	if p.Refresh > 0 && u.cfg.Server.Watch && r.Ref.Tag != "" {
		st.refresh = time.Duration(p.Refresh)
		st.next = now.Add(st.refresh)
	} else {
		st.next = time.Time{}
	}
	return nil
}

// resolve fetches and verifies p.
func (u *urlSources) resolve(ctx context.Context, p *config.Plugin) (*resolved, error) {
	fail := func(err error) (*resolved, error) { return nil, fmt.Errorf("plugin %q (%s): %w", p.Name, p.URL, err) }
	ref, err := fetch.ParseRef(p.URL)
	if err != nil {
		return fail(err)
	}
	pin := p.SHA256
	if le := u.lock.Entry(p.Name); le != nil && le.URL == p.URL {
		if err := u.lock.Check(p); err != nil {
			return fail(err)
		}
		if ref.OCI {
			ref = ref.Pinned(le.Digest)
		}
		if pin == "" {
			pin = le.SHA256
		}
	}
	var a *fetch.Artifact
	if ref.OCI {
		a, err = u.fetcher.Fetch(ctx, ref)
	} else {
		a, err = u.fetcher.FetchPinned(ctx, ref, pin)
	}
	if err != nil {
		return fail(err)
	}
	if pin != "" && pin != a.SHA256 {
		return fail(fmt.Errorf("%w: the wasm has sha256 %s, pinned %s", fetch.ErrDigest, a.SHA256, pin))
	}
	if p.Verify != nil {
		if err := verifyArtifact(ctx, u.fetcher, p, ref, a); err != nil {
			return fail(err)
		}
	}
	path, err := u.fetcher.Named(p.Name, a)
	if err != nil {
		return fail(err)
	}
	return &resolved{Ref: ref, Digest: a.Digest, SHA256: a.SHA256, Path: path}, nil
}

// lookup returns the resolved file of the url plugin name.
func (u *urlSources) lookup(name string) (*resolved, bool) {
	if u == nil {
		return nil, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.state[name]
	if st == nil || st.cur == nil {
		return nil, false
	}
	return st.cur, true
}

// run retries failed url plugins with backoff and re-resolves the ones
// with refresh, calling changed after each change, until ctx is done.
func (u *urlSources) run(ctx context.Context, tick time.Duration, changed func()) {
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var due []*config.Plugin
		u.mu.Lock()
		now := time.Now()
		for i := range u.cfg.Plugins {
			p := &u.cfg.Plugins[i]
			if st := u.state[p.Name]; st != nil && !st.next.IsZero() && !now.Before(st.next) {
				due = append(due, p)
			}
		}
		u.mu.Unlock()
		// The ones due together run in parallel; the next round waits
		// for them all (a stalled fetch ends at the fetch timeout).
		var wg sync.WaitGroup
		var changedAny atomic.Bool
		for _, p := range due {
			wg.Go(func() {
				before, _ := u.lookup(p.Name)
				if !u.refreshDue(ctx, p, before) {
					return
				}
				if u.update(ctx, p) == nil {
					if after, _ := u.lookup(p.Name); before == nil || after.Path != before.Path {
						changedAny.Store(true)
					}
				}
			})
		}
		wg.Wait()
		if changedAny.Load() {
			changed()
		}
	}
}

// refreshDue reports whether p needs a full resolve: it failed, or its
// tag now names another digest than the one serving (one request).
func (u *urlSources) refreshDue(ctx context.Context, p *config.Plugin, cur *resolved) bool {
	if cur == nil || cur.Ref.Tag == "" {
		return true
	}
	d, err := u.fetcher.Resolve(ctx, cur.Ref)
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.state[p.Name]
	st.next = time.Now().Add(st.refresh)
	if err != nil {
		u.log.Warn("url plugin refresh failed; the current version keeps serving", "plugin", p.Name, "error", err)
		return false
	}
	if d == cur.Digest {
		return false
	}
	u.log.Info("url plugin tag moved; fetching and verifying", "plugin", p.Name, "from", cur.Digest, "to", d)
	return true
}

// verifyArtifact checks a's signatures under p's [plugins.verify], from
// the registry (a tag reference) or the cache first (a digest or locked
// reference, so that an offline start still verifies).
func verifyArtifact(ctx context.Context, f *fetch.Fetcher, p *config.Plugin, ref fetch.Ref, a *fetch.Artifact) error {
	pol, err := policyFor(p.Verify)
	if err != nil {
		return err
	}
	sigs, err := f.Signatures(ctx, ref, a.Digest, ref.Digest != "")
	if err != nil {
		return err
	}
	if err := pol.Verify(a.Digest, sigs); err != nil {
		return fmt.Errorf("signature of %s: %w", a.Digest, err)
	}
	return nil
}

// policyFor reads the files a [plugins.verify] table names.
func policyFor(v *config.Verify) (*verify.Policy, error) {
	var o verify.Options
	var err error
	if v.Key != "" {
		if o.KeyPEM, err = os.ReadFile(v.Key); err != nil {
			return nil, fmt.Errorf("verify.key: %w", err)
		}
	} else {
		if o.TrustedRootJSON, err = os.ReadFile(v.TrustedRoot); err != nil {
			return nil, fmt.Errorf("verify.trusted_root: %w", err)
		}
		o.Identity, o.IdentityRegexp, o.Issuer = v.Identity, v.IdentityRegexp, v.Issuer
	}
	return verify.New(o)
}
