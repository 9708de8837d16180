package server

import (
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
