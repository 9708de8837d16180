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
