package server

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/plugins"
)

// TestBackgroundStart: with Options.Background (wasmcp serve) New returns
// and initialize is answered while a plugin is still loading (its describe
// takes seconds); tools/list then waits for it, so that a client on stdio
// and one on HTTP each see every tool in their first list, with no
// list_changed needed. Before, New returned only after every plugin had
// loaded.
func TestBackgroundStart(t *testing.T) {
	dir := t.TempDir()
	srv, _, err := newLoggedServer(t, memKV+corpusTOML(t, "good")+slowTOML(t, dir, "5000"),
		Options{Background: true})
	if err != nil {
		t.Fatal(err)
	}
	serving := func() bool {
		return slices.ContainsFunc(srv.Registry().Plugins(), func(p *plugins.Plugin) bool { return p.Name() == "slow" })
	}
	if serving() {
		t.Fatal("New returned after the slow plugin loaded")
	}
	c := startSession(t, srv) // initialize answered
	if serving() {
		t.Error("initialize was answered only after the slow plugin loaded")
	}
	h := &httpClient{t: t, url: serveHTTP(t, srv) + "/mcp"}
	begin := time.Now()
	if tools := toolsList(c, t); !strings.Contains(tools, "slow_ask") || !strings.Contains(tools, `"echo"`) {
		t.Errorf("stdio tools/list during the start: %s", tools)
	}
	if names := h.modern("tools/list", nil).names(t, "tools"); !slices.Contains(names, "slow_ask") || !slices.Contains(names, "echo") {
		t.Errorf("HTTP tools/list during the start: %q", names)
	}
	t.Logf("the lists waited %v for the slow plugin", time.Since(begin).Round(time.Millisecond))
	select {
	case err := <-srv.StartErr():
		if err != nil {
			t.Errorf("StartErr: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("no StartErr after the load")
	}
}

// TestCloseDuringBackgroundStart: a server closed while its first load is
// still running (a client that closed stdin at once) reports no failure
// through StartErr, although a plugin that must load did not finish: the
// load was stopped, nothing failed. Before, StartErr named the plugin with
// "context canceled", and wasmcp serve logged "a plugin that must load
// failed to load" and exited 2.
func TestCloseDuringBackgroundStart(t *testing.T) {
	srv, _, err := newLoggedServer(t, memKV+slowTOML(t, t.TempDir(), "5000"), Options{Background: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(srv.Registry().Plugins()) != 0 {
		t.Fatal("the slow plugin loaded before Close")
	}
	if err := srv.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-srv.StartErr():
		if err != nil {
			t.Errorf("StartErr after Close during the load: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("no StartErr after Close")
	}
}

// TestStartFromCachedManifest: a server started again with the same
// plugins lists them at once, from the manifests they described at the
// first start (a plugin whose describe takes 2 s is listed while it is
// still loading, and a call to it waits for it and is answered, over
// stdio and HTTP); with a changed grant or a changed module the cache
// has nothing for the plugin, so nothing stale is listed: the lists wait
// for it as at a first start.
func TestStartFromCachedManifest(t *testing.T) {
	dir := t.TempDir()
	base := memKV + corpusTOML(t, "good")
	toml := base + slowTOML(t, dir, "2000")
	loading := func(srv *Server) bool {
		for _, p := range srv.Registry().Plugins() {
			if p.Name() == "slow" {
				return p.Module() == nil
			}
		}
		return false
	}
	first, _, err := newLoggedServer(t, toml, Options{})
	if err != nil {
		t.Fatal(err)
	}
	first.Close(t.Context())

	srv, _, err := newLoggedServer(t, toml, Options{Background: true})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	h := &httpClient{t: t, url: serveHTTP(t, srv) + "/mcp"}
	if tools := toolsList(c, t); !strings.Contains(tools, "slow_block") || !strings.Contains(tools, `"echo"`) {
		t.Fatalf("stdio tools/list: %s", tools)
	}
	if !loading(srv) {
		t.Fatal("tools/list waited for the slow plugin's describe, though its manifest is cached")
	}
	if names := h.modern("tools/list", nil).names(t, "tools"); !slices.Contains(names, "slow_block") {
		t.Errorf("HTTP tools/list: %q", names)
	}
	if r := c.call("tools/call", callArgs("slow_block", map[string]any{"method": "no/such"})); r.Error != nil || !strings.Contains(string(r.Result), "errno") {
		t.Fatalf("a call to the plugin listed from its cached manifest: %s %+v", r.Result, r.Error)
	}
	srv.Close(t.Context())

	rogue, err := os.ReadFile(filepath.Join(dir, "slow.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		toml func() string
	}{
		{"changed grant", func() string {
			return base + rogueTOML(t, dir, "slow", `prefix = "slow_"`, `timeout = "20s"`, "[plugins.grants]", `config = { describe_ms = "2000", other = "x" }`)
		}},
		{"changed module", func() string {
			text := slowTOML(t, dir, "2000")
			// A custom section more: another digest, the same code.
			if err := os.WriteFile(filepath.Join(dir, "slow.wasm"), append(append([]byte(nil), rogue...), 0, 4, 1, 'x', 0, 0), 0o644); err != nil {
				t.Fatal(err)
			}
			return base + text
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _, err := newLoggedServer(t, tc.toml(), Options{Background: true})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close(t.Context())
			c := startSession(t, srv)
			if tools := toolsList(c, t); !strings.Contains(tools, "slow_block") {
				t.Fatalf("tools/list: %s", tools)
			}
			if loading(srv) {
				t.Fatal("the plugin was listed from a cached manifest made for another grant or module")
			}
		})
	}
}
