package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

const (
	cachePrefix     = "page:"
	defaultTTL      = 10 * time.Minute
	defaultMaxChars = 20000
	maxStoredText   = 200000
	maxLinks        = 50
	userAgent       = "wasmcp-fetch/1.0 (+https://github.com/wasmcp/wasmcp)"
)

// now is the clock; tests replace it.
var now = time.Now

type fetchIn struct {
	URL      string `json:"url"`
	MaxChars *int   `json:"max_chars"`
	Refresh  bool   `json:"refresh"`
}

// page is what is cached for a URL and, trimmed, returned.
type page struct {
	URL         string `json:"url"`
	Status      int    `json:"status"`
	ContentType string `json:"content_type"`
	Title       string `json:"title"`
	Text        string `json:"text"`
	Truncated   bool   `json:"truncated"`
	Links       []link `json:"links"`
	Cached      bool   `json:"cached"`
	FetchedAt   string `json:"fetched_at"`
}

func fetchPage(c *wasmcp.Context, in fetchIn) (*wasmcp.Result, error) {
	maxChars := defaultMaxChars
	if in.MaxChars != nil {
		maxChars = *in.MaxChars
	}
	if maxChars < 100 || maxChars > maxStoredText {
		return nil, fmt.Errorf("max_chars must be between 100 and %d, got %d", maxStoredText, maxChars)
	}
	u, err := url.Parse(strings.TrimSpace(in.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("url must be an absolute http or https URL, got %q", in.URL)
	}
	u.Fragment = ""
	target := u.String()

	var p *page
	if !in.Refresh {
		p = cacheGet(c, target)
	}
	if p == nil {
		if p, err = download(c, target); err != nil {
			return nil, err
		}
		if p.Status >= 200 && p.Status < 300 {
			cachePut(c, p)
		}
	}
	if p.Status < 200 || p.Status > 299 {
		return wasmcp.ErrorResult(fmt.Sprintf("HTTP %d from %s: %s", p.Status, target, clip(p.Text, 300))), nil
	}
	out := *p
	if utf8.RuneCountInString(out.Text) > maxChars {
		out.Text, out.Truncated = string([]rune(out.Text)[:maxChars]), true
	}
	return wasmcp.StructuredResult(out)
}

// download fetches target through the host and extracts the page.
func download(c *wasmcp.Context, target string) (*page, error) {
	resp, err := c.HTTPFetch(wasmcp.HTTPRequest{
		URL:     target,
		Headers: map[string]string{"Accept": "text/html,application/xhtml+xml,text/plain;q=0.9,*/*;q=0.5", "User-Agent": userAgent},
		Timeout: 15 * time.Second,
	})
	var he *wasmcp.HostError
	switch {
	case errors.Is(err, wasmcp.ErrDenied):
		u, _ := url.Parse(target)
		return nil, fmt.Errorf("fetching %s is not allowed: the server's operator has not granted this plugin that URL, "+
			"or the server refuses the address it resolves to (private and special-purpose networks need an explicit grant). "+
			"The operator can add %q to http under [plugins.grants] of this plugin's [[plugins]] entry in wasmcp.toml", target, u.Scheme+"://"+u.Host+"/")
	case errors.Is(err, wasmcp.ErrTooBig):
		return nil, fmt.Errorf("%s is larger than the server lets a plugin download", target)
	case errors.Is(err, wasmcp.ErrCanceled):
		return nil, err
	case errors.As(err, &he):
		return nil, fmt.Errorf("fetching %s failed: %s", target, he.Message)
	case err != nil:
		return nil, fmt.Errorf("fetching %s: %w", target, err)
	}
	ctype := resp.Header("Content-Type")
	media, params, _ := mime.ParseMediaType(ctype)
	if media == "" {
		media = "text/html"
	}
	body := toUTF8(resp.Body, params["charset"])
	p := &page{URL: target, Status: resp.Status, ContentType: media, Links: []link{}, FetchedAt: now().UTC().Format(time.RFC3339)}
	switch {
	case media == "text/html" || media == "application/xhtml+xml":
		doc := extract(body, target)
		p.Title, p.Text, p.Links = doc.title, doc.text, doc.links
	case strings.HasPrefix(media, "text/") || media == "application/json" || strings.HasSuffix(media, "+json") ||
		media == "application/xml" || strings.HasSuffix(media, "+xml") || media == "application/javascript":
		p.Text = strings.TrimSpace(body)
	default:
		if resp.Status >= 200 && resp.Status < 300 {
			return nil, fmt.Errorf("%s is %s, not text: this tool only reads text and HTML pages", target, media)
		}
	}
	if utf8.RuneCountInString(p.Text) > maxStoredText {
		p.Text, p.Truncated = string([]rune(p.Text)[:maxStoredText]), true
	}
	return p, nil
}

// toUTF8 decodes body: UTF-8 as is; ISO-8859-1/windows-1252 (and any
// invalid UTF-8) byte by byte as Latin-1.
func toUTF8(body []byte, charset string) string {
	cs := strings.ToLower(charset)
	if (cs == "" || cs == "utf-8" || cs == "utf8") && utf8.Valid(body) {
		return string(body)
	}
	if cs == "" || cs == "utf-8" || cs == "utf8" || cs == "iso-8859-1" || cs == "latin1" || cs == "windows-1252" || cs == "us-ascii" {
		r := make([]rune, len(body))
		for i, b := range body {
			r[i] = rune(b)
		}
		return string(r)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// cacheKey is the kv key of a URL.
func cacheKey(target string) string {
	sum := sha256.Sum256([]byte(target))
	return cachePrefix + hex.EncodeToString(sum[:16])
}

// cacheTTL is the config value cache_ttl, or the default.
func cacheTTL(c *wasmcp.Context) time.Duration {
	v, err := c.ConfigGet("cache_ttl")
	if err != nil || v == "" {
		return defaultTTL
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		c.Logf(wasmcp.LevelWarning, "fetch: config cache_ttl %q is not a duration; using %v", v, defaultTTL)
		return defaultTTL
	}
	return d
}

// cacheGet returns the cached page for target, or nil. Without the kv
// grant there is simply no cache.
func cacheGet(c *wasmcp.Context, target string) *page {
	v, ok, err := c.KVGet(cacheKey(target))
	if err != nil || !ok {
		return nil
	}
	var p page
	if json.Unmarshal([]byte(v), &p) != nil || p.URL != target {
		return nil
	}
	p.Cached = true
	return &p
}

func cachePut(c *wasmcp.Context, p *page) {
	ttl := cacheTTL(c)
	if ttl == 0 {
		return
	}
	b, err := json.Marshal(p)
	if err != nil {
		return
	}
	if err := c.KVSet(cacheKey(p.URL), string(b), ttl); err != nil && !errors.Is(err, wasmcp.ErrDenied) {
		c.Logf(wasmcp.LevelWarning, "fetch: caching %s: %v", p.URL, err)
	}
}

type clearIn struct {
	URL string `json:"url"`
}

type clearOut struct {
	Removed int `json:"removed"`
}

func clearCache(c *wasmcp.Context, in clearIn) (clearOut, error) {
	keys := []string{}
	if in.URL != "" {
		if _, ok, err := c.KVGet(cacheKey(in.URL)); err != nil {
			return clearOut{}, cacheError(err)
		} else if ok {
			keys = append(keys, cacheKey(in.URL))
		}
	} else {
		all, err := c.KVListAll(cachePrefix)
		if err != nil {
			return clearOut{}, cacheError(err)
		}
		keys = all
	}
	for _, k := range keys {
		if err := c.KVDelete(k); err != nil {
			return clearOut{}, cacheError(err)
		}
	}
	return clearOut{Removed: len(keys)}, nil
}

func cacheError(err error) error {
	if errors.Is(err, wasmcp.ErrDenied) {
		return errors.New("there is no cache to clear: the server's operator has not granted this plugin the key-value store")
	}
	return fmt.Errorf("cache: %w", err)
}
