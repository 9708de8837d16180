package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/runtime"
)

// earlyEnv is a compilation cache of its own, and the liar fixture,
// whose describe answers the manifest its config holds.
type earlyEnv struct {
	dir, key string
	wasm     []byte
	path     string
}

func newEarlyEnv(t *testing.T) *earlyEnv {
	t.Helper()
	wasm, err := os.ReadFile("../testdata/hostile/liar.wasm")
	if err != nil {
		t.Fatal(err)
	}
	e := &earlyEnv{dir: t.TempDir(), key: filepath.Join(t.TempDir(), "key"), wasm: wasm, path: filepath.Join(t.TempDir(), "liar.wasm")}
	if err := os.WriteFile(e.path, wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

// registry opens an engine on the env's cache and a registry on it;
// changed, when set, receives the kinds of list_changed.
func (e *earlyEnv) registry(t *testing.T, changed func(string)) *Registry {
	t.Helper()
	ctx := context.Background()
	eng, err := runtime.NewEngine(ctx, runtime.Config{CacheDir: e.dir, CacheKeyFile: e.key, Modules: runtime.ModuleLimits{CompileTimeout: testutil.CompileTimeout},
		ExtismUser: ExtismUserFunctions()})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(Options{Engine: eng, OnListChanged: changed})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		reg.Close(ctx)
		eng.Close(ctx)
	})
	return reg
}

func (e *earlyEnv) spec(manifest string) Spec {
	return Spec{Path: e.path, Grants: hostapi.Grants{Config: map[string]string{"manifest": manifest}}}
}

// loadHeld loads specs into reg with the module's compile held back (the
// registry's lock on its digest): it returns the tool names listed when
// the plugins were, whether the plugin was early then, and release,
// which lets the compile go on and returns Load's error.
func (e *earlyEnv) loadHeld(t *testing.T, reg *Registry, specs []Spec) (listed string, early bool, release func() error) {
	t.Helper()
	return e.loadHeld2(t, reg, specs, digestOf(e.wasm))
}

// loadHeld2 is loadHeld for a module of the given digest.
func (e *earlyEnv) loadHeld2(t *testing.T, reg *Registry, specs []Spec, digest string) (listed string, early bool, release func() error) {
	t.Helper()
	unlock := reg.lockDigest(digest)
	done := make(chan error, 1)
	at := make(chan struct{})
	go func() {
		done <- reg.LoadListed(context.Background(), specs, func() {
			listed = toolNames(reg)
			ps := reg.Plugins()
			early = len(ps) == 1 && ps[0].provisional()
			close(at)
		})
	}()
	select {
	case <-at:
	case err := <-done:
		unlock()
		t.Fatalf("Load returned before the plugins were listed: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("plugins not listed while compiling")
	}
	return listed, early, func() error {
		unlock()
		return await(t, done, "Load")
	}
}

const (
	earlyM1 = `{"abi":1,"name":"liar","tools":[{"name":"ok"},{"name":"relie"}]}`
	earlyM2 = `{"abi":1,"name":"liar","tools":[{"name":"ok"},{"name":"other"}]}`
)

// TestEarlyManifest: a plugin that described itself once is listed at
// its next first load from that answer, kept in the cache, before its
// module has compiled; a call made meanwhile waits and is answered by
// the loaded plugin, which then serves.
func TestEarlyManifest(t *testing.T) {
	e := newEarlyEnv(t)
	spec := e.spec(earlyM1)
	// Nothing cached: nothing is listed before the compile.
	reg := e.registry(t, nil)
	if got := listedBeforeCompile(t, reg, spec, digestOf(e.wasm)); got != "" {
		t.Fatalf("listed %q with nothing cached, before the compile", got)
	}

	reg = e.registry(t, nil)
	listed, early, release := e.loadHeld(t, reg, []Spec{spec})
	if listed != "ok,relie" || !early {
		t.Fatalf("listed %q (early %v) while compiling, want the cached ok,relie", listed, early)
	}
	// A call now waits for the load.
	answer := callLater(reg, "ok", `{}`, `"ok"`)
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if err := await(t, answer, "the call made while compiling"); err != nil {
		t.Fatal(err)
	}
	if ps := reg.Plugins(); len(ps) != 1 || ps[0].provisional() || ps[0].Module() == nil {
		t.Fatalf("after the load: %v", ps)
	}
}

// TestEarlyManifestStale: a cached answer is used only for the module
// and the operator's grants it was made under: a changed config grant,
// environment, limit or module finds none. An answer that the plugin no
// longer gives (its describe changed, as a kv-driven one can) is
// replaced by the loaded plugin's, with list_changed; a plugin listed
// early that then fails to load is dropped, and the calls waiting on it
// fail.
func TestEarlyManifestStale(t *testing.T) {
	e := newEarlyEnv(t)
	spec := e.spec(earlyM1)
	reg := e.registry(t, nil)
	if err := reg.Load(context.Background(), []Spec{spec}); err != nil {
		t.Fatal(err)
	}
	d := reg.deps()
	if early(d, spec, digestOf(e.wasm)) == nil {
		t.Fatal("no early plugin for the spec just loaded")
	}
	env := spec
	env.Sandbox.Env = map[string]string{"A": "1"}
	limits := spec
	limits.Limits.Memory = 64 << 20
	renamed := spec
	renamed.Name = "liar2"
	for _, tc := range []struct {
		name string
		spec Spec
		wasm []byte
	}{
		{"config grant", e.spec(earlyM2), e.wasm},
		{"environment", env, e.wasm},
		{"limits", limits, e.wasm},
		{"name", renamed, e.wasm},
		{"module", spec, append(append([]byte(nil), e.wasm...), 0, 4, 1, 'x', 0, 0)}, // a custom section more
	} {
		if p := early(d, tc.spec, digestOf(tc.wasm)); p != nil {
			t.Errorf("%s changed: served from the cache: %s", tc.name, strings.Join(p.ToolNames(), ","))
		}
	}

	// The plugin describes otherwise than the cache says.
	stale := e.spec(earlyM2)
	d.engine.CacheValue(manifestKey(stale, digestOf(e.wasm), d.manifest), []byte(earlyM1))
	var mu sync.Mutex
	var changes []string
	reg = e.registry(t, func(kind string) {
		mu.Lock()
		defer mu.Unlock()
		changes = append(changes, kind)
	})
	listed, isEarly, release := e.loadHeld(t, reg, []Spec{stale})
	if listed != "ok,relie" || !isEarly {
		t.Fatalf("listed %q (early %v), want the cached ok,relie", listed, isEarly)
	}
	mu.Lock()
	changes = nil
	mu.Unlock()
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if got := toolNames(reg); got != "ok,other" {
		t.Fatalf("after the load: %q, want what the plugin describes", got)
	}
	mu.Lock()
	if strings.Join(changes, ",") != "tools" {
		t.Errorf("list_changed %q after the load, want tools", changes)
	}
	mu.Unlock()

	// Listed early, then its describe traps: dropped.
	trap := e.spec("@trap")
	d.engine.CacheValue(manifestKey(trap, digestOf(e.wasm), d.manifest), []byte(earlyM1))
	reg = e.registry(t, nil)
	listed, isEarly, release = e.loadHeld(t, reg, []Spec{trap})
	if listed != "ok,relie" || !isEarly {
		t.Fatalf("listed %q (early %v), want the cached ok,relie", listed, isEarly)
	}
	answer := callLater(reg, "ok", `{}`, "")
	if err := release(); err == nil {
		t.Fatal("Load of a plugin whose describe traps succeeded")
	}
	if got := toolNames(reg); got != "" {
		t.Fatalf("a plugin that failed to load is listed: %q", got)
	}
	if err := await(t, answer, "the call made while compiling"); !errors.Is(err, errNotLoaded) {
		t.Fatalf("the waiting call: %v, want errNotLoaded", err)
	}
}

// listedBeforeCompile loads spec into reg with the compile of the
// module of digest held back for 50 ms, and returns the tool names
// listed then; the load must then succeed.
func listedBeforeCompile(t *testing.T, reg *Registry, spec Spec, digest string) string {
	t.Helper()
	unlock := reg.lockDigest(digest)
	done := make(chan error, 1)
	go func() { done <- reg.Load(context.Background(), []Spec{spec}) }()
	time.Sleep(50 * time.Millisecond)
	listed := toolNames(reg)
	unlock()
	if err := await(t, done, "Load"); err != nil {
		t.Fatal(err)
	}
	return listed
}

// callLater calls tool with args in the background; the channel gets
// its error, or an error when the answer does not contain want.
func callLater(reg *Registry, tool, args, want string) <-chan error {
	answer := make(chan error, 1)
	go func() {
		p := mcpreq.Params{Name: tool, Arguments: json.RawMessage(args)}
		raw := json.RawMessage(`{"name":"` + tool + `","arguments":` + args + `}`)
		out, err := reg.CallTool(context.Background(), &Request{Client: &mcpreq.Client{}, Params: raw, Parsed: &p})
		if err == nil && !strings.Contains(string(out), want) {
			err = errors.New("answered " + string(out))
		}
		answer <- err
	}()
	return answer
}

// await returns what ch receives within 30 s.
func await(t *testing.T, ch <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return", what)
		return nil
	}
}

// TestEarlyManifestKinds: Extism plugins and components are listed from
// their cached manifests too (what their adapters made of the plugin's
// lists or WIT), and a call made while one compiles goes through its
// adapter once it has loaded.
func TestEarlyManifestKinds(t *testing.T) {
	for _, tc := range []struct {
		name, file, tool, args, want, abi string
	}{
		{"extism", "../testdata/extism/cplugin.wasm", "upper", `{"text":"hi"}`, `"HI"`, ABIExtismV1},
		{"component", "../testdata/components/c-echo.wasm", "echo", `{"text":"back"}`, `"back"`, ABIComponent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEarlyEnv(t)
			wasm, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			e.wasm = wasm
			if err := os.WriteFile(e.path, wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			spec := Spec{Path: e.path}
			if err := e.registry(t, nil).Load(context.Background(), []Spec{spec}); err != nil {
				t.Fatal(err)
			}
			reg := e.registry(t, nil)
			listed, early, release := e.loadHeld(t, reg, []Spec{spec})
			if listed != tc.tool || !early {
				t.Fatalf("listed %q (early %v) while compiling, want the cached %s", listed, early, tc.tool)
			}
			if abi := reg.Plugins()[0].ABI(); abi != "" {
				t.Errorf("ABI %q before the module has loaded", abi)
			}
			answer := callLater(reg, tc.tool, tc.args, tc.want)
			if err := release(); err != nil {
				t.Fatal(err)
			}
			if err := await(t, answer, "the call made while compiling"); err != nil {
				t.Fatal(err)
			}
			if abi := reg.Plugins()[0].ABI(); abi != tc.abi {
				t.Errorf("ABI %q after the load, want %s", abi, tc.abi)
			}
		})
	}
}
