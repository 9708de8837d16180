package hostapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// mapResolver resolves names from a table (and fails otherwise).
type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var loopback = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

func testServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, string) {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	return s, u.Port()
}

func fetch(t *testing.T, rules []string, pol HTTPPolicy, params string) (map[string]any, int32) {
	t.Helper()
	h, err := New(Options{Plugin: "p", Grants: Grants{HTTP: rules}, HTTP: pol})
	if err != nil {
		t.Fatal(err)
	}
	res, errno := h.Bind(nil).Call(context.Background(), abi.HostHTTPFetch, []byte(params))
	var m map[string]any
	if len(res) > 0 {
		if err := json.Unmarshal(res, &m); err != nil {
			t.Fatalf("result %s: %v", res, err)
		}
	}
	return m, errno
}

func TestFetchAllowedWhenGrantedExplicitly(t *testing.T) {
	_, port := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/bin" {
			w.Write([]byte{0xff, 0x00, 0xfe})
			return
		}
		w.Header().Set("X-Echo", r.Header.Get("X-Test"))
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, readAll(r))
	})
	pol := HTTPPolicy{Resolver: mapResolver{"svc.internal": loopback, "localhost": loopback}}
	for _, rule := range []string{"http://127.0.0.1:" + port + "/api/", "http://localhost:" + port + "/api/", "http://svc.internal:" + port + "/api/"} {
		t.Run(rule, func(t *testing.T) {
			host := strings.Split(strings.TrimPrefix(rule, "http://"), ":")[0]
			base := "http://" + host + ":" + port
			m, errno := fetch(t, []string{rule}, pol, `{"method":"post","url":"`+base+`/api/x","headers":{"x-test":"yes"},"body":"hi","timeout_ms":5000}`)
			if errno != 0 || m["status"] != 200.0 || m["body"] != "POST /api/x hi" {
				t.Fatalf("fetch = %v, %d", m, errno)
			}
			if hd, _ := m["headers"].(map[string]any); hd["x-echo"] != "yes" {
				t.Errorf("headers %v", m["headers"])
			}
			if _, errno := fetch(t, []string{rule}, pol, `{"url":"`+base+`/other"}`); errno != abi.ErrDenied {
				t.Errorf("path outside the prefix: errno %d, want -1", errno)
			}
			if _, errno := fetch(t, []string{rule}, pol, `{"url":"`+base+`/api/../admin"}`); errno != abi.ErrDenied {
				t.Errorf("dot segments: errno %d, want -1", errno)
			}
			m, errno = fetch(t, []string{"http://127.0.0.1:" + port + "/"}, pol, `{"url":"http://127.0.0.1:`+port+`/bin"}`)
			if errno != 0 || m["body_base64"] != "/wD+" {
				t.Errorf("binary body: %v, %d", m, errno)
			}
		})
	}
}

func readAll(r *http.Request) string {
	b := make([]byte, 100)
	n, _ := r.Body.Read(b)
	return string(b[:n])
}

// TestFetchRefusesPrivateAddresses: loopback, metadata and names resolving
// to them are refused unless a rule names the address.
func TestFetchRefusesPrivateAddresses(t *testing.T) {
	_, port := testServer(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("secret")) })
	pol := HTTPPolicy{Resolver: mapResolver{
		"evil.test":     loopback,
		"meta.test":     {netip.MustParseAddr("169.254.169.254")},
		"mixed.test":    {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("::1")},
		"meta.internal": {netip.MustParseAddr("169.254.169.254")},
	}}
	tests := []struct{ name, rule, url string }{
		{"loopback ip without rule", "https://example.com/", "http://127.0.0.1:" + port + "/"},
		{"metadata ip without rule", "https://example.com/", "http://169.254.169.254/latest/meta-data/"},
		{"name resolving to loopback", "http://evil.test:" + port + "/", "http://evil.test:" + port + "/"},
		{"name resolving to metadata", "http://meta.test/", "http://meta.test/"},
		{"name resolving to private only", "http://mixed.test:" + port + "/", "http://mixed.test:" + port + "/"},
		{"metadata under a private suffix", "http://meta.internal/", "http://meta.internal/"},
		{"ipv4-mapped loopback", "http://[::ffff:7f00:1]:" + port + "/", "http://127.0.0.1:" + port + "/"},
		{"other port", "http://127.0.0.1:1/", "http://127.0.0.1:" + port + "/"},
		{"other scheme", "https://127.0.0.1:" + port + "/", "http://127.0.0.1:" + port + "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, errno := fetch(t, []string{tt.rule}, pol, `{"url":"`+tt.url+`","timeout_ms":2000}`)
			if errno != abi.ErrDenied {
				t.Errorf("fetch = %v, %d; want -1", m, errno)
			}
		})
	}
}

func TestFetchRedirects(t *testing.T) {
	_, target := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s auth=%q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	})
	_, port := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/local":
			http.Redirect(w, r, "/final", http.StatusFound)
		case "/final":
			fmt.Fprintf(w, "%s final auth=%q", r.Method, r.Header.Get("Authorization"))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusTemporaryRedirect)
		}
	})
	pol := HTTPPolicy{Resolver: mapResolver{"evil.test": loopback}}
	self := "http://127.0.0.1:" + port + "/"
	to := func(u string) string {
		return `{"url":"` + self + `go?to=` + url.QueryEscape(u) + `","headers":{"Authorization":"Bearer x"}}`
	}

	m, errno := fetch(t, []string{self}, pol, `{"method":"POST","url":"`+self+`local","body":"b","headers":{"Authorization":"Bearer x"}}`)
	if errno != 0 || m["body"] != `GET final auth="Bearer x"` {
		t.Errorf("same-origin 302: %v, %d", m, errno)
	}
	if _, errno := fetch(t, []string{self}, pol, to("http://127.0.0.1:"+target+"/x")); errno != abi.ErrDenied {
		t.Errorf("redirect to an ungranted loopback port: %d, want -1", errno)
	}
	if _, errno := fetch(t, []string{self, "http://evil.test:" + target + "/"}, pol, to("http://evil.test:"+target+"/x")); errno != abi.ErrDenied {
		t.Errorf("redirect to a name resolving to loopback: %d, want -1", errno)
	}
	if _, errno := fetch(t, []string{self}, pol, to("http://169.254.169.254/latest")); errno != abi.ErrDenied {
		t.Errorf("redirect to metadata without rule: %d, want -1", errno)
	}
	m, errno = fetch(t, []string{self, "http://127.0.0.1:" + target + "/"}, pol, to("http://127.0.0.1:"+target+"/x"))
	if errno != 0 || m["body"] != `GET /x auth=""` {
		t.Errorf("granted cross-origin redirect: %v, %d (Authorization must be dropped)", m, errno)
	}
	m, errno = fetch(t, []string{self}, pol, `{"url":"`+self+`loop"}`)
	if errno != abi.ErrFailed || m["message"] != "too many redirects" {
		t.Errorf("redirect loop: %v, %d", m, errno)
	}
}

func TestFetchLimits(t *testing.T) {
	_, port := testServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Write(make([]byte, 2000))
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	})
	self := "http://127.0.0.1:" + port + "/"
	pol := HTTPPolicy{MaxResponseBody: 1000, MaxRequestBody: 10}
	tests := []struct {
		name, params string
		errno        int32
	}{
		{"response too big", `{"url":"` + self + `big"}`, abi.ErrTooBig},
		{"request too big", `{"url":"` + self + `","body":"` + strings.Repeat("x", 11) + `"}`, abi.ErrTooBig},
		{"timeout", `{"url":"` + self + `slow","timeout_ms":100}`, abi.ErrFailed},
		{"connection refused", `{"url":"http://127.0.0.1:1/"}`, abi.ErrFailed},
		{"body and body_base64", `{"url":"` + self + `","body":"a","body_base64":"YQ=="}`, abi.ErrBadParams},
		{"bad base64", `{"url":"` + self + `","body_base64":"%%%"}`, abi.ErrBadParams},
		{"host header", `{"url":"` + self + `","headers":{"Host":"x"}}`, abi.ErrBadParams},
		{"header injection", `{"url":"` + self + `","headers":{"X":"a\r\nB: c"}}`, abi.ErrBadParams},
		{"bad method", `{"url":"` + self + `","method":"GE T"}`, abi.ErrBadParams},
		{"user info", `{"url":"http://u:p@127.0.0.1:` + port + `/"}`, abi.ErrBadParams},
		{"no url", `{}`, abi.ErrBadParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, errno := fetch(t, []string{self, "http://127.0.0.1:1/"}, pol, tt.params)
			if errno != tt.errno {
				t.Errorf("fetch = %v, %d; want %d", m, errno, tt.errno)
			}
		})
	}

	h, _ := New(Options{Plugin: "p", Grants: Grants{HTTP: []string{self}}})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, errno := h.Bind(nil).Call(ctx, abi.HostHTTPFetch, []byte(`{"url":"`+self+`slow"}`)); errno != abi.ErrCanceled {
		t.Errorf("call deadline: errno %d, want -3", errno)
	}
}

func TestRuleMatching(t *testing.T) {
	tests := []struct {
		rule, url string
		want      bool
	}{
		{"https://api.example.com/", "https://API.example.com./v1/x", true},
		{"https://api.example.com/", "https://api.example.com:443/", true},
		{"https://api.example.com/", "https://api.example.com:8443/", false},
		{"https://api.example.com/", "http://api.example.com/", false},
		{"https://api.example.com/", "https://evil.com/api.example.com/", false},
		{"https://api.example.com/v1", "https://api.example.com/v1", true},
		{"https://api.example.com/v1", "https://api.example.com/v1/a", true},
		{"https://api.example.com/v1", "https://api.example.com/v10", false},
		{"https://api.example.com/v1/", "https://api.example.com/v1/a", true},
		{"https://api.example.com/v1/", "https://api.example.com/v1/..%2fadmin", false},
		{"https://api.example.com/v1/", "https://api.example.com/v1/%2e%2e/admin", false},
		{"http://[::1]:8080/", "http://[::1]:8080/x", true},
		{"http://10.0.0.1/", "http://10.0.0.1:80/", true},
	}
	for _, tt := range tests {
		r, err := parseRule(tt.rule)
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.matches(u); got != tt.want {
			t.Errorf("%s matches %s = %v, want %v", tt.rule, tt.url, got, tt.want)
		}
	}
}

func TestAddressPolicy(t *testing.T) {
	name, _ := parseRule("https://api.example.com/")
	lit, _ := parseRule("http://169.254.169.254/")
	internal, _ := parseRule("http://db.internal/")
	tests := []struct {
		r    rule
		addr string
		want bool
	}{
		{name, "93.184.216.34", true},
		{name, "2606:2800:220:1:248:1893:25c8:1946", true},
		{name, "127.0.0.1", false},
		{name, "::1", false},
		{name, "10.1.2.3", false},
		{name, "172.16.0.1", false},
		{name, "192.168.1.1", false},
		{name, "169.254.169.254", false},
		{name, "fd00:ec2::254", false},
		{name, "100.64.0.1", false},
		{name, "100.100.100.200", false},
		{name, "0.0.0.0", false},
		{name, "::", false},
		{name, "224.0.0.1", false},
		{name, "ff02::1", false},
		{name, "fe80::1", false},
		{name, "::ffff:127.0.0.1", false},
		{name, "64:ff9b::7f00:1", false},
		{name, "2002:7f00:1::", false},
		{lit, "169.254.169.254", true},
		{lit, "169.254.169.253", false},
		{internal, "10.0.0.5", true},
		{internal, "169.254.169.254", false},
	}
	for _, tt := range tests {
		if got := tt.r.allows(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("rule %s allows %s = %v, want %v", tt.r.host, tt.addr, got, tt.want)
		}
	}
}

// FuzzParseRule: the rule parser never panics, and an accepted rule
// matches the URL it was written as.
func FuzzParseRule(f *testing.F) {
	for _, s := range []string{
		"https://api.example.com/", "http://127.0.0.1:8080/v1", "http://[::1]:80/", "https://x.internal",
		"ftp://x/", "https://u@x/", "https://x/a/../b", "http://%41/", "https://x:99999/", "https://x/?", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRule(s)
		if err != nil {
			return
		}
		if r.scheme != "http" && r.scheme != "https" || r.host == "" || r.port == "" || r.prefix == "" || r.prefix[0] != '/' {
			t.Fatalf("accepted %q as %+v", s, r)
		}
		u, err := url.Parse(s)
		if err == nil && u.Path != "" && !hasDotSegment(u.EscapedPath()) && !strings.Contains(strings.ToLower(u.EscapedPath()), "%2") && !r.matches(u) {
			t.Fatalf("rule %q does not match itself", s)
		}
	})
}
