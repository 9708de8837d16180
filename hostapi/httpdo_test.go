package hostapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestDo: Host.Do applies http/fetch's rules, address policy, redirect
// checks, header rules and body caps to a request given as an
// http.Request.
func TestDo(t *testing.T) {
	_, port := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/out":
			http.Redirect(w, r, "http://127.0.0.2:"+r.Host[strings.LastIndexByte(r.Host, ':')+1:]+"/api/x", http.StatusFound)
		case "/api/big":
			w.Write([]byte(strings.Repeat("x", 100)))
		default:
			w.Header().Set("X-Echo", r.Header.Get("X-Test"))
			w.Write([]byte(r.Method + " " + r.URL.Path + " " + readAll(r)))
		}
	})
	base := "http://127.0.0.1:" + port
	h, err := New(Options{Plugin: "p", Grants: Grants{HTTP: []string{base + "/api/"}}, HTTP: HTTPPolicy{MaxRequestBody: 10, MaxResponseBody: 50}})
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, u string, hdr http.Header, body string) (*http.Response, error) {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		req := &http.Request{Method: method, URL: pu, Header: hdr}
		if body != "" {
			req.Body = io.NopCloser(strings.NewReader(body))
		}
		return h.Do(context.Background(), req)
	}
	resp, err := do("post", base+"/api/x", http.Header{"X-Test": {"yes"}}, "hi")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(b) != "POST /api/x hi" || resp.Header.Get("X-Echo") != "yes" {
		t.Fatalf("Do = %d %q %v", resp.StatusCode, b, resp.Header)
	}
	for _, c := range []struct {
		name, method, url string
		hdr               http.Header
		body              string
		want              error
	}{
		{"no rule", "GET", base + "/admin", nil, "", ErrHTTPDenied},
		{"redirect out of the rules", "GET", base + "/api/out", nil, "", ErrHTTPDenied},
		{"request body over the cap", "POST", base + "/api/x", nil, strings.Repeat("y", 11), ErrHTTPTooBig},
		{"response body over the cap", "GET", base + "/api/big", nil, "", ErrHTTPTooBig},
		{"forbidden header", "GET", base + "/api/x", http.Header{"Host": {"evil"}}, "", errBadRequest},
		{"proxy header", "GET", base + "/api/x", http.Header{"Proxy-Authorization": {"x"}}, "", errBadRequest},
		{"bad scheme", "GET", "ftp://127.0.0.1:" + port + "/api/x", nil, "", errBadRequest},
	} {
		if _, err := do(c.method, c.url, c.hdr, c.body); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := do("CONNECT", base+"/api/x", nil, ""); err == nil {
		t.Error("CONNECT was sent")
	}
	none, _ := New(Options{Plugin: "q"})
	if _, err := none.Do(context.Background(), &http.Request{Method: "GET", URL: &url.URL{Scheme: "http", Host: "127.0.0.1:" + port, Path: "/api/x"}}); !errors.Is(err, ErrHTTPDenied) {
		t.Errorf("a plugin without http grants: %v", err)
	}
}

// TestDoLogsDenied: a denied request is a warning in the plugin's log,
// naming the method and the URL without its query; a second one within
// a second is not logged again.
func TestDoLogsDenied(t *testing.T) {
	var buf bytes.Buffer
	h, err := New(Options{Plugin: "p", Grants: Grants{HTTP: []string{"http://127.0.0.1:1/api/"}},
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []string{"http://127.0.0.1:1/admin?key=secret", "http://127.0.0.1:1/other"} {
		pu, _ := url.Parse(u)
		if _, err := h.Do(context.Background(), &http.Request{Method: "GET", URL: pu}); !errors.Is(err, ErrHTTPDenied) {
			t.Fatalf("Do %s: %v", u, err)
		}
	}
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("want one log line, got %q: %v", buf.String(), err)
	}
	if rec["level"] != "WARN" || rec["plugin"] != "p" || rec["method"] != "GET" || rec["url"] != "http://127.0.0.1:1/admin" ||
		!strings.HasPrefix(rec["msg"].(string), "http request denied") {
		t.Errorf("logged %v", rec)
	}
}
