package server

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpClient talks to a server's HTTP handler with one bearer token.
type httpClient struct {
	t      testing.TB
	url    string
	token  string
	header map[string]string // sent with every request
}

// httpResult is one answer: status, headers and the JSON-RPC response.
type httpResult struct {
	status int
	header http.Header
	response
	raw string
}

func (c *httpClient) post(body any, hdr map[string]string) httpResult {
	c.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range c.header {
		req.Header.Set(k, v)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	r := httpResult{status: resp.StatusCode, header: resp.Header, raw: string(raw)}
	s := string(raw)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The response is the last data line.
		lines := strings.Split(strings.TrimSpace(s), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			if strings.HasPrefix(lines[i], "data: ") {
				s = strings.TrimPrefix(lines[i], "data: ")
				break
			}
		}
	}
	_ = json.Unmarshal([]byte(s), &r.response)
	return r
}

// modern sends a 2026-07-28 request declaring elicitation.
func (c *httpClient) modern(method string, params map[string]any) httpResult {
	c.t.Helper()
	return c.modernCaps(method, params, map[string]any{"elicitation": map[string]any{}})
}

// modernCaps sends a 2026-07-28 request declaring caps, with the headers
// the transport checks against the body: Mcp-Method, and Mcp-Name from
// the body's name, uri or taskId.
func (c *httpClient) modernCaps(method string, params, caps map[string]any) httpResult {
	c.t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	params["_meta"] = modernMeta(caps)
	hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	for _, key := range []string{"name", "uri", "taskId"} {
		if v, ok := params[key].(string); ok {
			hdr["Mcp-Name"] = v
		}
	}
	return c.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, hdr)
}

// names lists the "name" of each item of a list result.
func (r httpResult) names(t testing.TB, key string) []string {
	t.Helper()
	var res map[string]json.RawMessage
	var items []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || json.Unmarshal(res[key], &items) != nil {
		t.Fatalf("list result %s: %v", r.raw, err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

func serveHTTP(t testing.TB, srv *Server) string {
	ts := httptest.NewServer(srv.HTTPHandler())
	t.Cleanup(ts.Close)
	return ts.URL
}

// scopedAuth is scopedConfig's [auth] table: a token without scopes and
// two with kitchen:use.
const scopedAuth = `[auth]
tokens = ["reader-0123456789abcdef"]
[[auth.token]]
name = "cook"
token = "cook-0123456789abcdef"
scopes = ["kitchen:use"]
[[auth.token]]
name = "chef"
token = "chef-0123456789abcdef"
scopes = ["kitchen:use"]`

// scopedConfig serves the kitchen plugin to kitchen:use only and the ping
// plugin to every token.
const scopedConfig = testLimits + scopedAuth + `
[[plugins]]
name = "kitchen"
path = "kitchen.wasm"
scopes = ["kitchen:use"]
[plugins.grants]
elicitation = true
[[plugins]]
name = "ping"
path = "../../../examples/wat-ping/wat-ping.wasm"
`

func TestHTTPBearerAndScopes(t *testing.T) {
	srv := newTestServer(t, scopedConfig)
	base := serveHTTP(t, srv)
	anon := &httpClient{t: t, url: base + "/mcp"}
	reader := &httpClient{t: t, url: base + "/mcp", token: "reader-0123456789abcdef"}
	cook := &httpClient{t: t, url: base + "/mcp", token: "cook-0123456789abcdef"}

	t.Run("refusals", func(t *testing.T) {
		for _, tt := range []struct {
			name   string
			c      *httpClient
			url    string
			status int
		}{
			{"no token", anon, base + "/mcp", 401},
			{"wrong token", &httpClient{t: t, url: base + "/mcp", token: "nope-0123456789abcdef"}, base + "/mcp", 401},
			{"token in query", anon, base + "/mcp?access_token=cook-0123456789abcdef", 401},
			{"token in query and header", cook, base + "/mcp?access_token=cook-0123456789abcdef", 401},
		} {
			c := *tt.c
			c.url = tt.url
			r := c.modern("tools/list", nil)
			if r.status != tt.status || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: %d %q", tt.name, r.status, r.header.Get("WWW-Authenticate"))
			}
			if r.Error == nil {
				t.Errorf("%s: body %q is not a JSON-RPC error", tt.name, r.raw)
			}
		}
	})

	t.Run("lists are filtered", func(t *testing.T) {
		got := reader.modern("tools/list", nil).names(t, "tools")
		if strings.Join(got, ",") != "ping" {
			t.Errorf("reader sees tools %v, want only ping", got)
		}
		if got := reader.modern("prompts/list", nil).names(t, "prompts"); len(got) != 0 {
			t.Errorf("reader sees prompts %v", got)
		}
		if got := reader.modern("resources/list", nil).names(t, "resources"); len(got) != 0 {
			t.Errorf("reader sees resources %v", got)
		}
		r := cook.modern("tools/list", nil)
		got = r.names(t, "tools")
		if !strings.Contains(strings.Join(got, ","), "echo") || !strings.Contains(strings.Join(got, ","), "ping") {
			t.Errorf("cook sees tools %v", got)
		}
		var scope struct {
			CacheScope string `json:"cacheScope"`
		}
		json.Unmarshal(r.Result, &scope)
		if scope.CacheScope != "private" {
			t.Errorf("authenticated list cacheScope = %q", scope.CacheScope)
		}
	})

	t.Run("hidden answers like unknown", func(t *testing.T) {
		for _, tt := range []struct {
			method       string
			hidden, none map[string]any
		}{
			{"tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, map[string]any{"name": "ech0", "arguments": map[string]any{"text": "x"}}},
			{"prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}}, map[string]any{"name": "gr33t", "arguments": map[string]any{"name": "x"}}},
			{"resources/read", map[string]any{"uri": "kitchen://static"}, map[string]any{"uri": "kitchen://nothing"}},
		} {
			h, n := reader.modern(tt.method, tt.hidden), reader.modern(tt.method, tt.none)
			if h.Error == nil || n.Error == nil || h.status != n.status || h.Error.Code != n.Error.Code {
				t.Errorf("%s: hidden %d %s, unknown %d %s", tt.method, h.status, h.raw, n.status, n.raw)
				continue
			}
			norm := func(s string) string {
				for _, w := range []string{"echo", "ech0", "greet", "gr33t", "kitchen://static", "kitchen://nothing"} {
					s = strings.ReplaceAll(s, w, "X")
				}
				return s
			}
			if norm(h.raw) != norm(n.raw) {
				t.Errorf("%s: hidden and unknown differ:\n%s\n%s", tt.method, h.raw, n.raw)
			}
			if h.status == http.StatusForbidden {
				t.Errorf("%s: a hidden plugin answered 403", tt.method)
			}
		}
		if r := cook.modern("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}); r.Error != nil || !strings.Contains(string(r.Result), "hi") {
			t.Errorf("cook calls echo: %s", r.raw)
		}
		if r := reader.modern("tools/call", map[string]any{"name": "ping"}); r.Error != nil || !strings.Contains(string(r.Result), "pong") {
			t.Errorf("reader calls ping: %s", r.raw)
		}
	})

	t.Run("legacy session", func(t *testing.T) {
		init := reader.post(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
			"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}}, nil)
		sid := init.header.Get("Mcp-Session-Id")
		hdr := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
		r := reader.post(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, hdr)
		if got := r.names(t, "tools"); strings.Join(got, ",") != "ping" {
			t.Errorf("legacy reader sees %v", got)
		}
		// The session is the reader's: the cook cannot use it.
		if r := cook.post(map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, hdr); r.status != 404 {
			t.Errorf("cook on the reader's session: %d", r.status)
		}
	})
}

// TestHTTPRequestState: requestState over HTTP is bound to the caller that
// received it and to its request; forged, tampered or replayed by someone
// else it is -32602.
func TestHTTPRequestState(t *testing.T) {
	srv := newTestServer(t, scopedConfig)
	base := serveHTTP(t, srv)
	cook := &httpClient{t: t, url: base + "/mcp", token: "cook-0123456789abcdef"}
	chef := &httpClient{t: t, url: base + "/mcp", token: "chef-0123456789abcdef"}
	r1 := cook.modern("tools/call", map[string]any{"name": "ask"})
	tr := decodeTool(t, r1.response)
	if tr.ResultType != "input_required" || tr.RequestState == "" {
		t.Fatalf("round 1: %s", r1.raw)
	}
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Bo"}}}
	second := func(c *httpClient, name, state string) httpResult {
		return c.modern("tools/call", map[string]any{"name": name, "arguments": map[string]any{"text": "x"}, "inputResponses": answer, "requestState": state})
	}
	for _, tt := range []struct {
		name  string
		c     *httpClient
		tool  string
		state string
	}{
		{"replayed by another caller", chef, "ask", tr.RequestState},
		{"tampered", cook, "ask", tr.RequestState[:len(tr.RequestState)-2] + "AA"},
		{"forged", cook, "ask", "wasmcp1." + base64.RawURLEncoding.EncodeToString([]byte(`{"s":"asked-1"}`))},
		{"for another tool", cook, "echo", tr.RequestState},
	} {
		r := second(tt.c, tt.tool, tt.state)
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s: %d %s, want -32602", tt.name, r.status, r.raw)
		}
	}
	r2 := second(cook, "ask", tr.RequestState)
	if tr2 := decodeTool(t, r2.response); tr2.ResultType != "complete" || !strings.Contains(tr2.text(), "Bo") {
		t.Fatalf("round 2: %s", r2.raw)
	}
}

// jwtSigner signs test access tokens.
type jwtSigner struct {
	alg, kid string
	key      crypto.Signer
}

func (s *jwtSigner) jwk() map[string]any {
	b64 := base64.RawURLEncoding.EncodeToString
	switch k := s.key.Public().(type) {
	case *rsa.PublicKey:
		return map[string]any{"kty": "RSA", "kid": s.kid, "n": b64(k.N.Bytes()), "e": b64(big.NewInt(int64(k.E)).Bytes())}
	case *ecdsa.PublicKey:
		b, _ := k.Bytes()
		return map[string]any{"kty": "EC", "kid": s.kid, "crv": "P-256", "x": b64(b[1:33]), "y": b64(b[33:])}
	}
	return nil
}

func (s *jwtSigner) sign(t testing.TB, claims map[string]any) string {
	b64 := base64.RawURLEncoding.EncodeToString
	h, _ := json.Marshal(map[string]any{"alg": s.alg, "kid": s.kid, "typ": "JWT"})
	c, _ := json.Marshal(claims)
	in := b64(h) + "." + b64(c)
	d := sha256.Sum256([]byte(in))
	var sig []byte
	switch k := s.key.(type) {
	case *rsa.PrivateKey:
		sig, _ = rsa.SignPKCS1v15(rand.Reader, k, crypto.SHA256, d[:])
	case *ecdsa.PrivateKey:
		r, ss, err := ecdsa.Sign(rand.Reader, k, d[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = make([]byte, 64)
		r.FillBytes(sig[:32])
		ss.FillBytes(sig[32:])
	}
	return in + "." + b64(sig)
}

func TestHTTPJWT(t *testing.T) {
	rk, _ := rsa.GenerateKey(rand.Reader, 2048)
	ek, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	rs := &jwtSigner{"RS256", "r1", rk}
	es := &jwtSigner{"ES256", "e1", ek}
	jwks, _ := json.Marshal(map[string]any{"keys": []any{rs.jwk(), es.jwk()}})
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, jwks, 0o600); err != nil {
		t.Fatal(err)
	}
	const iss, resource = "https://auth.example.test", "https://mcp.example.test/mcp"
	cfg := strings.Replace(scopedConfig, scopedAuth, fmt.Sprintf(`[auth]
mode = "jwt"
issuer = %q
resource = %q
jwks_file = %q
required_scopes = ["mcp"]`, iss, resource, path), 1)
	srv := newTestServer(t, cfg)
	base := serveHTTP(t, srv)
	now := time.Now()
	claims := func(mod map[string]any) map[string]any {
		c := map[string]any{"iss": iss, "aud": resource, "sub": "u1", "exp": now.Add(time.Hour).Unix(), "scope": "mcp kitchen:use"}
		for k, v := range mod {
			c[k] = v
		}
		return c
	}
	prm := "https://mcp.example.test/.well-known/oauth-protected-resource/mcp"
	for _, tt := range []struct {
		name      string
		token     string
		status    int
		challenge []string
		tools     string // with status 200: must contain
		hidden    string // with status 200: must not contain
	}{
		{name: "rs256 with kitchen scope", token: rs.sign(t, claims(nil)), status: 200, tools: "echo"},
		{name: "es256 without kitchen scope", token: es.sign(t, claims(map[string]any{"scope": "mcp"})), status: 200, tools: "ping", hidden: "echo"},
		{name: "missing", status: 401, challenge: []string{`resource_metadata="` + prm + `"`, `scope="mcp"`}},
		{name: "expired", token: rs.sign(t, claims(map[string]any{"exp": now.Add(-time.Hour).Unix()})), status: 401, challenge: []string{`error="invalid_token"`, `resource_metadata="` + prm + `"`}},
		{name: "wrong audience", token: rs.sign(t, claims(map[string]any{"aud": "https://other.example.test/mcp"})), status: 401, challenge: []string{`error="invalid_token"`}},
		{name: "wrong issuer", token: rs.sign(t, claims(map[string]any{"iss": "https://evil.example.test"})), status: 401, challenge: []string{`error="invalid_token"`}},
		{name: "unknown kid", token: (&jwtSigner{"RS256", "r2", rk}).sign(t, claims(nil)), status: 401, challenge: []string{`error="invalid_token"`}},
		{name: "insufficient scope", token: rs.sign(t, claims(map[string]any{"scope": "kitchen:use"})), status: 403, challenge: []string{`error="insufficient_scope"`, `scope="mcp"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &httpClient{t: t, url: base + "/mcp", token: tt.token}
			r := c.modern("tools/list", nil)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.raw)
			}
			ch := r.header.Get("WWW-Authenticate")
			for _, want := range tt.challenge {
				if !strings.Contains(ch, want) {
					t.Errorf("WWW-Authenticate %q lacks %s", ch, want)
				}
			}
			if tt.status == 200 {
				names := strings.Join(r.names(t, "tools"), ",")
				if !strings.Contains(names, tt.tools) || (tt.hidden != "" && strings.Contains(names, tt.hidden)) {
					t.Errorf("tools %s", names)
				}
			}
		})
	}
	for _, p := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Resource             string   `json:"resource"`
			AuthorizationServers []string `json:"authorization_servers"`
			ScopesSupported      []string `json:"scopes_supported"`
		}
		json.NewDecoder(resp.Body).Decode(&doc)
		resp.Body.Close()
		if resp.StatusCode != 200 || doc.Resource != resource || len(doc.AuthorizationServers) != 1 || doc.AuthorizationServers[0] != iss ||
			strings.Join(doc.ScopesSupported, " ") != "kitchen:use mcp" {
			t.Errorf("%s: %d %+v", p, resp.StatusCode, doc)
		}
	}
}

// TestHTTPCallLimit: the server-wide limit bounds plugin calls over
// HTTP; beyond it, 503 with Retry-After and -32001 before any plugin runs.
func TestHTTPCallLimit(t *testing.T) {
	srv := newTestServer(t, strings.Replace(kitchenConfig, "[limits]\n", "[limits]\nmax_concurrent = 2\nmax_waiting = 1\n", 1))
	base := serveHTTP(t, srv)
	c := &httpClient{t: t, url: base + "/mcp"}
	var wg sync.WaitGroup
	results := make(chan httpResult, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- c.modern("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"ms": 1500}})
		}()
	}
	wg.Wait()
	close(results)
	ok, busy := 0, 0
	for r := range results {
		switch {
		case r.status == 200 && r.Error == nil:
			ok++
		case r.status == 503 && r.header.Get("Retry-After") != "" && r.Error != nil && r.Error.Code == -32001:
			busy++
		default:
			t.Errorf("unexpected answer %d %s", r.status, r.raw)
		}
	}
	if ok < 1 || busy < 16 {
		t.Errorf("%d calls ran and %d were refused; want at most 3 (2 running + 1 waiting) to run", ok, busy)
	}
}

// TestStdioIgnoresAuth: [auth] and plugin scopes concern HTTP only; the
// stdio client (the process that started the server) sees every plugin.
func TestStdioIgnoresAuth(t *testing.T) {
	srv := newTestServer(t, scopedConfig)
	c := startSession(t, srv)
	r := c.call("tools/list", map[string]any{})
	if r.Error != nil || !strings.Contains(string(r.Result), `"echo"`) || !strings.Contains(string(r.Result), `"ping"`) {
		t.Fatalf("stdio tools/list: %s %+v", r.Result, r.Error)
	}
	if tr := decodeTool(t, c.call("tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}})); tr.IsError {
		t.Fatalf("stdio echo: %+v", tr)
	}
}

// TestHTTPSSEConfig: [http] sse, sse_path and messages_path reach the
// handler, and the HTTP+SSE endpoints sit behind the same access control.
func TestHTTPSSEConfig(t *testing.T) {
	const base = `
[server]
kv_dir = ":memory:"
[auth]
tokens = ["reader-0123456789abcdef"]
[[plugins]]
name = "ping"
path = "../../../examples/wat-ping/wat-ping.wasm"
[http]
`
	tests := []struct {
		name, http, path, token string
		status                  int
		endpoint                string // prefix of the endpoint event's data
	}{
		{"default paths", ``, "/sse", "reader-0123456789abcdef", 200, "/messages?sessionId="},
		{"configured paths", "sse_path = \"/events\"\nmessages_path = \"/in\"\n", "/events", "reader-0123456789abcdef", 200, "/in?sessionId="},
		{"no token", ``, "/sse", "", 401, ""},
		{"turned off", "sse = false\n", "/sse", "reader-0123456789abcdef", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := serveHTTP(t, newTestServer(t, base+tt.http))
			req, _ := http.NewRequest(http.MethodGet, url+tt.path, nil)
			if tt.token != "" {
				req.Header.Set("Authorization", "Bearer "+tt.token)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("GET %s: %d, want %d", tt.path, resp.StatusCode, tt.status)
			}
			if tt.endpoint == "" {
				return
			}
			buf := make([]byte, 256)
			n, _ := io.ReadAtLeast(resp.Body, buf, len("event: endpoint\ndata: ")+len(tt.endpoint))
			if got := string(buf[:n]); !strings.HasPrefix(got, "event: endpoint\ndata: "+tt.endpoint) {
				t.Fatalf("first event %q", got)
			}
		})
	}
}
