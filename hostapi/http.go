package hostapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// HTTPPolicy bounds http/fetch. Zero fields take the defaults given.
type HTTPPolicy struct {
	// Timeout caps one fetch, redirects included (default 30s); the
	// plugin's timeout_ms and the call's deadline can only shorten it.
	Timeout time.Duration
	// MaxRequestBody caps the request body (default 1 MiB).
	MaxRequestBody int
	// MaxResponseBody caps the response body (default 4 MiB); more is
	// abi.ErrTooBig.
	MaxResponseBody int
	// MaxRedirects caps the redirects followed (default 5).
	MaxRedirects int
	// Resolver resolves host names; nil means net.DefaultResolver. Tests
	// use it to make a name resolve to a chosen address.
	Resolver interface {
		LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
	}
	// DialContext connects to an already checked ip:port; nil means a
	// net.Dialer with a 10s timeout.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSClientConfig is the TLS configuration (nil: system roots).
	TLSClientConfig *tls.Config
	// WrapTransport, when set, wraps each plugin's transport (telemetry:
	// a client span and traceparent per request). The wrapper sees
	// every request and redirect hop the grants allowed; it must not
	// change where a request goes.
	WrapTransport func(http.RoundTripper) http.RoundTripper
}

func (p HTTPPolicy) withDefaults() HTTPPolicy {
	if p.Timeout <= 0 {
		p.Timeout = 30 * time.Second
	}
	if p.MaxRequestBody <= 0 {
		p.MaxRequestBody = 1 << 20
	}
	if p.MaxResponseBody <= 0 {
		p.MaxResponseBody = 4 << 20
	}
	if p.MaxRedirects <= 0 {
		p.MaxRedirects = 5
	}
	if p.Resolver == nil {
		p.Resolver = net.DefaultResolver
	}
	if p.DialContext == nil {
		p.DialContext = (&net.Dialer{Timeout: 10 * time.Second}).DialContext
	}
	return p
}

// fetcher implements http/fetch for one plugin: its rules, policy and its
// own transport (connections are never shared between plugins).
type fetcher struct {
	rules  []rule
	policy HTTPPolicy
	client *http.Client
}

var errAddressDenied = errors.New("address not allowed")

type ruleKey struct{}

func newFetcher(specs []string, p HTTPPolicy) (*fetcher, error) {
	f := &fetcher{policy: p.withDefaults()}
	for _, s := range specs {
		r, err := parseRule(s)
		if err != nil {
			return nil, err
		}
		f.rules = append(f.rules, r)
	}
	tr := &http.Transport{
		Proxy:                  nil, // never the environment's proxy
		DialContext:            f.dial,
		TLSClientConfig:        f.policy.TLSClientConfig,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        60 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	var rt http.RoundTripper = tr
	if f.policy.WrapTransport != nil {
		rt = f.policy.WrapTransport(tr)
	}
	f.client = &http.Client{
		Transport:     rt,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return f, nil
}

// dial resolves the host itself and connects to the first address the
// matched rule allows, by IP, so the address checked is the address used
// (no second resolution).
func (f *fetcher) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r, _ := ctx.Value(ruleKey{}).(*rule)
	if r == nil {
		return nil, errAddressDenied
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else if addrs, err = f.policy.Resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var lastErr error = errAddressDenied
	for _, a := range addrs {
		if !r.allows(a) {
			continue
		}
		c, err := f.policy.DialContext(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func (f *fetcher) match(u *url.URL) *rule {
	for i := range f.rules {
		if f.rules[i].matches(u) {
			return &f.rules[i]
		}
	}
	return nil
}

type fetchResult struct {
	Status     int               `json:"status"`
	Headers    map[string]string `json:"headers"`
	Body       *string           `json:"body,omitempty"`
	BodyBase64 *string           `json:"body_base64,omitempty"`
}

// forbiddenHeaders are set by the transport, never by a plugin.
var forbiddenHeaders = map[string]bool{
	"Host": true, "Connection": true, "Content-Length": true, "Transfer-Encoding": true,
	"Upgrade": true, "Te": true, "Trailer": true, "Keep-Alive": true,
	"Proxy-Authorization": true, "Proxy-Connection": true,
}

// fetch handles http/fetch. Errnos: -2 malformed params, method, URL or
// header; -1 no rule matches (the URL or a redirect) or every address of
// the host is refused by the address policy; -4 request or response body
// over its cap; -3 the call's ctx ended; -5 anything else (network error,
// timeout, too many redirects) with {"code": -32000, "message"}.
func (f *fetcher) fetch(ctx context.Context, params []byte) ([]byte, int32) {
	var p abi.HTTPFetchParams
	if !decode(params, &p) || p.URL == "" || p.TimeoutMS < 0 || (p.Body != nil && p.BodyBase64 != nil) {
		return nil, abi.ErrBadParams
	}
	method := strings.ToUpper(p.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		return nil, abi.ErrBadParams
	}
	var body []byte
	switch {
	case p.Body != nil:
		body = []byte(*p.Body)
	case p.BodyBase64 != nil:
		b, err := base64.StdEncoding.DecodeString(*p.BodyBase64)
		if err != nil {
			return nil, abi.ErrBadParams
		}
		body = b
	}
	if len(body) > f.policy.MaxRequestBody {
		return nil, abi.ErrTooBig
	}
	hdr := make(http.Header, len(p.Headers))
	for k, v := range p.Headers {
		ck := http.CanonicalHeaderKey(k)
		if !validHeader(k, v) || forbiddenHeaders[ck] || strings.HasPrefix(ck, "Proxy-") {
			return nil, abi.ErrBadParams
		}
		hdr.Set(ck, v)
	}
	timeout := f.policy.Timeout
	if p.TimeoutMS > 0 {
		timeout = min(timeout, time.Duration(p.TimeoutMS)*time.Millisecond)
	}
	fctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	u, err := url.Parse(p.URL)
	if err != nil || u.User != nil || u.Host == "" {
		return nil, abi.ErrBadParams
	}
	resp, err := f.send(fctx, method, u, hdr, body)
	if err != nil {
		switch {
		case ctx.Err() != nil:
			return nil, abi.ErrCanceled
		case errors.Is(err, ErrHTTPDenied):
			return nil, abi.ErrDenied
		case errors.Is(err, errBadRequest):
			return nil, abi.ErrBadParams
		case fctx.Err() != nil:
			return failed(codeFailed, "request timed out")
		case errors.Is(err, errRedirects), errors.Is(err, errBadRedirect):
			return failed(codeFailed, err.Error())
		}
		return failed(codeFailed, "request failed: "+netReason(err))
	}
	return f.readResponse(ctx, resp)
}

// Errors of send.
var (
	// ErrHTTPDenied is a request (or a redirect) that no http rule of
	// the plugin matches, or to a host every address of which the
	// address policy refuses.
	ErrHTTPDenied = errors.New("http: request not allowed by the plugin's grants")
	// ErrHTTPTooBig is a request or response body over its cap.
	ErrHTTPTooBig  = errors.New("http: body over its cap")
	errBadRequest  = errors.New("bad request")
	errRedirects   = errors.New("too many redirects")
	errBadRedirect = errors.New("bad redirect location")
)

// send sends a request under the rules and policy, following redirects
// (each hop checked again): it returns the final response, whose body
// the caller must close.
func (f *fetcher) send(ctx context.Context, method string, u *url.URL, hdr http.Header, body []byte) (*http.Response, error) {
	for hop := 0; ; hop++ {
		r := f.match(u)
		if r == nil {
			return nil, ErrHTTPDenied
		}
		req, err := http.NewRequestWithContext(context.WithValue(ctx, ruleKey{}, r), method, u.String(), bytes.NewReader(body))
		if err != nil {
			return nil, errBadRequest
		}
		if body == nil {
			req.Body, req.ContentLength = nil, 0
		}
		req.Header = hdr.Clone()
		resp, err := f.client.Do(req)
		if err != nil {
			if errors.Is(err, errAddressDenied) {
				return nil, ErrHTTPDenied
			}
			return nil, err
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			return resp, nil
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if hop >= f.policy.MaxRedirects {
			return nil, errRedirects
		}
		next, err := u.Parse(loc)
		if err != nil || next.User != nil {
			return nil, errBadRedirect
		}
		if resp.StatusCode == http.StatusSeeOther ||
			(resp.StatusCode <= http.StatusFound && method == http.MethodPost) {
			method, body = http.MethodGet, nil
			hdr.Del("Content-Type")
		}
		if next.Scheme != u.Scheme || next.Host != u.Host {
			hdr.Del("Authorization")
			hdr.Del("Cookie")
		}
		u = next
	}
}

func (f *fetcher) readResponse(ctx context.Context, resp *http.Response) ([]byte, int32) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(f.policy.MaxResponseBody)+1))
	switch {
	case len(b) > f.policy.MaxResponseBody:
		return nil, abi.ErrTooBig
	case err != nil && ctx.Err() != nil:
		return nil, abi.ErrCanceled
	case err != nil:
		return failed(codeFailed, "reading response failed")
	}
	res := fetchResult{Status: resp.StatusCode, Headers: make(map[string]string, len(resp.Header))}
	for k, v := range resp.Header {
		res.Headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	if utf8.Valid(b) {
		s := string(b)
		res.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(b)
		res.BodyBase64 = &s
	}
	return ok(res)
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// netReason is a short, address-free reason for a network error.
func netReason(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr):
		return "host not found"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "connection refused"
	}
	var tlsErr *tls.CertificateVerificationError
	if errors.As(err, &tlsErr) {
		return "certificate not trusted"
	}
	return "network error"
}

func validMethod(m string) bool {
	if m == "" || len(m) > 32 {
		return false
	}
	for _, c := range m {
		if c < 'A' || c > 'Z' {
			return false
		}
	}
	return m != http.MethodConnect
}

func validHeader(k, v string) bool {
	if k == "" || len(k) > 256 || len(v) > 8<<10 {
		return false
	}
	for _, c := range k {
		if c <= ' ' || c >= 0x7f || strings.ContainsRune("()<>@,;:\\\"/[]?={}", c) {
			return false
		}
	}
	return !strings.ContainsAny(v, "\r\n\x00")
}
