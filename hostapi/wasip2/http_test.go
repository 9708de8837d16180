package wasip2

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/hostapi"
	cm "github.com/wasmcp/wasmcp/internal/component"
)

const ht = "wasi:http/types#"

// request builds an outgoing request with the guest's calls: headers,
// then method, scheme, authority and path, and a body when body != "".
func request(t *testing.T, st *State, method cm.Case, authority, path, body string, hdr ...string) uint32 {
	t.Helper()
	f := mustCall(t, st, ht+"[constructor]fields")
	for i := 0; i+1 < len(hdr); i += 2 {
		if v := mustCall(t, st, ht+"[method]fields.append", f, hdr[i], []byte(hdr[i+1])); !isOK(v) {
			t.Fatalf("append %s: %v", hdr[i], v)
		}
	}
	r := mustCall(t, st, ht+"[constructor]outgoing-request", f)
	for _, c := range []struct {
		name string
		v    any
	}{
		{"set-method", method}, {"set-scheme", cm.Some{Value: cm.Case{Name: "HTTP"}}},
		{"set-authority", cm.Some{Value: authority}}, {"set-path-with-query", cm.Some{Value: path}},
	} {
		if v := mustCall(t, st, ht+"[method]outgoing-request."+c.name, r, c.v); !isOK(v) {
			t.Fatalf("%s(%v): %v", c.name, c.v, v)
		}
	}
	if body != "" {
		b := fsOK(t, mustCall(t, st, ht+"[method]outgoing-request.body", r))
		w := fsOK(t, mustCall(t, st, ht+"[method]outgoing-body.write", b))
		if v := mustCall(t, st, bwf, w, []byte(body)); !isOK(v) {
			t.Fatalf("body write: %v", v)
		}
		mustCall(t, st, "wasi:io/poll#[method]pollable.block", mustCall(t, st, "wasi:io/streams#[method]output-stream.subscribe", w))
		if v := mustCall(t, st, ht+"[static]outgoing-body.finish", b, nil); !isOK(v) {
			t.Fatalf("finish: %v", v)
		}
	}
	return r.(uint32)
}

// send hands r to outgoing-handler and waits for its future: the
// response's representation, or the error-code.
func send(t *testing.T, st *State, r uint32) (uint32, string) {
	t.Helper()
	v := mustCall(t, st, "wasi:http/outgoing-handler#handle", r, nil)
	res := v.(cm.ResultValue)
	if res.Err {
		return 0, res.Value.(cm.Case).Name
	}
	fut := res.Value
	mustCall(t, st, "wasi:io/poll#poll", []any{mustCall(t, st, ht+"[method]future-incoming-response.subscribe", fut)})
	got := mustCall(t, st, ht+"[method]future-incoming-response.get", fut)
	inner := got.(cm.Some).Value.(cm.ResultValue).Value.(cm.ResultValue)
	if inner.Err {
		return 0, inner.Value.(cm.Case).Name
	}
	if again := mustCall(t, st, ht+"[method]future-incoming-response.get", fut); again != (cm.Some{Value: unit(false)}) {
		t.Fatalf("second get: %#v", again)
	}
	return inner.Value.(uint32), ""
}

func TestHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Echo", r.Header.Get("X-Test"))
		w.WriteHeader(201)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), b)
	}))
	defer srv.Close()
	authority := strings.TrimPrefix(srv.URL, "http://")
	h, err := hostapi.New(hostapi.Options{Plugin: "p", Grants: hostapi.Grants{HTTP: []string{srv.URL + "/api/"}}})
	if err != nil {
		t.Fatal(err)
	}
	st := New(Options{HTTP: h})
	defer st.Close()

	resp, code := send(t, st, request(t, st, cm.Case{Name: "post"}, authority, "/api/x?q=1", "hello", "x-test", "yes"))
	if code != "" {
		t.Fatalf("granted request: %s", code)
	}
	if s := mustCall(t, st, ht+"[method]incoming-response.status", resp); s != uint64(201) {
		t.Fatalf("status %v", s)
	}
	hd := mustCall(t, st, ht+"[method]incoming-response.headers", resp)
	if v := mustCall(t, st, ht+"[method]fields.get", hd, "X-Echo").([]any); len(v) != 1 || string(v[0].([]byte)) != "yes" {
		t.Fatalf("x-echo %v", v)
	}
	if v := mustCall(t, st, ht+"[method]fields.set", hd, "x", []any{[]byte("y")}); v != fail(cm.Case{Name: "immutable"}) {
		t.Fatalf("set on response headers: %#v", v)
	}
	body := fsOK(t, mustCall(t, st, ht+"[method]incoming-response.consume", resp))
	in := fsOK(t, mustCall(t, st, ht+"[method]incoming-body.stream", body))
	var got []byte
	for range 100 {
		v := mustCall(t, st, "wasi:io/streams#[method]input-stream.blocking-read", in, uint64(4)).(cm.ResultValue)
		if v.Err {
			break
		}
		got = append(got, v.Value.([]byte)...)
	}
	if string(got) != "POST /api/x?q=1 hello" {
		t.Fatalf("body %q", got)
	}
	mustCall(t, st, ht+"[static]incoming-body.finish", body)

	// Refused by the grants: a path outside the rule, and a redirect-free
	// request with no client at all.
	if _, code := send(t, st, request(t, st, cm.Case{Name: "get"}, authority, "/admin", "")); code != "HTTP-request-denied" {
		t.Fatalf("request outside the grants: %q", code)
	}
	bare := New(Options{})
	defer bare.Close()
	if _, code := send(t, bare, request(t, bare, cm.Case{Name: "get"}, authority, "/api/x", "")); code != "HTTP-request-denied" {
		t.Fatalf("request without a client: %q", code)
	}
}

func TestHTTPBadInput(t *testing.T) {
	st := New(Options{Limits: Limits{MaxHTTPBody: 8}})
	defer st.Close()
	f := mustCall(t, st, ht+"[constructor]fields")
	for _, c := range []struct{ name, value, want string }{
		{"host", "evil", "forbidden"},
		{"proxy-authorization", "x", "forbidden"},
		{"bad name", "x", "invalid-syntax"},
		{"x", "a\r\nb", "invalid-syntax"},
	} {
		if v := mustCall(t, st, ht+"[method]fields.append", f, c.name, []byte(c.value)); v != fail(cm.Case{Name: c.want}) {
			t.Errorf("append %q: %#v, want %s", c.name, v, c.want)
		}
	}
	if v := mustCall(t, st, ht+"[static]fields.from-list", []any{[]any{"host", []byte("x")}}); v != fail(cm.Case{Name: "forbidden"}) {
		t.Errorf("from-list with host: %#v", v)
	}
	big := make([]any, maxFields+1)
	for i := range big {
		big[i] = []any{fmt.Sprintf("h%d", i), []byte("v")}
	}
	if _, err := call(t.Context(), st, ht+"[static]fields.from-list", big); err == nil {
		t.Error("more than maxFields entries accepted")
	}
	r := mustCall(t, st, ht+"[constructor]outgoing-request", mustCall(t, st, ht+"[constructor]fields"))
	for _, c := range []struct {
		name string
		v    any
	}{
		{"set-method", cm.Case{Name: "other", Value: "BAD METHOD"}},
		{"set-method", cm.Case{Name: "connect"}},
		{"set-scheme", cm.Some{Value: cm.Case{Name: "other", Value: "ftp"}}},
		{"set-authority", cm.Some{Value: "a b"}},
		{"set-authority", cm.Some{Value: "user@host"}},
		{"set-path-with-query", cm.Some{Value: "http://elsewhere/x"}},
	} {
		if v := mustCall(t, st, ht+"[method]outgoing-request."+c.name, r, c.v); isOK(v) {
			t.Errorf("%s(%v) accepted", c.name, c.v)
		}
	}
	// No authority: the URI is invalid.
	if v := mustCall(t, st, "wasi:http/outgoing-handler#handle", r, nil); v != fail(cm.Case{Name: "HTTP-request-URI-invalid"}) {
		t.Errorf("handle without an authority: %#v", v)
	}
	if _, err := call(t.Context(), st, "wasi:http/outgoing-handler#handle", r, nil); err == nil {
		t.Error("a request handled twice")
	}
	// A body over MaxHTTPBody fails its write and its finish.
	r2 := mustCall(t, st, ht+"[constructor]outgoing-request", mustCall(t, st, ht+"[constructor]fields"))
	b := fsOK(t, mustCall(t, st, ht+"[method]outgoing-request.body", r2))
	if v := mustCall(t, st, ht+"[method]outgoing-request.body", r2); isOK(v) {
		t.Error("body taken twice")
	}
	w := fsOK(t, mustCall(t, st, ht+"[method]outgoing-body.write", b))
	v := mustCall(t, st, write, w, []byte("123456789")).(cm.ResultValue)
	if !v.Err {
		t.Fatal("a write over MaxHTTPBody accepted")
	}
	e := v.Value.(cm.Case).Value
	if c := mustCall(t, st, ht+"http-error-code", e); c != (cm.Some{Value: cm.Case{Name: "HTTP-request-body-size", Value: nil}}) {
		t.Errorf("http-error-code: %#v", c)
	}
	if v := mustCall(t, st, ht+"[static]outgoing-body.finish", b, nil); v != fail(cm.Case{Name: "HTTP-request-body-size", Value: nil}) {
		t.Errorf("finish of an oversized body: %#v", v)
	}
	if v := mustCall(t, st, write, w, []byte("1")); v != fail(cm.Case{Name: "closed"}) {
		t.Errorf("write after finish: %#v", v)
	}
	// Server-side resources do not exist.
	if _, err := call(t.Context(), st, ht+"[method]incoming-request.method", r); err == nil {
		t.Error("incoming-request.method on an outgoing request")
	}
}
