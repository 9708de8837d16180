package hostapi

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wasmcp/wasmcp/internal/abi"
	"github.com/wasmcp/wasmcp/internal/testutil"
	"github.com/wasmcp/wasmcp/runtime"
)

// The Go test plugin of the runtime package (../runtime/testdata, built by
// its build.sh), compiled once per test binary.
var (
	goOnce sync.Once
	goMod  *runtime.Module
	goErr  error
)

// goPool returns a pool of the plugin with the default limits, closed at
// the end of the test.
func goPool(t *testing.T) *runtime.Pool {
	t.Helper()
	goOnce.Do(func() {
		wasm, err := os.ReadFile(filepath.Join("..", "runtime", "testdata", "goplugin", "goplugin.wasm"))
		if err != nil {
			goErr = err
			return
		}
		e, err := runtime.NewEngine(context.Background(), runtime.Config{CacheDir: filepath.Join(os.TempDir(), "wasmcp-runtime-test-cache"), Modules: runtime.ModuleLimits{CompileTimeout: testutil.CompileTimeout}})
		if err != nil {
			goErr = err
			return
		}
		goMod, goErr = e.Compile(context.Background(), "goplugin", wasm)
	})
	if goErr != nil {
		t.Fatal(goErr)
	}
	p, err := goMod.NewPool(runtime.Limits{}, runtime.Sandbox{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(context.Background()) })
	return p
}

// TestPluginWithoutGrants: a real plugin, bound to a Host with no grants,
// sees no files or environment and is denied http/fetch, kv and config.
func TestPluginWithoutGrants(t *testing.T) {
	p := goPool(t)
	kv, _ := OpenKV("", KVQuota{})
	h, err := New(Options{Plugin: "goplugin", KV: kv})
	if err != nil {
		t.Fatal(err)
	}
	_, out, err := p.Call(context.Background(), []byte(`{"method":"sandbox"}`), h.Bind(nil), nil)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		FS, Root         string
		Env, Args        []string
		HTTP, KV, Config int32
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	if r.FS == "" || r.Root == "" || len(r.Env) != 0 || len(r.Args) != 0 {
		t.Errorf("ambient access: %s", out)
	}
	if r.HTTP != abi.ErrDenied || r.KV != abi.ErrDenied || r.Config != abi.ErrDenied {
		t.Errorf("http %d kv %d config %d, want -1 each", r.HTTP, r.KV, r.Config)
	}
}

func TestPluginWithKVGrant(t *testing.T) {
	p := goPool(t)
	kv, _ := OpenKV("", KVQuota{})
	h, _ := New(Options{Plugin: "goplugin", KV: kv, Grants: Grants{KV: true}})
	c := &fakeClient{}
	for _, tt := range []struct{ in, want string }{
		{`{"method":"host","params":{"method":"kv/set","params":{"key":"a","value":"b"}}}`, `{"errno":2,"result":"{}"}`},
		{`{"method":"host","params":{"method":"kv/get","params":{"key":"a"}}}`, `{"errno":13,"result":"{\"value\":\"b\"}"}`},
		{`{"method":"host","params":{"method":"log","params":{"level":"info","data":"hi"}}}`, `{"errno":2,"result":"{}"}`},
	} {
		_, out, err := p.Call(context.Background(), []byte(tt.in), h.Bind(c), nil)
		if err != nil || string(out) != tt.want {
			t.Errorf("%s = %s, %v; want %s", tt.in, out, err, tt.want)
		}
	}
	if len(c.events) != 1 || c.events[0] != `log info  "hi"` {
		t.Errorf("client events %q", c.events)
	}
}

// FuzzHostCall: no method panics or answers outside the ABI's errnos, for
// any params, with every grant on (network confined to a refusing dialer).
func FuzzHostCall(f *testing.F) {
	methods := []string{abi.HostLog, abi.HostProgress, abi.HostNotifyListChanged, abi.HostNotifyResourceUpdate,
		abi.HostConfigGet, abi.HostHTTPFetch, abi.HostKVGet, abi.HostKVSet, abi.HostKVDelete, abi.HostKVList,
		abi.HostElicit, abi.HostSample, abi.HostRoots, "nope"}
	for i := range methods {
		f.Add(uint8(i), `{}`)
		f.Add(uint8(i), `{"key":"k","value":1,"level":"info","data":1,"progress":1,"kind":"tools","uri":"u","url":"https://example.com/x"}`)
		f.Add(uint8(i), `null`)
		f.Add(uint8(i), `{"url":"http://127.0.0.1/","method":"POST","body_base64":"AA==","headers":{"a":"b"},"ttl_s":1e300,"cursor":""}`)
	}
	kv, _ := OpenKV("", KVQuota{})
	h, err := New(Options{Plugin: "f", KV: kv, Grants: Grants{HTTP: []string{"https://example.com/"}, KV: true,
		Config: map[string]string{"k": "v"}, Elicitation: true, Sampling: true, Roots: true},
		HTTP: HTTPPolicy{Resolver: mapResolver{}}})
	if err != nil {
		f.Fatal(err)
	}
	c := &fakeClient{result: json.RawMessage(`{}`)}
	f.Fuzz(func(t *testing.T, m uint8, params string) {
		res, errno := h.Bind(c).Call(context.Background(), methods[int(m)%len(methods)], []byte(params))
		if errno < abi.ErrUnknown || errno > 0 {
			t.Fatalf("errno %d", errno)
		}
		if (errno == 0 || errno == abi.ErrFailed) && !json.Valid(res) {
			t.Fatalf("result %q is not JSON", res)
		}
		c.mu.Lock()
		c.events = c.events[:0]
		c.mu.Unlock()
	})
}
