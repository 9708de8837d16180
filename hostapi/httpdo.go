package hostapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Do sends an HTTP request for the plugin under the same grants and
// policy as http/fetch, for hosts of other plugin kinds (package
// wasip2's wasi:http): the URL and every redirect must match one of the
// plugin's http rules and every address the address policy, else
// ErrHTTPDenied; headers the transport owns (ForbiddenHeader) or that
// are malformed are refused; the request body is read up to
// HTTPPolicy.MaxRequestBody and the response body up to MaxResponseBody
// (ErrHTTPTooBig past either); the policy's timeout bounds it all. The
// response's Body holds the whole body, already read. Only the method,
// URL, header and body of req are used. A denied request is logged as a
// warning (see logDenied).
func (h *Host) Do(ctx context.Context, req *http.Request) (*http.Response, error) {
	resp, err := h.do(ctx, req)
	if errors.Is(err, ErrHTTPDenied) {
		h.logDenied(req)
	}
	return resp, err
}

// logDenied warns that req was denied, at most once a second per plugin
// (a guest looping over denied requests cannot flood the log): the
// guest may be told no more than that the request failed (a
// componentize-js fetch rejects every wasi:http error code with the same
// NetworkError), so the server's log names the reason. The URL is logged
// without its query, which may hold a credential.
func (h *Host) logDenied(req *http.Request) {
	now, last := time.Now().UnixNano(), h.deniedAt.Load()
	if now-last < int64(time.Second) || !h.deniedAt.CompareAndSwap(last, now) {
		return
	}
	var u url.URL
	if req.URL != nil {
		u = url.URL{Scheme: req.URL.Scheme, Host: req.URL.Host, Path: req.URL.Path}
	}
	h.log.Warn("http request denied: no http grant of the plugin allows it, or the address policy refuses its address",
		"method", req.Method, "url", u.String())
}

func (h *Host) do(ctx context.Context, req *http.Request) (*http.Response, error) {
	f := h.http
	if len(f.rules) == 0 {
		return nil, ErrHTTPDenied
	}
	method := strings.ToUpper(req.Method)
	if method == "" {
		method = http.MethodGet
	}
	if !validMethod(method) {
		return nil, fmt.Errorf("http: method %q not allowed", req.Method)
	}
	u := req.URL
	if u == nil || u.User != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("http: bad URL: %w", errBadRequest)
	}
	hdr := make(http.Header, len(req.Header))
	for k, vs := range req.Header {
		for _, v := range vs {
			if !validHeader(k, v) || ForbiddenHeader(k) {
				return nil, fmt.Errorf("http: header %q not allowed: %w", k, errBadRequest)
			}
			hdr.Add(k, v)
		}
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(io.LimitReader(req.Body, int64(f.policy.MaxRequestBody)+1))
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("http: reading the request body: %w", err)
		}
		if len(b) > f.policy.MaxRequestBody {
			return nil, fmt.Errorf("http: request body over %d bytes: %w", f.policy.MaxRequestBody, ErrHTTPTooBig)
		}
		body = b
	}
	fctx, cancel := context.WithTimeout(ctx, f.policy.Timeout)
	defer cancel()
	resp, err := f.send(fctx, method, u, hdr, body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, int64(f.policy.MaxResponseBody)+1))
	if err != nil {
		return nil, fmt.Errorf("http: reading the response: %w", err)
	}
	if len(b) > f.policy.MaxResponseBody {
		return nil, fmt.Errorf("http: response body over %d bytes: %w", f.policy.MaxResponseBody, ErrHTTPTooBig)
	}
	resp.Body = io.NopCloser(bytes.NewReader(b))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

// ForbiddenHeader reports whether a plugin may not set request header
// name: those the transport sets (Host, Connection, Content-Length,
// Transfer-Encoding, ...) and every Proxy-* header.
func ForbiddenHeader(name string) bool {
	ck := http.CanonicalHeaderKey(name)
	return forbiddenHeaders[ck] || strings.HasPrefix(ck, "Proxy-")
}

// ValidHeader reports whether a request header is well formed and within
// the sizes http/fetch allows (a name of at most 256 token characters, a
// value of at most 8 KiB without CR, LF or NUL).
func ValidHeader(name, value string) bool { return validHeader(name, value) }
