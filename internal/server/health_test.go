package server

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// getStatus fetches url and returns its status and body.
func getStatus(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// serveMetrics serves srv's metrics listener on a loopback port.
func serveMetrics(t *testing.T, srv *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.ServeMetrics(ctx, ln) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + ln.Addr().String()
}

// TestHealth: /healthz and /readyz on the --http listener (outside access
// control: no token) and on the metrics listener; /readyz is 503 while a
// plugin is still loading and 200 once it has loaded; other methods get
// 405, and the MCP endpoint still needs its token.
func TestHealth(t *testing.T) {
	dir := t.TempDir()
	srv, _, err := newLoggedServer(t, memKV+"[auth]\ntokens = [\"reader-0123456789abcdef\"]\n"+corpusTOML(t, "good")+slowTOML(t, dir, "1500"),
		Options{LoadWait: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	listeners := map[string]string{"http": serveHTTP(t, srv), "metrics": serveMetrics(t, srv)}
	if len(srv.Loading()) == 0 {
		t.Fatal("the slow plugin loaded within the load wait; the test needs it still loading")
	}
	for name, base := range listeners {
		if code, body := getStatus(t, "GET", base+"/healthz"); code != 200 || body != "ok\n" {
			t.Errorf("%s: /healthz while loading = %d %q, want 200 ok", name, code, body)
		}
		if code, body := getStatus(t, "GET", base+"/readyz"); code != 503 || !strings.Contains(body, "still loading") {
			t.Errorf("%s: /readyz while loading = %d %q, want 503 still loading", name, code, body)
		}
	}
	waitLoaded(t, srv)
	for name, base := range listeners {
		tests := []struct {
			method, path string
			code         int
		}{
			{"GET", "/healthz", 200},
			{"HEAD", "/healthz", 200},
			{"GET", "/readyz", 200},
			{"POST", "/readyz", 405},
		}
		for _, tt := range tests {
			if code, _ := getStatus(t, tt.method, base+tt.path); code != tt.code {
				t.Errorf("%s: %s %s = %d, want %d", name, tt.method, tt.path, code, tt.code)
			}
		}
	}
	if code, _ := getStatus(t, "GET", listeners["metrics"]+"/mcp"); code != 404 {
		t.Errorf("metrics listener serves /mcp: %d", code)
	}
	if code, _ := getStatus(t, "POST", listeners["http"]+"/mcp"); code != 401 {
		t.Errorf("MCP endpoint without a token: %d, want 401", code)
	}
}
