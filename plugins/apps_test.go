package plugins

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestOrigin(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"https://api.example.com/", "https://api.example.com", true},
		{"https://API.example.com:443/v1", "https://api.example.com", true},
		{"http://localhost:8080", "http://localhost:8080", true},
		{"http://[::1]:80/", "http://[::1]", true},
		{"https://*.example.com", "", false},
		{"wss://realtime.example.com", "", false},
		{"example.com", "", false},
		{"https://user@example.com", "", false},
	}
	for _, tt := range tests {
		got, ok := origin(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("origin(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestNarrowCSP(t *testing.T) {
	granted := grantedOrigins([]string{"https://api.example.com/v1/", "http://127.0.0.1:9000/"})
	tests := []struct {
		name     string
		ui       string
		want     string // the csp after narrowing
		dropped  []string
		unchange bool
	}{
		{"all granted", `{"csp":{"connectDomains":["https://api.example.com"]}}`, `{"connectDomains":["https://api.example.com"]}`, nil, true},
		{"one dropped", `{"csp":{"connectDomains":["https://api.example.com","https://evil.example.net"],"resourceDomains":["http://127.0.0.1:9000"]}}`,
			`{"connectDomains":["https://api.example.com"],"resourceDomains":["http://127.0.0.1:9000"]}`, []string{"connectDomains https://evil.example.net"}, false},
		{"wildcard never granted", `{"csp":{"frameDomains":["https://*.example.com"]}}`, `{"frameDomains":[]}`, []string{"frameDomains https://*.example.com"}, false},
		{"baseUriDomains pass", `{"csp":{"baseUriDomains":["https://cdn.example.org"]}}`, `{"baseUriDomains":["https://cdn.example.org"]}`, nil, true},
		{"not a list", `{"csp":{"connectDomains":"https://evil.example.net"}}`, `{}`, []string{`connectDomains "https://evil.example.net"`}, false},
		{"no csp", `{"prefersBorder":true}`, ``, nil, true},
	}
	for _, tt := range tests {
		out, dropped := narrowCSP(json.RawMessage(tt.ui), granted, "ui://x")
		if tt.unchange != (string(out) == tt.ui) {
			t.Errorf("%s: out %s (in %s)", tt.name, out, tt.ui)
		}
		var m struct {
			CSP json.RawMessage `json:"csp"`
		}
		_ = json.Unmarshal(out, &m)
		if tt.want != "" && string(m.CSP) != tt.want {
			t.Errorf("%s: csp %s, want %s", tt.name, m.CSP, tt.want)
		}
		var got []string
		for _, d := range dropped {
			got = append(got, d.List+" "+d.Domain)
		}
		if strings.Join(got, ";") != strings.Join(tt.dropped, ";") {
			t.Errorf("%s: dropped %q, want %q", tt.name, got, tt.dropped)
		}
	}
}

func TestInjectPrefix(t *testing.T) {
	tests := []struct{ html, want string }{
		{`<!DOCTYPE html><html><head><title>x</title></head></html>`, `<!DOCTYPE html><html><head><meta name="wasmcp-tool-prefix" content="a_"><title>x</title></head></html>`},
		{`<HEAD lang="en">`, `<HEAD lang="en"><meta name="wasmcp-tool-prefix" content="a_">`},
		{`<p>no head</p>`, `<meta name="wasmcp-tool-prefix" content="a_"><p>no head</p>`},
	}
	for _, tt := range tests {
		if got := injectPrefix(tt.html, "a_"); got != tt.want {
			t.Errorf("injectPrefix(%q) = %q", tt.html, got)
		}
	}
	if got := injectPrefix("<head>", `"><script>`); !strings.Contains(got, `content="&quot;&gt;&lt;script&gt;"`) {
		t.Errorf("prefix not escaped: %s", got)
	}
}

func TestWithTextFallback(t *testing.T) {
	tests := []struct {
		name, out, structured, want string
	}{
		{"has text", `{"content":[{"type":"text","text":"hi"}]}`, `{"a":1}`, `{"content":[{"type":"text","text":"hi"}]}`},
		{"structured only", `{"content":[],"structuredContent":{"a": 1}}`, `{"a": 1}`, `{"content":[{"text":"{\"a\":1}","type":"text"}],"structuredContent":{"a":1}}`},
		{"image only", `{"content":[{"type":"image","data":"AA==","mimeType":"image/png"}]}`, ``,
			`{"content":[{"type":"image","data":"AA==","mimeType":"image/png"},{"text":"The result of t is shown in its app (ui://a/b).","type":"text"}]}`},
		{"no content", `{}`, ``, `{"content":[{"text":"The result of t is shown in its app (ui://a/b).","type":"text"}]}`},
		{"not an object", `[1]`, ``, `[1]`},
	}
	for _, tt := range tests {
		if got := withTextFallback(json.RawMessage(tt.out), json.RawMessage(tt.structured), "t", "ui://a/b"); string(got) != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// FuzzNarrowCSP: any _meta.ui narrows to a csp whose checked lists hold
// only granted origins, without panicking.
func FuzzNarrowCSP(f *testing.F) {
	f.Add(`{"csp":{"connectDomains":["https://api.example.com","https://evil.example.net"]}}`)
	f.Add(`{"csp":{"resourceDomains":"x","frameDomains":[1]}}`)
	f.Add(`{"csp":null}`)
	granted := grantedOrigins([]string{"https://api.example.com/"})
	f.Fuzz(func(t *testing.T, ui string) {
		out, _ := narrowCSP(json.RawMessage(ui), granted, "ui://x")
		if string(out) == ui {
			return
		}
		var m struct {
			CSP map[string]json.RawMessage `json:"csp"`
		}
		if err := json.Unmarshal(out, &m); err != nil {
			t.Fatalf("narrowed to invalid JSON %s: %v", out, err)
		}
		for _, k := range cspKeys {
			var list []string
			if raw, ok := m.CSP[k]; ok {
				if err := json.Unmarshal(raw, &list); err != nil {
					t.Fatalf("%s not a list after narrowing: %s", k, raw)
				}
			}
			for _, d := range list {
				if o, ok := origin(d); !ok || !granted[o] {
					t.Fatalf("%s keeps %q", k, d)
				}
			}
		}
	})
}

func TestHasUIExtension(t *testing.T) {
	tests := []struct {
		caps string
		want bool
	}{
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}`, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{}}}`, true},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/uri-list"]}}}`, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":"text/html;profile=mcp-app"}}}`, false},
		{`{"extensions":{"io.modelcontextprotocol/ui":null}}`, false},
		{`{"extensions":{}}`, false},
		{`{}`, false},
	}
	for _, tt := range tests {
		if got := hasUIExtension([]byte(tt.caps)); got != tt.want {
			t.Errorf("hasUIExtension(%s) = %v", tt.caps, got)
		}
	}
}
