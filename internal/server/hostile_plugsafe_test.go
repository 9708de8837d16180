package server

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// logBuffer keeps what a server logs, for tests that look for a line.
type logBuffer struct{ testutil.Buffer }

// waitLog waits up to 20s for a log line containing every one of want.
func (b *logBuffer) waitLog(t *testing.T, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		for line := range strings.Lines(b.String()) {
			all := true
			for _, w := range want {
				all = all && strings.Contains(line, w)
			}
			if all {
				return line
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", want, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// newLoggedServer builds a server from toml with opts, logging into the
// returned buffer.
func newLoggedServer(t *testing.T, toml string, opts Options) (*Server, *logBuffer, error) {
	t.Helper()
	logs := &logBuffer{testutil.Buffer{Max: 16 << 20}}
	opts.Version = "test"
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := buildServer(t, toml, ".", opts)
	return srv, logs, err
}

// noteMethods returns the methods of notes.
func noteMethods(notes [][]byte) []string {
	var out []string
	for _, n := range notes {
		var m struct {
			Method string `json:"method"`
		}
		json.Unmarshal(n, &m)
		out = append(out, m.Method)
	}
	return out
}

// This file runs the rogue plugin (testdata/hostile/rogue.c) through a real
// server over stdio: a plugin that asks the client for what it was not
// granted, speaks for other plugins' resources and floods notifications.

// rogueCopy copies the rogue module into dir under name, so that one
// server can load it twice (two plugins may not share a file).
func rogueCopy(t *testing.T, dir, name string) string {
	t.Helper()
	return copyCorpus(t, "rogue", dir, name)
}

// rogueTOML serves a copy of the rogue module in dir as name, with more
// lines after its path.
func rogueTOML(t *testing.T, dir, name string, more ...string) string {
	t.Helper()
	return pluginTOML(name, rogueCopy(t, dir, name), more...)
}

// slowTOML serves a copy of the rogue module in dir as the plugin slow,
// whose describe takes ms milliseconds.
func slowTOML(t *testing.T, dir, ms string) string {
	t.Helper()
	return rogueTOML(t, dir, "slow", `prefix = "slow_"`, `timeout = "20s"`, "[plugins.grants]", `config = { describe_ms = "`+ms+`" }`)
}

// waitLoaded waits up to 20 s until srv has loaded every plugin.
func waitLoaded(t *testing.T, srv *Server) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for len(srv.Loading()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("still loading %q", srv.Loading())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clientSecrets are what the test client answers each server-to-client
// request with: they must reach only a plugin granted to ask.
var clientSecrets = map[string]any{
	"roots/list":             map[string]any{"roots": []any{map[string]any{"uri": "file:///ROOT-SECRET", "name": "r"}}},
	"sampling/createMessage": map[string]any{"role": "assistant", "model": "m", "content": map[string]any{"type": "text", "text": "LLM-SECRET"}},
	"elicitation/create":     map[string]any{"action": "accept", "content": map[string]any{"name": "ELICIT-SECRET"}},
}

// TestHostileInputRequiredGrants: a plugin may have the client asked
// elicitation/create, sampling/createMessage or roots/list only with the
// grant, whether it asks with the blocking host call or with an
// input_required result, on a legacy session (the host asks) or a
// 2026-07-28 request (the client asks); no other method ever reaches the
// client.
func TestHostileInputRequiredGrants(t *testing.T) {
	e := newHostileEnv(t)
	dir := t.TempDir()
	srv, err := newHostileServer(t, e, memKV+"[limits]\ntimeout = \"5s\"\n"+
		rogueTOML(t, dir, "denied", `prefix = "denied_"`, "[plugins.grants]", `config = { scheme = "denied" }`)+
		rogueTOML(t, dir, "granted", `prefix = "granted_"`, "[plugins.grants]", `config = { scheme = "granted" }`,
			"elicitation = true", "sampling = true", "roots = true"))
	if err != nil {
		t.Fatal(err)
	}
	c := startStdio(t, srv)
	var (
		mu    sync.Mutex
		asked []string
	)
	c.onRequest = func(method string, params json.RawMessage) (any, error) {
		mu.Lock()
		asked = append(asked, method)
		mu.Unlock()
		if res, ok := clientSecrets[method]; ok {
			return res, nil
		}
		return map[string]any{"leaked": "UNKNOWN-SECRET"}, nil
	}
	allCaps := map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}, "roots": map[string]any{}}
	c.initialize("2025-11-25", allCaps)

	secret := map[string]string{"roots/list": "ROOT-SECRET", "sampling/createMessage": "LLM-SECRET", "elicitation/create": "ELICIT-SECRET"}
	methods := []string{"roots/list", "sampling/createMessage", "elicitation/create", "made/up", "tools/call", "ping"}
	for _, method := range methods {
		_, defined := secret[method]
		for _, plugin := range []string{"denied", "granted"} {
			allowed := defined && plugin == "granted"
			for _, way := range []string{"input_required legacy", "input_required 2026-07-28", "blocking call"} {
				t.Run(plugin+"/"+method+"/"+way, func(t *testing.T) {
					mu.Lock()
					asked = nil
					mu.Unlock()
					var r response
					switch way {
					case "input_required legacy":
						r = c.call("tools/call", tool(plugin+"_ask", map[string]any{"method": method}))
					case "input_required 2026-07-28":
						p := tool(plugin+"_ask", map[string]any{"method": method})
						p["_meta"] = modernMeta(allCaps)
						r = c.call("tools/call", p)
					case "blocking call":
						r = c.call("tools/call", tool(plugin+"_block", map[string]any{"method": method}))
					}
					tr := decodeTool(t, r)
					all := string(r.Result) + tr.text()
					mu.Lock()
					sent := append([]string(nil), asked...)
					mu.Unlock()
					t.Logf("%s -> %s; client asked %q", method, all, sent)
					for _, s := range []string{"ROOT-SECRET", "LLM-SECRET", "ELICIT-SECRET", "UNKNOWN-SECRET"} {
						if !allowed && strings.Contains(all, s) {
							t.Errorf("the answer carries the client's %s", s)
						}
					}
					switch {
					case way == "blocking call" && allowed:
						if len(sent) != 1 || sent[0] != method || !strings.Contains(tr.text(), secret[method]) {
							t.Errorf("granted blocking %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "blocking call":
						if len(sent) != 0 || !strings.HasPrefix(tr.text(), "errno -") {
							t.Errorf("refused blocking %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "input_required legacy" && allowed:
						if len(sent) != 1 || sent[0] != method || !strings.Contains(tr.text(), "answered: ") || !strings.Contains(tr.text(), secret[method]) {
							t.Errorf("granted %s: client asked %q, answer %q", method, sent, tr.text())
						}
					case way == "input_required 2026-07-28" && allowed:
						if tr.ResultType != "input_required" || tr.InputRequests["q"].Method != method {
							t.Errorf("granted %s on 2026-07-28: %s", method, r.Result)
						}
					default:
						// Refused, whichever way: a tool error naming the
						// method, and nothing sent to the client.
						if len(sent) != 0 {
							t.Errorf("the client was asked %q", sent)
						}
						if tr.ResultType == "input_required" || !tr.IsError {
							t.Errorf("want a tool error, got %s", r.Result)
						}
						want := "not granted"
						if !defined {
							want = "not a client request MCP defines"
						}
						if !strings.Contains(tr.text(), method) || !strings.Contains(tr.text(), want) {
							t.Errorf("error %q does not name %q and %q", tr.text(), method, want)
						}
					}
				})
			}
		}
	}
}

// TestHostileResourceUpdatedForeign: a plugin's resource updates reach
// subscribers only for the URIs it serves (its resources, its templates'
// matches); an update for another plugin's resource, or nobody's, is
// dropped with a log line.
func TestHostileResourceUpdatedForeign(t *testing.T) {
	dir := t.TempDir()
	srv, logs, err := newLoggedServer(t, memKV+rogueTOML(t, dir, "rogue")+
		rogueTOML(t, dir, "other", `prefix = "other_"`, "[plugins.grants]", `config = { scheme = "other" }`), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	tests := []struct {
		uri  string
		sent bool
	}{
		{"rogue://mine", true},
		{"rogue://items/7", true},
		{"other://mine", false},
		{"other://items/1", false},
		{"nobody://x", false},
		{"rogue://items/7/deeper", false}, // {id} matches no '/'
	}
	uris := []string{"rogue://items/control"}
	for _, tc := range tests {
		uris = append(uris, tc.uri)
	}
	for _, uri := range uris {
		if r := c.call("resources/subscribe", map[string]any{"uri": uri}); r.Error != nil {
			t.Fatal(r.Error)
		}
	}
	for _, tc := range tests {
		t.Run(tc.uri, func(t *testing.T) {
			for len(c.notes) > 0 {
				<-c.notes
			}
			if got := decodeTool(t, c.call("tools/call", tool("updated", map[string]any{"uri": tc.uri}))).text(); got != "done" {
				t.Fatalf("updated: %q", got)
			}
			// A control update of the plugin's own resource, after: stdio
			// keeps the order, so once it arrived, the one under test would
			// have too.
			c.call("tools/call", tool("updated", map[string]any{"uri": "rogue://items/control"}))
			got := false
			for control := false; !control; {
				select {
				case n := <-c.notes:
					got = got || strings.Contains(string(n), quote(tc.uri))
					control = strings.Contains(string(n), `"rogue://items/control"`)
				case <-time.After(10 * time.Second):
					t.Fatal("the control update did not arrive")
				}
			}
			if got != tc.sent {
				t.Errorf("update of %s reached the client: %v, want %v", tc.uri, got, tc.sent)
			}
			if !tc.sent {
				logs.waitLog(t, "does not serve", tc.uri)
			}
		})
	}
}

// TestHostileListChangedFlood: one call that reports list_changed tens of
// thousands of times costs a bounded number of re-describes and client
// notifications (coalesced, and bounded per call with a log line), a
// bounded amount of memory, and the good plugin answers meanwhile.
func TestHostileListChangedFlood(t *testing.T) {
	const n = 50000
	dir := t.TempDir()
	srv, logs, err := newLoggedServer(t, memKV+corpusTOML(t, "good")+rogueTOML(t, dir, "rogue"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	base := heapInuse()
	baseRSS := rss()
	stop := collectNotes(c)
	mem := startMemWatch()
	start := time.Now()
	r, err := c.tryCall("tools/call", tool("changed", map[string]any{"n": n}), 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := decodeTool(t, r).text(); got != "done" {
		t.Fatalf("changed: %q", got)
	}
	elapsed := time.Since(start)
	// The good plugin answers while the re-describes run.
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("good plugin: %q", got)
	}
	time.Sleep(time.Second) // let what was scheduled run
	mem.stop()
	notes := stop()
	changed := 0
	for _, m := range noteMethods(notes) {
		if m == "notifications/tools/list_changed" {
			changed++
		}
	}
	t.Logf("%d reports in %v: %d list_changed notifications; %v (heap before %d MiB, RSS before %d MiB)",
		n, elapsed.Round(time.Millisecond), changed, mem, base>>20, baseRSS>>20)
	if changed == 0 || changed > 50 {
		t.Errorf("%d tools/list_changed notifications, want 1 to 50", changed)
	}
	if mem.peakHeap > base+128<<20 {
		t.Errorf("heap in use peaked at %d MiB, %d MiB before", mem.peakHeap>>20, base>>20)
	}
	if baseRSS > 0 && mem.peakRSS > baseRSS+256<<20 {
		t.Errorf("RSS peaked at %d MiB, %d MiB before", mem.peakRSS>>20, baseRSS>>20)
	}
	logs.waitLog(t, "over the per-call limit", "rogue")
	// The plugin still serves, with its tools.
	if tools := toolsList(c, t); !strings.Contains(tools, `"changed"`) {
		t.Errorf("tools/list after the flood: %s", tools)
	}
}

// toolsList returns c's tools/list result.
func toolsList(c *stdioClient, t *testing.T) string {
	t.Helper()
	r := c.call("tools/list", map[string]any{})
	if r.Error != nil {
		t.Fatalf("tools/list: %+v", r.Error)
	}
	return string(r.Result)
}

// TestHostileReloadCollision: with watch on, a file dropped into a plugin
// directory whose tool collides with a serving plugin's is refused,
// whatever the file names' order, with an error naming both; what serves
// keeps serving.
func TestHostileReloadCollision(t *testing.T) {
	dir := t.TempDir()
	copyCorpus(t, "good", dir, "b_incumbent")
	srv, logs, err := newLoggedServer(t, memKV+"watch = true\nplugin_dirs = ["+quote(dir)+"]\n", Options{WatchInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	serving := func() []string {
		var names []string
		for _, p := range srv.Registry().Plugins() {
			names = append(names, p.Name())
		}
		return names
	}
	if got := serving(); len(got) != 1 || got[0] != "b_incumbent" {
		t.Fatalf("serving %q", got)
	}
	// The newcomer sorts first.
	copyCorpus(t, "good", dir, "a_newcomer")
	line := logs.waitLog(t, "plugin refused", "a_newcomer")
	if !strings.Contains(line, "b_incumbent") || !strings.Contains(line, `\"echo\"`) && !strings.Contains(line, `"echo"`) {
		t.Errorf("refusal does not name the tool and both plugins: %s", line)
	}
	if got := serving(); len(got) != 1 || got[0] != "b_incumbent" {
		t.Errorf("serving %q after the newcomer, want the incumbent only", got)
	}
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("echo: %q", got)
	}
	// Once the incumbent goes, the newcomer may serve.
	if err := os.Remove(filepath.Join(dir, "b_incumbent.wasm")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for got := serving(); len(got) != 1 || got[0] != "a_newcomer"; got = serving() {
		if time.Now().After(deadline) {
			t.Fatalf("serving %q after the incumbent was removed", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestHostileManifestLimits: a manifest over [limits] max_manifest_items
// or max_manifest_bytes is refused at load with an error naming the
// plugin and the limit, at a bounded cost even for 200,000 items.
func TestHostileManifestLimits(t *testing.T) {
	tests := []struct {
		name, limits, items string
		want                []string // in the load error; none: loads
		tools               int
	}{
		{name: "within the default", items: "500", tools: 504},
		{name: "over the default item limit", items: "2000", want: []string{`plugin "rogue"`, "max_manifest_items", "2006 items", "over the limit of 1000"}},
		{name: "raised item limit", limits: "max_manifest_items = 3000", items: "2000", tools: 2004},
		{name: "over the byte limit", limits: `max_manifest_items = 3000
max_manifest_bytes = "16KiB"`, items: "2000", want: []string{`plugin "rogue"`, "max_manifest_bytes", "over the 16384 byte limit"}},
		{name: "200,000 tools", items: "200000", want: []string{`plugin "rogue"`, "max_manifest_"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base := heapInuse()
			mem := startMemWatch()
			srv, _, err := newLoggedServer(t, memKV+"[limits]\n"+tc.limits+"\n"+
				corpusTOML(t, "rogue", "[plugins.grants]", `config = { items = "`+tc.items+`" }`), Options{})
			mem.stop()
			t.Logf("%v (heap before %d MiB)", mem, base>>20)
			if mem.peakHeap > base+64<<20 {
				t.Errorf("heap in use peaked at %d MiB loading, %d MiB before", mem.peakHeap>>20, base>>20)
			}
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := len(srv.Registry().Tools()); got != tc.tools {
					t.Errorf("%d tools, want %d", got, tc.tools)
				}
				return
			}
			if err == nil {
				t.Fatalf("loaded %d tools", len(srv.Registry().Tools()))
			}
			checkRefused(t, err, tc.want...)
		})
	}
}

// TestHostileSlowLoad: a plugin slow to load (its describe takes seconds)
// and one that never loads (its describe times out) do not keep the
// server from serving the others: New returns after Options.LoadWait,
// Loading names the slow ones, the slow plugin is served with
// list_changed when it is ready, and the failure is logged.
func TestHostileSlowLoad(t *testing.T) {
	testutil.WallClock(t) // what is still loading is checked against a plugin's real 8 s describe
	dir := t.TempDir()
	start := time.Now()
	srv, logs, err := newLoggedServer(t, memKV+corpusTOML(t, "good")+slowTOML(t, dir, "8000")+
		pluginTOML("never", hostilePath(t, "liar"), `timeout = "6s"`, "[plugins.grants]", `config = { manifest = "@loop" }`),
		Options{LoadWait: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	loading := srv.Loading()
	t.Logf("New returned after %v, still loading %q", took.Round(time.Millisecond), loading)
	// The good plugin is quick, but with a cold compilation cache under
	// the race detector it may miss the 200 ms wait: give it until well
	// before the slow one's 8 s describe ends (4 s of 5 was too little
	// at load 15).
	for wait := time.Now().Add(6 * time.Second); len(loading) > 2 && time.Now().Before(wait); loading = srv.Loading() {
		time.Sleep(10 * time.Millisecond)
	}
	if joined := strings.Join(loading, " "); len(loading) != 2 || !strings.Contains(joined, "liar.wasm") || !strings.Contains(joined, "slow.wasm") {
		t.Errorf("Loading() = %q, want the slow and the never-loading plugin", loading)
	}
	c := startSession(t, srv)
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("echo while others load: %q", got)
	}
	if tools := toolsList(c, t); strings.Contains(tools, "slow_ask") {
		t.Errorf("slow plugin listed before it loaded: %s", tools)
	}
	waitNote(t, c, "notifications/tools/list_changed")
	if tools := toolsList(c, t); !strings.Contains(tools, "slow_ask") || !strings.Contains(tools, `"echo"`) {
		t.Errorf("tools/list after the slow plugin loaded: %s", tools)
	}
	logs.waitLog(t, "plugin failed to load", "liar.wasm", "timed out")
	waitLoaded(t, srv)
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "y"}))).text(); got != "y" {
		t.Errorf("echo after the failure: %q", got)
	}
}

// TestHungDescribesDoNotHoldLoads: plugins whose describe never answers
// (more of them than the registry compiles at once, copies of one module)
// do not keep a good plugin from loading until they time out: the load
// slot and the per-module lock cover compilation, not describe. Before,
// the hung plugins held both slots of a 2-core machine and the good one
// waited for their timeout (TestHostileSlowLoad failed so, 1 run in 4).
func TestHungDescribesDoNotHoldLoads(t *testing.T) {
	if testing.Short() {
		t.Skip("runs spinning describes for seconds")
	}
	dir := t.TempDir()
	var cfg string
	hung := goruntime.GOMAXPROCS(0) + 4
	for i := range hung {
		name := fmt.Sprintf("hung%d", i)
		cfg += pluginTOML(name, copyCorpus(t, "liar", dir, name), `timeout = "20s"`, "[plugins.grants]", `config = { manifest = "@loop" }`)
		if i == hung/2 {
			cfg += corpusTOML(t, "good")
		}
	}
	srv, _, err := newLoggedServer(t, memKV+cfg, Options{LoadWait: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// The hung ones time out at 20 s; the good one must be served well
	// before (it compiles in milliseconds warm, seconds cold under -race).
	deadline := time.Now().Add(12 * time.Second)
	for len(srv.Loading()) > hung && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, p := range srv.Loading() {
		if strings.Contains(p, "good.wasm") {
			t.Fatalf("good plugin still loading behind %d hung describes: %q", hung, srv.Loading())
		}
	}
	c := startSession(t, srv)
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("echo while the hung plugins load: %q", got)
	}
}
