package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestServeMetrics: `serve --http ADDR --metrics ADDR` with [server]
// log_format = "json": /metrics, /healthz and /readyz on the metrics
// listener, /healthz on the MCP listener, and every log line on stderr a
// JSON object.
func TestServeMetrics(t *testing.T) {
	p, _, stderr := startServe(t, nil, "--config", serveConfigJSON(t), "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0")
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`http://127\.0\.0\.1:\d+`)
	var mcpBase, metricsBase string
	var logLines []string
	for (mcpBase == "" || metricsBase == "") && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "wasmcp: serving MCP on "):
			mcpBase = re.FindString(line)
		case strings.HasPrefix(line, "wasmcp: serving metrics on "):
			metricsBase = re.FindString(line)
		default:
			logLines = append(logLines, line)
		}
	}
	if mcpBase == "" || metricsBase == "" {
		t.Fatalf("listeners not announced: %q %q", mcpBase, metricsBase)
	}
	rest := make(chan []string, 1)
	go func() {
		var l []string
		for sc.Scan() {
			l = append(l, sc.Text())
		}
		rest <- l
	}()
	// The listeners open before the plugins have loaded (serve starts in
	// the background), so /readyz answers 503 "still loading" until then:
	// wait for it, bounded, before checking what a loaded server serves.
	waitReady(t, metricsBase+"/readyz", 60*time.Second)
	for _, tt := range []struct{ url, want string }{
		{metricsBase + "/healthz", "ok"},
		{metricsBase + "/readyz", "ok"},
		{mcpBase + "/healthz", "ok"},
		{metricsBase + "/metrics", "wasmcp_plugin_instances_created_total{plugin=\"kitchen\"}"},
	} {
		resp, err := http.Get(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(b), tt.want) {
			t.Errorf("GET %s: %d, body without %q:\n%.300s", tt.url, resp.StatusCode, tt.want, b)
		}
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	if code, _ := p.exit(t, 10*time.Second); code != 0 {
		t.Errorf("exit %d", code)
	}
	logLines = append(logLines, <-rest...)
	if len(logLines) == 0 {
		t.Fatal("no log lines")
	}
	for _, l := range logLines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || m["msg"] == nil || m["level"] == nil {
			t.Errorf("log line is not a JSON record: %q", l)
		}
	}
}

func serveConfigJSON(t *testing.T) string {
	path := serveConfig(t, "5s")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(b), "[server]\n", "[server]\nlog_format = \"json\"\n", 1)
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// waitReady polls url until it answers 200, failing the test at timeout;
// a 503 on the way must say the plugins are still loading.
func waitReady(t *testing.T, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusOK:
			return
		case resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(b), "loading"):
			t.Fatalf("GET %s: %d %q, want 200 or 503 while loading", url, resp.StatusCode, b)
		case time.Now().After(deadline):
			t.Fatalf("GET %s: still %d %q after %v", url, resp.StatusCode, b, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
