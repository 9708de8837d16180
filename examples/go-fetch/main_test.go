package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/schema"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

const testPage = `<!DOCTYPE html>
<html><head><title>The &amp; Page</title>
<style>body { color: red }</style>
<script>var x = "<p>not text</p>";</script>
</head>
<body>
<!-- a comment <p>hidden</p> -->
<h1>Welcome</h1>
<p>First   paragraph with <a href="/docs#intro">the docs</a> and <A HREF='https://other.example/x'>another site</A>.</p>
<ul><li>one</li><li>two &lt;3</li></ul>
<img src="x.png" alt="A chart">
<p>Caf&eacute; &#8212; done.</p>
<a href="mailto:me@example.com">mail</a><a href="/docs">dup</a>
</body></html>`

func init() {
	now = func() time.Time { return time.Date(2026, 7, 28, 12, 0, 0, 0, time.UTC) }
}

// newHost serves a few pages and counts requests.
func newHost(hits *int) *wasmcptest.Host {
	h := wasmcptest.NewHost()
	h.KVEnabled = true
	h.HTTPAllow = []string{"https://site.example/"}
	h.HTTP = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*hits++
		if r.Header.Get("User-Agent") != userAgent {
			http.Error(w, "no user agent", 400)
			return
		}
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, testPage)
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/data.json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"ok": true}`)
		case "/image.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0})
		case "/long":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("é", 500))
		default:
			http.Error(w, "no such page", http.StatusNotFound)
		}
	})
	return h
}

func fetch(t *testing.T, s *wasmcptest.Session, args map[string]any) (page, *wasmcp.Result) {
	t.Helper()
	r, err := s.CallTool("fetch_page", args)
	if err != nil {
		t.Fatal(err)
	}
	var p page
	if !r.IsError {
		m, _ := s.Describe()
		sch, err := schema.Compile(m.Tool("fetch_page").OutputSchema, nil)
		if err != nil {
			t.Fatal(err)
		}
		sc := r.StructuredContent.(json.RawMessage)
		if err := sch.Validate(sc); err != nil {
			t.Fatalf("%s fails the outputSchema: %v", sc, err)
		}
		json.Unmarshal(sc, &p)
	}
	return p, r
}

func TestFetchPage(t *testing.T) {
	hits := 0
	h := newHost(&hits)
	s := wasmcptest.NewSession(plugin, h)
	p, _ := fetch(t, s, map[string]any{"url": "https://site.example/page#top"})
	wantText := "# Welcome\n\nFirst paragraph with the docs and another site.\n\n- one\n- two <3\n\nA chart\n\nCafé — done.\n\nmaildup"
	if p.Title != "The & Page" || p.Text != wantText || p.Status != 200 || p.ContentType != "text/html" || p.Cached ||
		p.URL != "https://site.example/page" || p.FetchedAt != "2026-07-28T12:00:00Z" {
		t.Errorf("page = %+v\ntext %q\nwant %q", p, p.Text, wantText)
	}
	wantLinks := []link{{"https://site.example/docs", "the docs"}, {"https://other.example/x", "another site"}}
	if fmt.Sprint(p.Links) != fmt.Sprint(wantLinks) {
		t.Errorf("links = %v, want %v", p.Links, wantLinks)
	}

	// Second call: from the cache, no request.
	p, _ = fetch(t, s, map[string]any{"url": "https://site.example/page"})
	if !p.Cached || hits != 1 {
		t.Errorf("second fetch: cached %v, %d requests", p.Cached, hits)
	}
	// refresh: fetched again.
	p, _ = fetch(t, s, map[string]any{"url": "https://site.example/page", "refresh": true})
	if p.Cached || hits != 2 {
		t.Errorf("refresh: cached %v, %d requests", p.Cached, hits)
	}
	if sets := h.CallsTo("kv/set"); len(sets) != 2 || !strings.Contains(string(sets[0]), `"ttl_s":600`) {
		t.Errorf("kv/set calls = %s", sets)
	}
}

func TestFetchKinds(t *testing.T) {
	hits := 0
	h := newHost(&hits)
	h.Config = map[string]string{"cache_ttl": "1h"}
	s := wasmcptest.NewSession(plugin, h)

	p, _ := fetch(t, s, map[string]any{"url": "https://site.example/latin1"})
	if p.Text != "café" || p.ContentType != "text/plain" {
		t.Errorf("latin1 = %+v", p)
	}
	p, _ = fetch(t, s, map[string]any{"url": "https://site.example/data.json"})
	if p.Text != `{"ok": true}` {
		t.Errorf("json = %+v", p)
	}
	p, _ = fetch(t, s, map[string]any{"url": "https://site.example/long", "max_chars": 100})
	if !p.Truncated || p.Text != strings.Repeat("é", 100) {
		t.Errorf("long = %d runes, truncated %v", len([]rune(p.Text)), p.Truncated)
	}
	if sets := h.CallsTo("kv/set"); len(sets) == 0 || !strings.Contains(string(sets[0]), `"ttl_s":3600`) {
		t.Errorf("configured ttl not used: %s", sets)
	}

	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": "https://site.example/image.png"}, "is image/png, not text"},
		{map[string]any{"url": "https://site.example/missing"}, "HTTP 404 from https://site.example/missing: no such page"},
		{map[string]any{"url": "https://forbidden.example/"}, `The operator can add "https://forbidden.example/" to http under [plugins.grants]`},
		{map[string]any{"url": "ftp://site.example/"}, "url must be an absolute http or https URL"},
		{map[string]any{"url": "https://site.example/page", "max_chars": 5}, "max_chars must be between 100"},
	}
	for _, tt := range tests {
		_, r := fetch(t, s, tt.args)
		if !r.IsError || !strings.Contains(r.Content[0].Text, tt.want) {
			t.Errorf("%v: %+v, want an error containing %q", tt.args, r.Content, tt.want)
		}
	}
}

func TestNoGrants(t *testing.T) {
	s := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	_, r := fetch(t, s, map[string]any{"url": "https://site.example/page"})
	if !r.IsError || !strings.Contains(r.Content[0].Text, "is not allowed") {
		t.Errorf("no http grant: %+v", r)
	}
	r, err := s.CallTool("clear_cache", nil)
	if err != nil || !r.IsError || !strings.Contains(r.Content[0].Text, "no cache to clear") {
		t.Errorf("clear without kv: %+v, %v", r, err)
	}

	// http granted, kv not: works, uncached.
	hits := 0
	h := newHost(&hits)
	h.KVEnabled = false
	s = wasmcptest.NewSession(plugin, h)
	fetch(t, s, map[string]any{"url": "https://site.example/page"})
	p, _ := fetch(t, s, map[string]any{"url": "https://site.example/page"})
	if p.Cached || hits != 2 || p.Title != "The & Page" {
		t.Errorf("without kv: %+v, %d requests", p, hits)
	}
}

func TestClearCache(t *testing.T) {
	hits := 0
	s := wasmcptest.NewSession(plugin, newHost(&hits))
	for _, u := range []string{"/page", "/data.json", "/latin1"} {
		fetch(t, s, map[string]any{"url": "https://site.example" + u})
	}
	var out clearOut
	r, err := s.CallTool("clear_cache", map[string]any{"url": "https://site.example/page"})
	if err != nil || json.Unmarshal(r.StructuredContent.(json.RawMessage), &out) != nil || out.Removed != 1 {
		t.Fatalf("clear one = %+v, %v", r, err)
	}
	r, _ = s.CallTool("clear_cache", nil)
	if json.Unmarshal(r.StructuredContent.(json.RawMessage), &out) != nil || out.Removed != 2 {
		t.Fatalf("clear all = %+v", r)
	}
	p, _ := fetch(t, s, map[string]any{"url": "https://site.example/data.json"})
	if p.Cached {
		t.Error("cache not cleared")
	}
}

func TestExtractOddHTML(t *testing.T) {
	tests := []struct{ in, title, text string }{
		{"plain text, no tags", "", "plain text, no tags"},
		{"<h1>Only heading</h1>", "Only heading", "# Only heading"},
		{"a < b and c > d", "", "a < b and c > d"},
		{"<p unclosed attr='x", "", ""},
		{"<script>never closed", "", ""},
		{"<TITLE>Upper</TITLE><P>Body", "Upper", "Body"},
		{"<div><br/>x<br>y</div>", "", "x\ny"},
	}
	for _, tt := range tests {
		d := extract(tt.in, "https://x.example/")
		if d.title != tt.title || d.text != tt.text {
			t.Errorf("extract(%q) = %q, %q; want %q, %q", tt.in, d.title, d.text, tt.title, tt.text)
		}
	}
}

// FuzzExtract checks that the HTML reducer never panics or hangs.
func FuzzExtract(f *testing.F) {
	f.Add(testPage)
	f.Add("<a href=x>y</a><!-- <script>")
	f.Add("<p a=\"1\" b='2' c=3 d>x</p>")
	f.Fuzz(func(t *testing.T, s string) {
		extract(s, "https://x.example/a/b")
	})
}
