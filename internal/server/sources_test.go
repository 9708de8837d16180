package server

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/fetch"
)

// urlEnv is a real registry and HTTPS server on loopback holding the good
// plugin of the hostile corpus.
type urlEnv struct {
	host    string // registry host:port
	wasm    []byte
	digest  string // manifest digest of good:1
	https   string // base URL of the HTTPS server
	roots   *x509.CertPool
	down    atomic.Bool // the registry answers 503
	fetcher *fetch.Fetcher
	dir     string        // the fetcher's cache
	stall   atomic.Bool   // manifest requests hang until the client gives up
	wait    time.Duration // Options.LoadWait of start
	// hold, when set, makes manifest requests wait until it is closed (or
	// the client gives up: counted in gaveUp); held counts those waiting,
	// and arrived is closed when the first one does.
	hold       chan struct{}
	held       atomic.Int32
	gaveUp     atomic.Int32
	arrived    chan struct{}
	arriveOnce sync.Once
	background bool // Options.Background of start
}

func (e *urlEnv) fetcherDir(t *testing.T) string { return e.dir }

func newURLEnv(t *testing.T) *urlEnv {
	t.Helper()
	wasm, err := os.ReadFile("../../testdata/hostile/good.wasm")
	if err != nil {
		t.Fatal(err)
	}
	e := &urlEnv{wasm: wasm}
	reg := registry.New(registry.WithReferrersSupport(true), registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if e.stall.Load() && strings.Contains(r.URL.Path, "/manifests/") {
			<-r.Context().Done()
			return
		}
		if e.hold != nil && strings.Contains(r.URL.Path, "/manifests/") {
			e.held.Add(1)
			e.arriveOnce.Do(func() { close(e.arrived) })
			select {
			case <-e.hold:
				e.held.Add(-1)
			case <-r.Context().Done():
				e.held.Add(-1)
				e.gaveUp.Add(1)
				return
			}
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	e.host = strings.TrimPrefix(srv.URL, "http://")
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/good.wasm" {
			w.Write(wasm)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(tls.Close)
	e.https = tls.URL
	e.roots = tls.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	e.dir = t.TempDir()
	e.fetcher, err = fetch.New(fetch.Options{Dir: e.dir})
	if err != nil {
		t.Fatal(err)
	}
	e.digest = e.push(t, "good:1", wasm)
	return e
}

func (e *urlEnv) push(t *testing.T, repoTag string, wasm []byte) string {
	t.Helper()
	r, err := fetch.ParseRef("oci://" + e.host + "/" + repoTag)
	if err != nil {
		t.Fatal(err)
	}
	d, err := e.fetcher.Push(context.Background(), r, wasm, map[string]string{"org.opencontainers.image.title": "good"})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// start builds a server from toml (with {{host}}, {{digest}}, {{https}}
// replaced) in dir, its cache under dir.
func (e *urlEnv) start(t *testing.T, dir, toml string) (*Server, *logBuffer, error) {
	t.Helper()
	good, _ := filepath.Abs("../../testdata/hostile/good.wasm")
	toml = strings.NewReplacer("{{host}}", e.host, "{{digest}}", e.digest, "{{https}}", e.https, "{{good}}", good).Replace(toml)
	if err := os.WriteFile(filepath.Join(dir, "wasmcp.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(filepath.Join(dir, "wasmcp.toml"))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	logs := &logBuffer{}
	srv, err := New(context.Background(), cfg, Options{Version: "test", RootCAs: e.roots, RetryTick: 50 * time.Millisecond, LoadWait: e.wait,
		Logger: slog.New(slog.NewTextHandler(logs, nil)), Background: e.background})
	if err == nil {
		t.Cleanup(func() { srv.Close(context.Background()) })
	}
	return srv, logs, err
}

const urlHeader = `
[server]
kv_dir = ":memory:"
cache_dir = "cache"
`

// serve is start for a config that must load.
func (e *urlEnv) serve(t *testing.T, dir, toml string) (*Server, *logBuffer) {
	t.Helper()
	srv, logs, err := e.start(t, dir, toml)
	if err != nil {
		t.Fatal(err)
	}
	return srv, logs
}

func echo(t *testing.T, srv *Server, tool string) error {
	t.Helper()
	res, err := srv.CallTool(context.Background(), tool, json.RawMessage(`{"text":"hi"}`))
	if err != nil {
		return err
	}
	if !strings.Contains(string(res), `"hi"`) {
		return fmt.Errorf("%s answered %s", tool, res)
	}
	return nil
}

// TestURLPlugins: url plugins by tag, by digest and over HTTPS serve
// beside a local one; a url plugin that cannot be fetched is reported
// and the others still serve.
func TestURLPlugins(t *testing.T) {
	e := newURLEnv(t)
	dir := t.TempDir()
	srv, logs := e.serve(t, dir, urlHeader+`
[[plugins]]
name = "local"
path = "{{good}}"
prefix = "l_"
[[plugins]]
name = "bytag"
url = "oci://{{host}}/good:1"
prefix = "t_"
[[plugins]]
name = "bydigest"
url = "oci://{{host}}/good@{{digest}}"
prefix = "d_"
[[plugins]]
name = "web"
url = "{{https}}/good.wasm"
prefix = "w_"
[[plugins]]
name = "missing"
url = "oci://{{host}}/good:404"
prefix = "m_"
[[plugins]]
name = "badpin"
url = "oci://{{host}}/good:1"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
prefix = "p_"
`)
	for _, tool := range []string{"l_echo", "t_echo", "d_echo", "w_echo"} {
		if err := echo(t, srv, tool); err != nil {
			t.Errorf("%s: %v", tool, err)
		}
	}
	for _, tool := range []string{"m_echo", "p_echo"} {
		if err := echo(t, srv, tool); err == nil {
			t.Errorf("%s is served", tool)
		}
	}
	out := logs.String()
	t.Log(out)
	for _, want := range []string{`plugin \"missing\"`, "not found", `plugin \"badpin\"`, "digest mismatch"} {
		if !strings.Contains(out, want) {
			t.Errorf("log does not say %q:\n%s", want, out)
		}
	}
}

// TestURLRequired: a required url plugin that cannot be fetched stops
// the server from starting, naming it.
func TestURLRequired(t *testing.T) {
	e := newURLEnv(t)
	_, _, err := e.start(t, t.TempDir(), urlHeader+`
[[plugins]]
name = "must"
url = "oci://{{host}}/good:404"
required = true
`)
	if err == nil || !strings.Contains(err.Error(), `plugin "must"`) {
		t.Fatalf("New = %v, want the required plugin's error", err)
	}
}

// TestURLRetry: a url plugin whose registry is down at start is served
// once the registry is back, without a restart.
func TestURLRetry(t *testing.T) {
	e := newURLEnv(t)
	e.down.Store(true)
	srv, _ := e.serve(t, t.TempDir(), urlHeader+`
[[plugins]]
name = "later"
url = "oci://{{host}}/good:1"
`)
	if echo(t, srv, "echo") == nil {
		t.Fatal("served while the registry is down")
	}
	e.down.Store(false)
	deadline := time.Now().Add(30 * time.Second)
	for echo(t, srv, "echo") != nil {
		if time.Now().After(deadline) {
			t.Fatal("not served 30s after the registry came back")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestURLStall: a registry that never answers holds the start up for the
// load wait at most; the local plugin serves.
func TestURLStall(t *testing.T) {
	e := newURLEnv(t)
	e.stall.Store(true)
	e.wait = 500 * time.Millisecond
	start := time.Now()
	srv, logs := e.serve(t, t.TempDir(), urlHeader+`
[[plugins]]
name = "local"
path = "{{good}}"
[[plugins]]
name = "stuck"
url = "oci://{{host}}/good:1"
prefix = "s_"
`)
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("start took %v with a stalling registry", d)
	}
	deadline := time.Now().Add(30 * time.Second)
	for echo(t, srv, "echo") != nil { // the local plugin may still be compiling after the short wait
		if time.Now().After(deadline) {
			t.Fatalf("local plugin not served:\n%s", logs)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if echo(t, srv, "s_echo") == nil {
		t.Fatal("stalled plugin served")
	}
	if !strings.Contains(logs.String(), `plugin \"stuck\"`) || !strings.Contains(logs.String(), "context deadline exceeded") {
		t.Errorf("log does not name the stalled plugin and its timeout:\n%s", logs)
	}
}

// TestURLStallBackground: with a background start (wasmcp serve), a
// registry that stalls holds up nothing: New returns, initialize and
// tools/list answer with the local plugin while the registry still holds
// the manifest request; once the registry answers, the url plugin is
// served and the session is told with tools/list_changed. A url plugin
// that cannot be resolved is logged, naming it, and the local one keeps
// serving; a required one arrives on StartErr.
func TestURLStallBackground(t *testing.T) {
	const config = urlHeader + `
[[plugins]]
name = "local"
path = "{{good}}"
[[plugins]]
name = "remote"
url = "oci://{{host}}/good:1"
prefix = "r_"
`
	t.Run("stalled, then answers", func(t *testing.T) {
		e := newURLEnv(t)
		e.background = true
		e.hold, e.arrived = make(chan struct{}), make(chan struct{})
		released := false
		release := func() {
			if !released {
				released = true
				close(e.hold)
			}
		}
		t.Cleanup(release)
		srv, logs := e.serve(t, t.TempDir(), config)
		c := startSession(t, srv)
		tools := toolsList(c, t)
		if !strings.Contains(tools, `"echo"`) || strings.Contains(tools, "r_echo") {
			t.Fatalf("tools/list while the registry stalls: %s", tools)
		}
		select {
		case <-e.arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("the url plugin was never requested from the registry")
		}
		if e.held.Load() == 0 || e.gaveUp.Load() != 0 {
			t.Fatalf("the local plugin was served only after a registry request was given up (%d held, %d given up):\n%s", e.held.Load(), e.gaveUp.Load(), logs)
		}
		release()
		waitNote(t, c, "notifications/tools/list_changed")
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(toolsList(c, t), "r_echo") {
			if time.Now().After(deadline) {
				t.Fatalf("the url plugin is not listed after the registry answered:\n%s", logs)
			}
			waitNote(t, c, "notifications/tools/list_changed")
		}
		if err := echo(t, srv, "r_echo"); err != nil {
			t.Error(err)
		}
		if err := awaitStartErr(t, srv); err != nil {
			t.Errorf("StartErr: %v", err)
		}
	})
	t.Run("not found", func(t *testing.T) {
		e := newURLEnv(t)
		e.background = true
		srv, logs := e.serve(t, t.TempDir(), strings.Replace(config, "good:1", "good:404", 1))
		if err := awaitStartErr(t, srv); err != nil {
			t.Errorf("StartErr for an optional url plugin: %v", err)
		}
		logs.waitLog(t, "url plugin not available", `plugin \"remote\"`)
		if err := echo(t, srv, "echo"); err != nil {
			t.Error(err)
		}
	})
	t.Run("required, not found", func(t *testing.T) {
		e := newURLEnv(t)
		e.background = true
		srv, _ := e.serve(t, t.TempDir(), strings.Replace(config, "good:1", "good:404", 1)+"required = true\n")
		if err := awaitStartErr(t, srv); err == nil || !strings.Contains(err.Error(), `plugin "remote"`) {
			t.Errorf("StartErr = %v, want the required plugin's error", err)
		}
	})
}

// awaitStartErr returns what srv's StartErr receives, waiting at most 30 s.
func awaitStartErr(t *testing.T, srv *Server) error {
	t.Helper()
	select {
	case err := <-srv.StartErr():
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("no StartErr")
		return nil
	}
}
