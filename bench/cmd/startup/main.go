// Command startup measures how long `wasmcp serve` takes to answer a
// client that has just started it on stdio, and what it holds once it
// has: the time from exec to the initialize answer, to a tools/list
// answer that lists every expected tool, and to the first tools/call's
// answer, and the process's RSS after tools/list; then, with -plugins N,
// the time until the server has logged N plugins loaded (plugins listed
// from their cached manifests keep loading after tools/list) and the
// RSS then. bench/startup.sh runs it
// over plugin sets of several sizes and languages, cold (an empty cache)
// and warm.
//
//	startup -bin wasmcp -config wasmcp.toml -tools 32 -plugins 32 -call p0_echo -args '{"text":"hi"}' -runs 3 [-cold]
//
// Each run is one process. Without -cold, one untimed run first fills the
// cache (XDG_CACHE_HOME in a temporary directory of its own); with -cold,
// every run starts from an empty one. It prints one line of medians.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

func main() {
	bin := flag.String("bin", "wasmcp", "the wasmcp binary")
	cfg := flag.String("config", "", "its configuration file")
	tools := flag.Int("tools", 0, "tools/list must list at least this many tools")
	plugins := flag.Int("plugins", 0, "wait for this many plugins loaded (0: do not wait)")
	call := flag.String("call", "", "a tool to call after tools/list (none: no first call)")
	args := flag.String("args", "{}", "the call's arguments")
	runs := flag.Int("runs", 3, "measured runs")
	cold := flag.Bool("cold", false, "start every run with an empty cache")
	label := flag.String("label", "", "the label of the printed line")
	timeout := flag.Duration("timeout", 2*time.Minute, "the longest one run may take")
	flag.Parse()
	if err := run(*bin, *cfg, *tools, *plugins, *call, json.RawMessage(*args), *runs, *cold, *label, *timeout); err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}

// sample is what one run measured.
type sample struct {
	initialize, list, call, loaded time.Duration
	rssKiB, loadedKiB              int
	tools                          int
}

func run(bin, cfg string, tools, plugins int, call string, args json.RawMessage, runs int, cold bool, label string, timeout time.Duration) error {
	warm, err := os.MkdirTemp("", "wasmcp-startup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(warm)
	if !cold {
		if _, err := once(bin, cfg, warm, tools, plugins, call, args, timeout); err != nil {
			return fmt.Errorf("warming the cache: %w", err)
		}
	}
	var ss []sample
	for i := range runs {
		cache := warm
		if cold {
			cache = filepath.Join(warm, strconv.Itoa(i))
		}
		s, err := once(bin, cfg, cache, tools, plugins, call, args, timeout)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		ss = append(ss, s)
	}
	med := func(f func(sample) float64) float64 {
		v := make([]float64, len(ss))
		for i, s := range ss {
			v[i] = f(s)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	firstCall := "-"
	if call != "" {
		firstCall = fmt.Sprintf("%.0f ms", med(func(s sample) float64 { return ms(s.call) }))
	}
	loaded, loadedRSS := "-", "-"
	if plugins > 0 {
		loaded = fmt.Sprintf("%.0f ms", med(func(s sample) float64 { return ms(s.loaded) }))
		loadedRSS = fmt.Sprintf("%.0f MiB", med(func(s sample) float64 { return float64(s.loadedKiB) / 1024 }))
	}
	mode := "warm"
	if cold {
		mode = "cold"
	}
	fmt.Printf("| %s | %s | %.0f ms | %.0f ms | %s | %.0f MiB | %d | %s | %s |\n", label, mode,
		med(func(s sample) float64 { return ms(s.initialize) }),
		med(func(s sample) float64 { return ms(s.list) }),
		firstCall,
		med(func(s sample) float64 { return float64(s.rssKiB) / 1024 }),
		ss[0].tools, loaded, loadedRSS)
	return nil
}

// once starts the server with cache as its XDG_CACHE_HOME and measures
// one start.
func once(bin, cfg, cache string, tools, plugins int, call string, args json.RawMessage, timeout time.Duration) (sample, error) {
	var s sample
	cmd := exec.Command(bin, "serve", "--config", cfg)
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return s, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return s, err
	}
	stderr := &logCounter{want: []byte(`msg="plugin loaded"`), n: plugins, reached: make(chan struct{})}
	if plugins <= 0 {
		close(stderr.reached)
	}
	cmd.Stderr = stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	kill := time.AfterFunc(timeout, func() { _ = cmd.Process.Kill() })
	defer kill.Stop()
	fail := func(err error) (sample, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return s, fmt.Errorf("%w\nstderr:\n%s", err, stderr.String())
	}
	answers := bufio.NewReaderSize(stdout, 1<<20)
	// ask writes one request and returns its answer's result.
	ask := func(id int, method string, params any) (json.RawMessage, error) {
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(req, '\n')); err != nil {
			return nil, err
		}
		for {
			line, err := answers.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("%s: %w", method, err)
			}
			var m struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if json.Unmarshal(line, &m) != nil || m.ID == nil || *m.ID != id {
				continue // a notification
			}
			if m.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, m.Error.Message)
			}
			return m.Result, nil
		}
	}
	if _, err := ask(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "startup", "version": "1"}}); err != nil {
		return fail(err)
	}
	s.initialize = time.Since(start)
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return fail(err)
	}
	for id := 2; ; id++ {
		res, err := ask(id, "tools/list", map[string]any{})
		if err != nil {
			return fail(err)
		}
		var l struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(res, &l); err != nil {
			return fail(err)
		}
		s.tools = len(l.Tools)
		if s.tools >= tools {
			break
		}
		if time.Since(start) > timeout {
			return fail(fmt.Errorf("tools/list lists %d tools, want %d", s.tools, tools))
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.list = time.Since(start)
	if s.rssKiB, err = rss(cmd.Process.Pid); err != nil {
		return fail(err)
	}
	if call != "" {
		t := time.Now()
		res, err := ask(1000, "tools/call", map[string]any{"name": call, "arguments": args})
		if err != nil {
			return fail(err)
		}
		if strings.Contains(string(res), `"isError":true`) {
			return fail(fmt.Errorf("tools/call %s: %s", call, res))
		}
		s.call = time.Since(t)
	}
	if plugins > 0 {
		select {
		case <-stderr.reached:
		case <-time.After(timeout):
			return fail(fmt.Errorf("fewer than %d plugins loaded", plugins))
		}
		s.loaded = time.Since(start)
		if s.loadedKiB, err = rss(cmd.Process.Pid); err != nil {
			return fail(err)
		}
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			return s, err
		}
		return s, fmt.Errorf("exit: %w\nstderr:\n%s", err, stderr.String())
	}
	return s, nil
}

// rss returns the process's resident set in KiB, from /proc.
func rss(pid int) (int, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		}
	}
	return 0, errors.New("no VmRSS in /proc status")
}

// logCounter keeps the server's log and closes reached once it holds n
// lines with want.
type logCounter struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	want    []byte
	n, seen int
	reached chan struct{}
}

func (l *logCounter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.seen < l.n {
		l.seen = bytes.Count(l.buf.Bytes(), l.want)
		if l.seen >= l.n {
			close(l.reached)
		}
	}
	return len(p), nil
}

func (l *logCounter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
