package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
	"github.com/wasmcp/wasmcp/internal/testutil"
)

// toolCall records one tools/call of tool served by plugin.
func toolCall(tel *Telemetry, plugin, tool string) {
	req := &mcp.Request{Method: "tools/call", Params: []byte(`{"name":"` + tool + `"}`), Client: mcpreq.Client{ProtocolVersion: "2025-11-25"}}
	ri := &mcp.RequestInfo{Request: req, ID: "1", Transport: "pipe", Start: time.Now()}
	ctx := tel.RequestStart(context.Background(), ri)
	cctx, _ := tel.CallHook().CallStart(ctx, plugin, "tools/call", tool, nil)
	tel.CallHook().CallEnd(cctx, nil)
	tel.RequestEnd(ctx, ri, []byte(`{"content":[]}`), nil)
}

// series returns the number of series of the metric family name, and
// their values summed (counters) or their counts summed (histograms).
func series(t *testing.T, tel *Telemetry, name string) (n int, sum float64) {
	t.Helper()
	families, err := tel.metrics.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			n++
			if h := m.GetHistogram(); h != nil {
				sum += float64(h.GetSampleCount())
			} else {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return n, sum
}

// TestToolSeriesBounded: a plugin's tools/call requests hold at most
// MaxPluginSeries histogram series; the calls past it are recorded under
// OtherTool, counted by wasmcp_metrics_folded_total and named once in the
// log. SetTools drops the series of the tools a plugin no longer serves
// and every series of a plugin no longer loaded, and folds a later call
// of a tool it does not name.
func TestToolSeriesBounded(t *testing.T) {
	logs := &testutil.Buffer{}
	tel, err := New(context.Background(), Config{Metrics: true, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	const calls = MaxPluginSeries + 72
	for i := range calls {
		toolCall(tel, "renamer", fmt.Sprintf("t%d", i))
	}
	toolCall(tel, "steady", "s")
	if n, sum := series(t, tel, "mcp_server_operation_duration_seconds"); n != MaxPluginSeries+2 || sum != calls+1 {
		t.Errorf("%d series (%v calls) after %d tools, want %d (%d calls): the plugin's budget, %s and the other plugin's",
			n, sum, calls, MaxPluginSeries+2, calls+1, OtherTool)
	}
	if _, folded := series(t, tel, "wasmcp_metrics_folded_total"); folded != calls-MaxPluginSeries {
		t.Errorf("folded %v, want %d", folded, calls-MaxPluginSeries)
	}
	if got := logs.String(); strings.Count(got, `plugin=renamer`) != 1 {
		t.Errorf("log names the folding plugin %d times, want once:\n%s", strings.Count(got, `plugin=renamer`), got)
	}

	// The plugin now serves t0 alone; steady is unloaded.
	tel.SetTools(map[string][]string{"renamer": {"t0"}})
	if n, _ := series(t, tel, "mcp_server_operation_duration_seconds"); n != 2 {
		t.Errorf("%d series after SetTools, want 2 (t0 and %s)", n, OtherTool)
	}
	if n, _ := series(t, tel, "wasmcp_plugin_calls_total"); n != 1 {
		t.Errorf("%d wasmcp_plugin_calls_total series after steady's unload, want 1", n)
	}
	toolCall(tel, "renamer", "t1") // no longer served: folded, no series
	toolCall(tel, "renamer", "t0")
	if n, _ := series(t, tel, "mcp_server_operation_duration_seconds"); n != 2 {
		t.Errorf("%d series after calls of a tool served and one not, want 2", n)
	}
	if _, sum := series(t, tel, "wasmcp_plugin_calls_total"); sum != calls+2 {
		t.Errorf("renamer's calls %v, want %d", sum, calls+2)
	}
}
