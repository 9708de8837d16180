package server

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// TestHostileDescribeInvalidUTF8: a describe answer holding invalid
// UTF-8 (the byte FF in a tool's description; fixture badutf8) is
// refused at load, naming the plugin and the item: configured, New fails;
// in a plugin directory, the log says why and the good plugin serves,
// and none of the refused plugin's tools is listed or callable. Before,
// it loaded: the tool was left out of every tools/list (the list's JSON
// was invalid) but still callable, and no log line named the plugin.
func TestHostileDescribeInvalidUTF8(t *testing.T) {
	want := []string{`plugin "badutf8"`, `manifest is not valid UTF-8: tools[1] "bad"`}

	_, err := buildServer(t, memKV+corpusTOML(t, "good")+corpusTOML(t, "badutf8"), ".", Options{Version: "test"})
	checkRefused(t, err, want...)

	dir := t.TempDir()
	copyCorpus(t, "badutf8", dir, "badutf8")
	logs := &testutil.Buffer{}
	srv, err := buildServer(t, memKV+"plugin_dirs = ["+quote(dir)+"]\n"+corpusTOML(t, "good"), ".",
		Options{Version: "test", Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatalf("a bad plugin in a directory stopped the server: %v", err)
	}
	c := startSession(t, srv)
	if got := decodeTool(t, c.call("tools/call", tool("echo", map[string]any{"text": "x"}))).text(); got != "x" {
		t.Errorf("good plugin: %q", got)
	}
	r := c.call("tools/list", map[string]any{})
	if r.Error != nil || !json.Valid(r.Result) || !strings.Contains(string(r.Result), `"echo"`) {
		t.Errorf("tools/list: %v %s", r.Error, r.Result)
	}
	if strings.Contains(string(r.Result), `"fine"`) || strings.Contains(string(r.Result), `"bad"`) {
		t.Errorf("tools/list lists the refused plugin's tools: %s", r.Result)
	}
	if r := c.call("tools/call", tool("bad", nil)); r.Error == nil {
		t.Errorf("the refused plugin's tool answered: %s", r.Result)
	}
	var line string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "badutf8") && strings.Contains(l, "level=ERROR") {
			line = l
		}
	}
	for _, w := range want {
		if !strings.Contains(line, strings.ReplaceAll(w, `"`, `\"`)) {
			t.Errorf("no error log line with %s; log:\n%s", w, logs.String())
			break
		}
	}
}
