package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// loopbackServer is an httptest server on 127.0.0.1 that answers every
// request with its body and records the paths it was asked for.
type loopbackServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newLoopbackServer(t *testing.T, body string) *loopbackServer {
	t.Helper()
	s := &loopbackServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		fmt.Fprint(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

// seen returns the paths requested so far.
func (s *loopbackServer) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// lockedBuffer collects a server's log while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// await reports whether a line holding "http request denied" and want is
// logged within d.
func (l *lockedBuffer) await(want string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, line := range strings.Split(l.String(), "\n") {
			if strings.Contains(line, "http request denied") && strings.Contains(line, want) {
				return true
			}
		}
	}
	return false
}

// waitForTool lists tools until name is among them (a component compiles
// in the background; the 12 MB JavaScript one takes seconds cold).
func waitForTool(t *testing.T, c mcpClient, name string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(100 * time.Millisecond) {
		res, e, _ := c.call("tools/list", map[string]any{})
		if e != nil {
			t.Fatal(e)
		}
		if bytes.Contains(res, []byte(`"`+name+`"`)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool %s never came: %s", name, res)
		}
	}
}

// TestComponentFetchGrants: the componentize-js component of hostapi/wasip2's
// tests (js-wasi.wasm, rebuilt by hostapi/wasip2/testdata/build.sh) calls
// fetch (wasi:http/outgoing-handler) in its fetch-text through the real
// server, over stdio on 2025-11-25 and over HTTP on 2026-07-28. It is
// served twice:
// as "granted", whose http grant names one loopback server, and as "bare",
// with no http grant. A GET of the granted server answers with the body
// that server sent; the same GET from "bare", and a GET of a second
// loopback server the grant does not name, are refused (an err result
// with fetch's NetworkError) and the server asked sees no request; over HTTP,
// where the test reads the server's log, the log names each denied URL.
func TestComponentFetchGrants(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a 12 MB component")
	}
	allowed := newLoopbackServer(t, "hello from loopback")
	other := newLoopbackServer(t, "never sent")
	wasm, err := filepath.Abs("../../hostapi/wasip2/testdata/js-wasi.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeConfig(t, fmt.Sprintf(`[[plugins]]
name = "granted"
path = %q
prefix = "granted_"
[plugins.grants]
http = [%q]

[[plugins]]
name = "bare"
path = %q
prefix = "bare_"
`, wasm, allowed.URL+"/", wasm))

	transports := []struct {
		name string
		// start starts the server; its log is nil when not kept.
		start func(t *testing.T) (mcpClient, *lockedBuffer)
	}{
		{"stdio", func(t *testing.T) (mcpClient, *lockedBuffer) { return newStdioClient(t, "--config", cfg), nil }},
		{"http", func(t *testing.T) (mcpClient, *lockedBuffer) {
			_, _, stderr := startServe(t, nil, "--config", cfg, "--http", "127.0.0.1:0")
			log := &lockedBuffer{}
			url := servedURL(t, io.TeeReader(stderr, log))
			return &httpClient2026{t: t, url: url, caps: map[string]any{}}, log
		}},
	}
	// StarlingMonkey's fetch turns every wasi:http error-code (here
	// HTTP-request-denied) into this TypeError.
	const denied = "fetch failed: NetworkError when attempting to fetch resource"
	cases := []struct {
		name   string
		tool   string
		server *loopbackServer
		path   string
		want   string // the text of the result
		isErr  bool
	}{
		{"granted", "granted_fetch-text", allowed, "/granted", `{"ok":"200 hello from loopback"}`, false},
		{"no http grant", "bare_fetch-text", allowed, "/bare", denied, true},
		{"host outside the grant", "granted_fetch-text", other, "/other", denied, true},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			c, log := tr.start(t)
			waitForTool(t, c, "granted_fetch-text")
			waitForTool(t, c, "bare_fetch-text")
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					path := "/" + tr.name + tc.path
					before := len(tc.server.seen())
					res, e, _ := c.call("tools/call", map[string]any{"name": tc.tool, "arguments": map[string]any{"url": tc.server.URL + path}})
					if e != nil {
						t.Fatalf("%s: %v", tc.tool, e)
					}
					got, isErr := resultText(t, res)
					if got != tc.want || isErr != tc.isErr {
						t.Errorf("%s = %q (isError %v), want %q (isError %v)", tc.tool, got, isErr, tc.want, tc.isErr)
					}
					seen := tc.server.seen()[before:]
					if want := []string{path}; tc.isErr {
						if len(seen) != 0 {
							t.Errorf("a refused fetch reached the loopback server: %q", seen)
						}
						// The server's log says why.
						if want := "url=" + tc.server.URL + path; log != nil && !log.await(want, 5*time.Second) {
							t.Errorf("no denial with %s in the server's log:\n%s", want, log.String())
						}
					} else if strings.Join(seen, " ") != strings.Join(want, " ") {
						t.Errorf("the loopback server saw %q, want %q", seen, want)
					}
					if !tc.isErr {
						var r struct {
							Structured json.RawMessage `json:"structuredContent"`
						}
						_ = json.Unmarshal(res, &r)
						if want := `{"result":` + tc.want + `}`; string(r.Structured) != want {
							t.Errorf("structuredContent %s, want %s", r.Structured, want)
						}
					}
				})
			}
		})
	}
}
