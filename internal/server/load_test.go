package server

import (
	"fmt"
	"math/rand/v2"
	"os"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoad runs the good plugin's echo at high concurrency through a real
// stdio server, first alone, then while hostile plugins loop, exhaust
// their memory, recurse, crash and flood, and reports good-call latency
// (p50/p99) in both phases, error rates and peak memory. It asserts only
// sanity bounds that do not depend on the machine's speed: every good
// call answers correctly, and the heap stays under maxLoadHeap. The
// figures go to docs/hostile-corpus.md.
//
// Bounded: loadAlone + loadAttack of calls (about 25 s with setup), on
// stdio (no network). Skipped with -short.
func TestLoad(t *testing.T) {
	const (
		goodWorkers    = 16
		hostileWorkers = 16
		loadAlone      = 5 * time.Second
		loadAttack     = 15 * time.Second
		maxLoadHeap    = 1536 << 20
	)
	e := longHostileEnv(t, "load test: skipped with -short")
	srv, err := newHostileServer(t, e, e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	c := startSession(t, srv)
	go func() { // floods notify: keep the client's queue drained
		for range c.notes {
		}
	}()

	mem := startMemWatch()
	alone := runGood(t, c, goodWorkers, loadAlone, nil)
	aloneMem := mem.stop()

	mem = startMemWatch()
	stop := make(chan struct{})
	var hwg sync.WaitGroup
	hostile := newHostileStats()
	for i := range hostileWorkers {
		hwg.Add(1)
		go func() {
			defer hwg.Done()
			for n := i; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				a := loadAttacks[n%len(loadAttacks)]
				start := time.Now()
				r, err := c.tryCall("tools/call", tool(a.tool, a.args), 30*time.Second)
				if err != nil {
					hostile.lost.Add(1)
					continue
				}
				hostile.add(a.tool, r, time.Since(start))
			}
		}()
	}
	time.Sleep(500 * time.Millisecond) // let the attack start
	attack := runGood(t, c, goodWorkers, loadAttack, nil)
	close(stop)
	hwg.Wait()
	attackMem := mem.stop()

	t.Logf("GOMAXPROCS %d, %d good and %d hostile workers, race detector %v", goruntime.GOMAXPROCS(0), goodWorkers, hostileWorkers, raceEnabled)
	t.Logf("good alone:        %s", alone)
	t.Logf("good under attack: %s", attack)
	t.Logf("memory alone:        %s", aloneMem)
	t.Logf("memory under attack: %s", attackMem)
	for _, line := range hostile.lines() {
		t.Logf("hostile %s", line)
	}
	t.Logf("server log: %d KiB; hostile calls without a response: %d", e.logBytes.Load()>>10, hostile.lost.Load())

	for _, p := range []*goodStats{alone, attack} {
		if p.failed > 0 {
			t.Errorf("%d of %d good calls failed; first: %s", p.failed, p.total(), p.firstErr)
		}
		if p.ok == 0 {
			t.Error("no good call completed")
		}
	}
	if attackMem.peakHeap > maxLoadHeap {
		t.Errorf("heap in use peaked at %d MiB under attack, bound %d MiB", attackMem.peakHeap>>20, maxLoadHeap>>20)
	}
	if hostile.total.Load() == 0 {
		t.Error("no hostile call completed")
	}
}

// loadAttacks are the hostile calls of the load test, taken in turn.
var loadAttacks = []struct {
	tool string
	args map[string]any
}{
	{"runaway_spin", nil},                       // holds an instance for its whole 1 s deadline
	{"memory_grow", nil},                        // grows linear memory to the limit
	{"memhog_abort_oom", nil},                   // C: out of memory, then abort
	{"traps_recurse", nil},                      // wasm stack overflow: the host's largest transient
	{"go_hog", nil},                             // Go: out of memory at 64 MiB
	{"flood_logs", map[string]any{"n": 100000}}, // 1,000 notifications, then dropped
	{"output_drip", nil},                        // output cap
	{"traps_unreachable", nil},                  // instance churn
}

// goodStats are the outcomes of the good calls of one phase.
type goodStats struct {
	ok, failed int
	firstErr   string
	lat        []time.Duration
	elapsed    time.Duration
}

func (s *goodStats) total() int { return s.ok + s.failed }

func (s *goodStats) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	return s.lat[min(len(s.lat)-1, int(float64(len(s.lat))*p))]
}

func (s *goodStats) String() string {
	return fmt.Sprintf("%d calls (%d failed) in %v, %.0f/s; p50 %v, p99 %v, max %v",
		s.total(), s.failed, s.elapsed.Round(time.Millisecond), float64(s.ok)/s.elapsed.Seconds(),
		s.pct(0.50).Round(time.Microsecond), s.pct(0.99).Round(time.Microsecond), s.pct(1).Round(time.Microsecond))
}

// runGood calls the good echo from workers goroutines for d and checks
// every answer.
func runGood(t *testing.T, c *stdioClient, workers int, d time.Duration, _ any) *goodStats {
	var (
		mu  sync.Mutex
		all goodStats
		wg  sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine goodStats
			for time.Now().Before(deadline) {
				text := strconv.FormatUint(rand.Uint64(), 36)
				t0 := time.Now()
				r, err := c.tryCall("tools/call", tool("echo", map[string]any{"text": text}), 30*time.Second)
				lat := time.Since(t0)
				msg := goodFailure(r, text)
				if err != nil {
					msg = err.Error()
				}
				if msg != "" {
					mine.failed++
					if mine.firstErr == "" {
						mine.firstErr = msg
					}
					continue
				}
				mine.ok++
				mine.lat = append(mine.lat, lat)
			}
			mu.Lock()
			all.ok += mine.ok
			all.failed += mine.failed
			all.lat = append(all.lat, mine.lat...)
			if all.firstErr == "" {
				all.firstErr = mine.firstErr
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	all.elapsed = time.Since(start)
	slices.Sort(all.lat)
	return &all
}

// goodFailure describes what is wrong with a good echo's answer, or "".
func goodFailure(r response, text string) string {
	if r.Error != nil {
		return fmt.Sprintf("error %d: %s %s", r.Error.Code, r.Error.Message, r.Error.Data)
	}
	want := `{"content":[{"type":"text","text":"` + text + `"}]}`
	if string(r.Result) != want {
		return "result " + string(r.Result)
	}
	return ""
}

// hostileStats counts the hostile calls' outcomes per tool.
type hostileStats struct {
	mu    sync.Mutex
	by    map[string]map[string]int
	lat   map[string]time.Duration
	total atomic.Int64
	lost  atomic.Int64 // no response
}

func newHostileStats() *hostileStats {
	return &hostileStats{by: map[string]map[string]int{}, lat: map[string]time.Duration{}}
}

func (h *hostileStats) add(tool string, r response, d time.Duration) {
	h.total.Add(1)
	outcome := "result"
	switch {
	case r.Error != nil && r.Error.Code == -32001 && strings.Contains(string(r.Error.Data), "busy"):
		outcome = "busy"
	case r.Error != nil:
		outcome = strconv.Itoa(r.Error.Code)
	case strings.Contains(string(r.Result), `"isError":true`):
		outcome = "isError"
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.by[tool] == nil {
		h.by[tool] = map[string]int{}
	}
	h.by[tool][outcome]++
	h.lat[tool] = max(h.lat[tool], d)
}

func (h *hostileStats) lines() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, a := range loadAttacks {
		out = append(out, fmt.Sprintf("%-18s %v, slowest %v", a.tool, h.by[a.tool], h.lat[a.tool].Round(time.Millisecond)))
	}
	return out
}

// memWatch samples the heap in use and the process RSS every 10 ms (the
// load test and each hostile case).
type memWatch struct {
	stopc    chan struct{}
	done     chan struct{}
	peakHeap uint64
	peakRSS  uint64
}

func startMemWatch() *memWatch {
	m := &memWatch{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(m.done)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms goruntime.MemStats
			goruntime.ReadMemStats(&ms)
			m.peakHeap = max(m.peakHeap, ms.HeapInuse)
			m.peakRSS = max(m.peakRSS, rss())
			select {
			case <-m.stopc:
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

func (m *memWatch) stop() *memWatch {
	close(m.stopc)
	<-m.done
	return m
}

func (m *memWatch) String() string {
	return fmt.Sprintf("peak heap in use %d MiB, peak RSS %d MiB", m.peakHeap>>20, m.peakRSS>>20)
}

// rss returns the process's resident set size from /proc (0 elsewhere).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
