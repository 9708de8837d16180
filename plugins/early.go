package plugins

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/runtime"
)

// This file serves a plugin from its cached manifest while it compiles
// (issue 26): what a plugin describes depends on its module and
// on what the operator gives it (grants, config, environment, mounts,
// limits), so once it has described itself, its answer is kept, sealed,
// in the engine's on-disk cache under a name made of all of them. At the
// next start a plugin whose name finds an answer is listed at once from
// it, before its module has compiled; its calls wait until it has. The
// plugin is still compiled and described as always, and that answer is
// what then serves: a list that differs is announced with list_changed,
// and a plugin that no longer loads is dropped. A cached answer is never
// trusted further than a fresh one: it is parsed and checked the same
// way, and anything it was made under that differs (a changed grant, a
// changed module) names another entry.
//
// Only a first load uses the cache (a plugin with no version serving):
// a reload keeps the version serving until the new one has loaded, as
// it always did. Every kind of plugin is listed so: the manifest kept
// is what its adapter answered (an Extism plugin's made of its lists, a
// component's of its WIT).

// manifestKey names the cached manifest of a plugin: the module, what
// the operator gives it, and the limits its manifest is parsed under.
func manifestKey(spec Spec, digest string, limits ManifestLimits) string {
	k, _ := json.Marshal(struct {
		Digest string
		Spec   any
		Limits ManifestLimits
	}{digest, specKey(spec), limits})
	return "wasmcp manifest v1\x00" + string(k)
}

// digestKey names the digest kept for the module file of identity id
// (fileIdentity).
func digestKey(id string) string { return "wasmcp module digest v1\x00" + id }

// knownDigest returns the digest of the module file at path kept when it
// was last read (rememberDigest), while the file is still the one read,
// and its size; "" when none is kept or the file changed. A plugin is
// listed from its cached manifest with it, before its module is read:
// the load reads and hashes the module as always, and its answer
// replaces the early one.
func knownDigest(d loadDeps, path string) (digest string, size int64) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", 0
	}
	id := fileIdentity(fi, time.Now())
	if id == "" {
		return "", 0
	}
	v, ok := d.engine.CachedValue(digestKey(id))
	if !ok || len(v) != 2*sha256.Size {
		return "", 0
	}
	return string(v), fi.Size()
}

// rememberDigest keeps the digest of the module file that fi describes,
// when it has an identity (knownDigest).
func rememberDigest(d loadDeps, fi fs.FileInfo, digest string) {
	if id := fileIdentity(fi, time.Now()); id != "" {
		d.engine.CacheValue(digestKey(id), []byte(digest))
	}
}

// cacheManifest keeps what p answered to describe (out) for its next
// first load.
func cacheManifest(d loadDeps, p *Plugin, out []byte) {
	d.engine.CacheValue(manifestKey(p.spec, p.digest, d.manifest), out)
}

// early returns spec's plugin built from its cached manifest, served
// until the plugin has loaded; nil when there is none to use. digest is
// its module's (digestOf, or knownDigest).
func early(d loadDeps, spec Spec, digest string) *Plugin {
	if spec.SHA256 != "" && !strings.EqualFold(spec.SHA256, digest) {
		return nil // load refuses it
	}
	raw, ok := d.engine.CachedValue(manifestKey(spec, digest, d.manifest))
	if !ok {
		return nil
	}
	p := &Plugin{name: pluginName(spec), spec: spec, digest: digest, rt: &pluginRuntime{}}
	p.log = d.log.With("plugin", p.name)
	m, err := ParseManifest(raw, d.manifest)
	if err != nil {
		p.log.Warn("cached manifest not used", "error", err)
		return nil
	}
	p.manifest = m
	p.host, err = hostapi.New(hostapi.Options{Plugin: p.name, Grants: spec.Grants, KV: d.kv, HTTP: d.http, Logger: d.log})
	if err != nil {
		return nil // load reports it
	}
	p.pool = &pendingPool{ready: make(chan struct{}), limits: spec.Limits}
	if err := p.index(); err != nil {
		p.log.Warn("cached manifest not used", "error", err)
		return nil
	}
	return p
}

// provisional reports whether p is served from its cached manifest
// (early), before its module has loaded: its Module is nil.
func (p *Plugin) provisional() bool {
	_, ok := p.pool.(*pendingPool)
	return ok
}

// errNotLoaded is the call error of a plugin listed from its cached
// manifest that did not load.
var errNotLoaded = errors.New("the plugin did not load")

// pendingPool is the pool of a plugin listed from its cached manifest:
// its calls wait until the plugin has loaded and run on the loaded
// version's pool, or fail if it did not load.
type pendingPool struct {
	ready  chan struct{}
	once   sync.Once
	pool   callPool // the loaded version's; set before ready is closed
	err    error    // why it did not load; set before ready is closed
	limits runtime.Limits
	// hurry, when set, puts the plugin's load first (a call waits).
	hurry func()
}

// finish ends the wait: calls go to pool, or fail with err.
func (w *pendingPool) finish(pool callPool, err error) {
	w.once.Do(func() {
		w.pool, w.err = pool, err
		if pool == nil && err == nil {
			w.err = errNotLoaded
		}
		close(w.ready)
	})
}

// wait returns the loaded version's pool once there is one.
func (w *pendingPool) wait(ctx context.Context) (callPool, error) {
	select {
	case <-w.ready:
	default:
		if w.hurry != nil {
			w.hurry()
		}
		select {
		case <-w.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if w.err != nil {
		return nil, errors.Join(errNotLoaded, w.err)
	}
	return w.pool, nil
}

// Call implements callPool.
func (w *pendingPool) Call(ctx context.Context, input []byte, h runtime.Host, opts *runtime.CallOptions) (uint32, []byte, error) {
	pool, err := w.wait(ctx)
	if err != nil {
		return 0, nil, err
	}
	return pool.Call(ctx, input, h, opts)
}

// Stats implements callPool: the loaded version's, zero before.
func (w *pendingPool) Stats() runtime.PoolStats {
	select {
	case <-w.ready:
		if w.pool != nil {
			return w.pool.Stats()
		}
	default:
	}
	return runtime.PoolStats{}
}

// Limits implements callPool.
func (w *pendingPool) Limits() runtime.Limits {
	select {
	case <-w.ready:
		if w.pool != nil {
			return w.pool.Limits()
		}
	default:
	}
	return w.limits
}
