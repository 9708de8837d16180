package mcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/mcp"
)

// TestHTTPCORS: origins listed in AllowedOrigins get preflights answered
// (before the access-control middleware) and readable responses; loopback
// origins, which pass the DNS-rebinding check unlisted, and servers
// without AllowedOrigins get no CORS headers.
func TestHTTPCORS(t *testing.T) {
	// A middleware that refuses everything without a token, as [auth] does.
	deny := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer t" {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcp"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	listed := startHTTP(t, nil, &mcp.HTTPOptions{AllowedOrigins: []string{"https://app.example/"}, Middleware: deny})
	star := startHTTP(t, nil, &mcp.HTTPOptions{AllowedOrigins: []string{"*"}})
	none := startHTTP(t, nil, nil)
	port := listed.ts.URL[strings.LastIndex(listed.ts.URL, ":")+1:]

	preflight := func(e *httpEnv, origin, host string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodOptions, e.url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version, mcp-method")
		if host != "" {
			req.Host = host
		}
		resp, err := e.ts.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	tests := []struct {
		name        string
		resp        *http.Response
		status      int
		allowOrigin string
	}{
		{"listed origin", preflight(listed, "https://app.example", ""), http.StatusNoContent, "https://app.example"},
		{"any origin with *", preflight(star, "https://other.example", ""), http.StatusNoContent, "https://other.example"},
		{"unlisted origin (refused by access control, then by the Origin check)", preflight(listed, "https://evil.example", ""), http.StatusUnauthorized, ""},
		{"unlisted origin, no access control", preflight(none, "https://evil.example", ""), http.StatusForbidden, ""},
		{"loopback origin, unlisted", preflight(listed, "http://localhost:"+port, ""), http.StatusUnauthorized, ""},
		{"listed origin, foreign host", preflight(listed, "https://app.example", "evil.example"), http.StatusUnauthorized, ""},
		{"no AllowedOrigins", preflight(none, "http://localhost:"+port, ""), http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.resp.StatusCode != tt.status {
				t.Errorf("status %d, want %d", tt.resp.StatusCode, tt.status)
			}
			if got := tt.resp.Header.Get("Access-Control-Allow-Origin"); got != tt.allowOrigin {
				t.Errorf("Access-Control-Allow-Origin %q, want %q", got, tt.allowOrigin)
			}
			if tt.allowOrigin == "" {
				return
			}
			if got := tt.resp.Header.Get("Access-Control-Allow-Methods"); got != "GET, POST, DELETE" {
				t.Errorf("Access-Control-Allow-Methods %q", got)
			}
			if got := tt.resp.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(got, "mcp-method") {
				t.Errorf("Access-Control-Allow-Headers %q", got)
			}
		})
	}

	// Actual requests from a listed origin: the 401 of access control and
	// the answer itself are readable, with the headers a client needs.
	body := modernBody(1, "server/discover", nil, nil)
	hdr := modernHeaders("server/discover", "")
	hdr["Origin"] = "https://app.example"
	resp := listed.post(body, hdr)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate") {
		t.Errorf("401 from a listed origin: %d %v", resp.StatusCode, resp.Header)
	}
	hdr["Authorization"] = "Bearer t"
	resp = listed.post(body, hdr)
	m := lastMsg(t, resp)
	if resp.StatusCode != http.StatusOK || m.Error != nil || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example" ||
		!strings.Contains(resp.Header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") {
		t.Errorf("answer to a listed origin: %d %v %s", resp.StatusCode, resp.Header, m.raw)
	}
	// A loopback origin is served, without CORS headers.
	hdr["Origin"] = "http://localhost:" + port
	resp = listed.post(body, hdr)
	m = lastMsg(t, resp)
	if resp.StatusCode != http.StatusOK || m.Error != nil || resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("answer to a loopback origin: %d %v %s", resp.StatusCode, resp.Header, m.raw)
	}
}
