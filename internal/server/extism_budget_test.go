package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/denials"
)

// This file runs testdata/extism/greedy.wasm, an Extism plugin without
// grants that hands the kernel's host functions more than they take,
// through a real server over stdio: the grants are checked before the
// cap, the cap before any copy, the kernel's memory does not copy itself
// as it grows, and the denials' log is bounded (docs/hardening.md,
// "Bounds").

// greedyMemory is the memory limit greedy is served with: room for a
// 60 MiB block in its kernel.
const greedyMemory = 256 << 20

// logTap counts the bytes a server logs and keeps the lines (up to a
// bound) that contain one of keep.
type logTap struct {
	mu    sync.Mutex
	n     int64
	keep  []string
	lines []string
}

func (l *logTap) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n += int64(len(p))
	for _, k := range l.keep {
		if bytes.Contains(p, []byte(k)) && len(l.lines) < 1000 {
			line := string(p)
			if len(line) > 4096 {
				line = line[:4096]
			}
			l.lines = append(l.lines, line)
			break
		}
	}
	return len(p), nil
}

func (l *logTap) bytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

func (l *logTap) kept() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

func TestExtismHostCallBudgets(t *testing.T) {
	wasm, err := filepath.Abs("../../testdata/extism/greedy.wasm")
	if err != nil {
		t.Fatal(err)
	}
	tap := &logTap{keep: []string{"folded"}}
	log := slog.New(slog.NewTextHandler(tap, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := buildServer(t, memKV+pluginTOML("greedy", wasm, `memory = "256MiB"`, "instances = 4", `timeout = "30s"`), ".",
		Options{Version: "test", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	t.Logf("heap in use after loading: %d MiB", heapInuse()>>20)

	// run calls tool n times at once and returns the answers, the peak
	// heap in use while they ran above the heap in use (after a GC) just
	// before, and the bytes logged. Each case is measured from its own
	// base: the pooled instances keep what earlier cases left in their
	// memories, which is not this case's doing.
	run := func(t *testing.T, tool string, n int) ([]toolResult, uint64, int64) {
		t.Helper()
		base := heapInuse()
		logged := tap.bytes()
		mem := startMemWatch()
		res := make([]response, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { res[i] = c.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}) })
		}
		wg.Wait()
		peak := mem.stop().peakHeap
		var out []toolResult
		for _, r := range res {
			out = append(out, decodeTool(t, r))
		}
		grown := uint64(0)
		if peak > base {
			grown = peak - base
		}
		return out, grown, tap.bytes() - logged
	}
	const mib = 1 << 20

	t.Run("http_request of 60 MiB without the http grant, four at once", func(t *testing.T) {
		res, grown, _ := run(t, "post", 4)
		for _, r := range res {
			if !r.IsError || !strings.Contains(r.text(), "not granted") {
				t.Errorf("want a refusal naming the grant, got %q", r.text())
			}
		}
		// The four kernels hold their 60 MiB bodies (within the plugin's
		// memory limit); nothing else may copy them.
		t.Logf("heap in use grew by %d MiB at the peak", grown/mib)
		if bound := uint64(4*64*mib + 192*mib); grown > bound {
			t.Errorf("heap in use grew by %d MiB, bound %d MiB", grown/mib, bound/mib)
		}
	})

	t.Run("create_elicitation of 60 MiB without the elicitation grant", func(t *testing.T) {
		res, grown, _ := run(t, "elicit", 1)
		if res[0].IsError || res[0].text() != "done" {
			t.Errorf("want done (a refusal the guest sees), got %q", res[0].text())
		}
		t.Logf("heap in use grew by %d MiB at the peak", grown/mib)
		if bound := uint64(64*mib + 320*mib); grown > bound {
			t.Errorf("heap in use grew by %d MiB, bound %d MiB", grown/mib, bound/mib)
		}
	})

	t.Run("the kernel's memory filled in 1 MiB blocks", func(t *testing.T) {
		res, grown, _ := run(t, "fill", 1)
		n, err := strconv.Atoi(strings.TrimPrefix(res[0].text(), "plugin function call_tool returned "))
		if err != nil || n < greedyMemory/mib/2 || n > greedyMemory/mib {
			t.Errorf("want about %d blocks, got %q", greedyMemory/mib, res[0].text())
		}
		t.Logf("%d blocks; heap in use grew by %d MiB at the peak", n, grown/mib)
		if bound := uint64(greedyMemory + 192*mib); grown > bound {
			t.Errorf("heap in use grew by %d MiB, bound %d MiB (the plugin's memory limit is %d MiB)", grown/mib, bound/mib, greedyMemory/mib)
		}
	})

	t.Run("100,000 denials in one call", func(t *testing.T) {
		res, _, logged := run(t, "deny", 1)
		if got := res[0].text(); !strings.Contains(got, "returned 7") {
			t.Errorf("want the guest to run to its end, got %q", got)
		}
		t.Logf("logged %d KiB", logged>>10)
		if logged > 256<<10 {
			t.Errorf("logged %d KiB for one call's denials, bound 256 KiB", logged>>10)
		}
		// The folded denials are counted, and reported when their
		// interval (denials.DefaultInterval) ends.
		deadline := time.Now().Add(10 * time.Second)
		folded := 0
		for {
			folded = 0
			for _, l := range tap.kept() {
				if i := strings.Index(l, "folded="); i >= 0 {
					var k int
					fmt.Sscanf(l[i+len("folded="):], "%d", &k)
					folded += k
				}
			}
			if folded >= 99500 || time.Now().After(deadline) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		// DefaultBurst of each interval the call spans are written.
		if folded < 99500 || folded > 100000 {
			t.Errorf("the log says %d denials were folded, want about %d: %q", folded, 100000-denials.DefaultBurst, tap.kept())
		}
	})

	t.Run("a denied request to a 3 MiB URL", func(t *testing.T) {
		res, _, logged := run(t, "url", 1)
		if !res[0].IsError || !strings.Contains(res[0].text(), "not granted") {
			t.Errorf("want a refusal naming the grant, got %.200q", res[0].text())
		}
		if n := len(res[0].text()); n > 4096 {
			t.Errorf("the refusal is %d bytes long", n)
		}
		t.Logf("logged %d KiB", logged>>10)
		if logged > 64<<10 {
			t.Errorf("logged %d KiB for one denied request, bound 64 KiB", logged>>10)
		}
	})
}
