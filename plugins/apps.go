package plugins

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// MCP Apps (io.modelcontextprotocol/ui, ext-apps 2026-01-26) from
// plugins. A plugin declares ui:// resources of type
// text/html;profile=mcp-app with _meta.ui (csp, permissions, domain,
// prefersBorder), and tools whose _meta.ui.resourceUri points at one and
// whose _meta.ui.visibility says who may call them. The host:
//
//   - namespaces ui:// URIs with the plugin's prefix as it does tool
//     names: ui://dash/view becomes ui://<prefix>dash/view, in the
//     resource list, in reads and in the tools' resourceUri, so two copies
//     of one app plugin under two prefixes serve two apps;
//   - tells a prefixed app its prefix: the HTML of a ui:// resource read
//     from a prefixed plugin gets <meta name="wasmcp-tool-prefix"
//     content="PREFIX"> first in its head, and the app prepends it to the
//     tool names it calls back (the SDKs' app helpers do);
//   - narrows each app's csp connectDomains, resourceDomains and
//     frameDomains to the origins of the plugin's http grants (scheme,
//     host and port equal; wildcards are never granted), both in the
//     listed resource and in every read, logging what it dropped and
//     keeping it for `wasmcp inspect`: an untrusted plugin cannot ask the
//     client to let its UI reach hosts the operator never granted;
//   - hides app-only tools (visibility without "model") from the
//     tools/list of clients without the extension and refuses their calls
//     from such clients, as unknown tools: only an app, through a host
//     that has the extension, calls them.

const (
	uiScheme     = "ui://"
	uiMIME       = "text/html;profile=mcp-app"
	uiExtension  = "io.modelcontextprotocol/ui"
	prefixMeta   = "wasmcp-tool-prefix"
	uiMetaKey    = "ui"
	legacyUIMeta = "ui/resourceUri"
)

// cspKeys are the csp lists checked against the http grants;
// baseUriDomains is not a fetch target of the app, so it passes.
var cspKeys = []string{"connectDomains", "resourceDomains", "frameDomains"}

// DroppedDomain is one csp origin an app asked for that the plugin's http
// grants do not cover: narrowed away at load.
type DroppedDomain struct {
	Resource string `json:"resource"` // the ui:// URI (as exposed)
	List     string `json:"list"`     // connectDomains, resourceDomains or frameDomains
	Domain   string `json:"domain"`
}

// prefixUI returns uri with prefix put in front of its authority when it
// is a ui:// URI and prefix is set.
func prefixUI(uri, prefix string) string {
	if prefix == "" || !strings.HasPrefix(uri, uiScheme) {
		return uri
	}
	return uiScheme + prefix + uri[len(uiScheme):]
}

// hasUIExtension reports whether client capabilities caps declare MCP
// Apps.
//
// The extension's settings list the mimeTypes the client renders
// (REQUIRED by ext-apps): a client whose list lacks
// text/html;profile=mcp-app renders none of these apps, so it counts as
// without the extension; settings without the list are taken at their
// word.
func hasUIExtension(caps []byte) bool {
	ext, ok := jsonscan.Member(caps, "extensions")
	if !ok {
		return false
	}
	v, ok := jsonscan.Member(ext, uiExtension)
	if !ok || jsonscan.Kind(v) == 'z' {
		return false
	}
	mt, ok := jsonscan.Member(v, "mimeTypes")
	if !ok {
		return true
	}
	var types []string
	if json.Unmarshal(mt, &types) != nil {
		return false
	}
	return slices.Contains(types, uiMIME)
}

// toolUI reads a tool's _meta.ui (or the older _meta["ui/resourceUri"]):
// its resource URI and whether it is app-only.
func toolUI(raw json.RawMessage) (resourceURI string, appOnly bool) {
	var t struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(raw, &t) != nil || t.Meta == nil {
		return "", false
	}
	var ui struct {
		ResourceURI string   `json:"resourceUri"`
		Visibility  []string `json:"visibility"`
	}
	if v, ok := t.Meta[uiMetaKey]; ok {
		_ = json.Unmarshal(v, &ui)
	}
	if ui.ResourceURI == "" {
		_ = json.Unmarshal(t.Meta[legacyUIMeta], &ui.ResourceURI)
	}
	appOnly = ui.Visibility != nil && !slices.Contains(ui.Visibility, "model")
	return ui.ResourceURI, appOnly
}

// rewriteToolUI sets the tool's _meta.ui.resourceUri (and the older key,
// if present) to uri.
func rewriteToolUI(raw json.RawMessage, uri string) json.RawMessage {
	var t map[string]json.RawMessage
	if json.Unmarshal(raw, &t) != nil {
		return raw
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(t["_meta"], &meta) != nil || meta == nil {
		return raw
	}
	if v, ok := meta[uiMetaKey]; ok {
		meta[uiMetaKey] = setMember(v, "resourceUri", uri)
	}
	if _, ok := meta[legacyUIMeta]; ok {
		meta[legacyUIMeta], _ = json.Marshal(uri)
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return raw
	}
	t["_meta"] = b
	out, err := json.Marshal(t)
	if err != nil {
		return raw
	}
	return out
}

// grantedOrigins is the set of origins (scheme://host[:port], lower
// case, default ports omitted) of http grant rules.
func grantedOrigins(rules []string) map[string]bool {
	out := map[string]bool{}
	for _, r := range rules {
		if o, ok := origin(r); ok {
			out[o] = true
		}
	}
	return out
}

// origin normalises a URL or csp source to its origin; ok false for
// anything that is not a plain http(s) origin (wildcards, other schemes,
// bare host names).
func origin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.ContainsAny(u.Host, "*%") || u.User != nil {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return strings.ToLower(u.Scheme) + "://" + host, true
}

// narrowCSP filters the csp lists of a _meta.ui object to granted
// origins; it returns the object (unchanged bytes when nothing was
// dropped) and what it dropped.
func narrowCSP(ui json.RawMessage, granted map[string]bool, resource string) (json.RawMessage, []DroppedDomain) {
	var m map[string]json.RawMessage
	if json.Unmarshal(ui, &m) != nil {
		return ui, nil
	}
	var csp map[string]json.RawMessage
	if json.Unmarshal(m["csp"], &csp) != nil || csp == nil {
		return ui, nil
	}
	var dropped []DroppedDomain
	for _, k := range cspKeys {
		raw, ok := csp[k]
		if !ok {
			continue
		}
		var list []string
		if json.Unmarshal(raw, &list) != nil {
			// Not a list of strings: nothing of it can be checked.
			dropped = append(dropped, DroppedDomain{resource, k, string(raw)})
			delete(csp, k)
			continue
		}
		kept := list[:0:0]
		for _, d := range list {
			if o, ok := origin(d); ok && granted[o] {
				kept = append(kept, d)
			} else {
				dropped = append(dropped, DroppedDomain{resource, k, d})
			}
		}
		csp[k], _ = json.Marshal(kept)
	}
	if len(dropped) == 0 {
		return ui, nil
	}
	m["csp"], _ = json.Marshal(csp)
	out, err := json.Marshal(m)
	if err != nil {
		return ui, dropped
	}
	return out, dropped
}

// narrowItem applies narrowCSP to item's _meta.ui (a resource of the
// list, or one of a read's contents).
func narrowItem(item json.RawMessage, granted map[string]bool, resource string) (json.RawMessage, []DroppedDomain) {
	var it map[string]json.RawMessage
	if json.Unmarshal(item, &it) != nil {
		return item, nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(it["_meta"], &meta) != nil || meta[uiMetaKey] == nil {
		return item, nil
	}
	ui, dropped := narrowCSP(meta[uiMetaKey], granted, resource)
	if len(dropped) == 0 {
		return item, nil
	}
	meta[uiMetaKey] = ui
	it["_meta"], _ = json.Marshal(meta)
	out, err := json.Marshal(it)
	if err != nil {
		return item, dropped
	}
	return out, dropped
}

// appRead rewrites the ReadResourceResult of ui:// resource uri (as
// exposed) from plugin p: content URIs prefixed, csp narrowed, and the
// prefix announced in the HTML of a prefixed plugin.
func (p *Plugin) appRead(out json.RawMessage, uri string) json.RawMessage {
	var res map[string]json.RawMessage
	if json.Unmarshal(out, &res) != nil {
		return out
	}
	var contents []json.RawMessage
	if json.Unmarshal(res["contents"], &contents) != nil {
		return out
	}
	granted := grantedOrigins(p.spec.Grants.HTTP)
	for i, c := range contents {
		var cm map[string]json.RawMessage
		if json.Unmarshal(c, &cm) != nil {
			continue
		}
		var cu, text string
		_ = json.Unmarshal(cm["uri"], &cu)
		if p.spec.Prefix != "" && strings.HasPrefix(cu, uiScheme) {
			cm["uri"], _ = json.Marshal(prefixUI(cu, p.spec.Prefix))
			if json.Unmarshal(cm["text"], &text) == nil && text != "" {
				cm["text"], _ = json.Marshal(injectPrefix(text, p.spec.Prefix))
			}
			c, _ = json.Marshal(cm)
		}
		c, dropped := narrowItem(c, granted, uri)
		for _, d := range dropped {
			p.logger().Warn("app csp domain outside the plugin's http grants; dropped", "resource", d.Resource, "list", d.List, "domain", d.Domain)
		}
		contents[i] = c
	}
	res["contents"], _ = json.Marshal(contents)
	b, err := json.Marshal(res)
	if err != nil {
		return out
	}
	return b
}

// injectPrefix puts the prefix meta tag first in the HTML's head (or at
// its very start when it has no <head>).
func injectPrefix(html, prefix string) string {
	tag := `<meta name="` + prefixMeta + `" content="` + htmlAttr(prefix) + `">`
	lower := strings.ToLower(html)
	if i := strings.Index(lower, "<head"); i >= 0 {
		if j := strings.IndexByte(lower[i:], '>'); j >= 0 {
			k := i + j + 1
			return html[:k] + tag + html[k:]
		}
	}
	return tag + html
}

func htmlAttr(s string) string {
	var b bytes.Buffer
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// indexApps does the app part of index: prefixed ui:// URIs, narrowed
// csp of the listed resources, tools' resourceUri prefixed and app-only
// marked.
func (p *Plugin) indexApps() {
	granted := grantedOrigins(p.spec.Grants.HTTP)
	p.dropped = p.dropped[:0]
	for _, e := range p.resources {
		if !strings.HasPrefix(e.uri, uiScheme) {
			continue
		}
		e.orig = e.uri
		e.uri = prefixUI(e.uri, p.spec.Prefix)
		if e.uri != e.orig {
			e.raw = setMember(e.raw, "uri", e.uri)
		}
		var dropped []DroppedDomain
		e.raw, dropped = narrowItem(e.raw, granted, e.uri)
		p.dropped = append(p.dropped, dropped...)
	}
	for _, t := range p.tools {
		uri, appOnly := toolUI(t.raw)
		t.appOnly = appOnly
		if uri != "" && p.spec.Prefix != "" && strings.HasPrefix(uri, uiScheme) {
			uri = prefixUI(uri, p.spec.Prefix)
			t.raw = rewriteToolUI(t.raw, uri)
		}
		t.appURI = uri
	}
	for _, d := range p.dropped {
		p.logger().Warn("app csp domain outside the plugin's http grants; narrowed away", "resource", d.Resource, "list", d.List, "domain", d.Domain)
	}
}

func (p *Plugin) logger() *slog.Logger {
	if p.log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.log
}

// DroppedDomains returns the csp origins narrowed away at load (see
// indexApps), for `wasmcp inspect`.
func (p *Plugin) DroppedDomains() []DroppedDomain { return slices.Clone(p.dropped) }

// String renders d for people.
func (d DroppedDomain) String() string {
	return fmt.Sprintf("%s %s %s", d.Resource, d.List, d.Domain)
}

// withTextFallback makes sure the result out of a tool linked to an app
// has a text content block, for clients without the extension (ext-apps:
// tools MUST return meaningful content even when UI is available): a
// result without one gets the structuredContent as JSON text or, lacking
// that, a line naming the app. A result that has text, or that is not a
// CallToolResult object, is returned unchanged.
func withTextFallback(out, structured json.RawMessage, tool, app string) json.RawMessage {
	var res map[string]json.RawMessage
	if json.Unmarshal(out, &res) != nil || res == nil {
		return out
	}
	var content []struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(res["content"], &content)
	for _, c := range content {
		if c.Type == "text" {
			return out
		}
	}
	var items []json.RawMessage
	_ = json.Unmarshal(res["content"], &items)
	text := "The result of " + tool + " is shown in its app (" + app + ")."
	if !isNull(structured) {
		var b bytes.Buffer
		if json.Compact(&b, structured) == nil {
			text = b.String()
		}
	}
	item, _ := json.Marshal(map[string]string{"type": "text", "text": text})
	res["content"], _ = json.Marshal(append(items, item))
	b, err := json.Marshal(res)
	if err != nil {
		return out
	}
	return b
}

// App is one MCP App of a plugin as the host serves it, for `wasmcp
// inspect`: its ui:// URI as exposed, its _meta.ui after narrowing, the
// csp origins narrowed away, and the tools that point at it.
type App struct {
	URI     string          `json:"uri"`
	UI      json.RawMessage `json:"ui,omitempty"` // _meta.ui as served
	Dropped []DroppedDomain `json:"dropped,omitempty"`
	// Tools are the exposed names of the tools whose resourceUri is URI;
	// AppOnly those of them only the app may call.
	Tools   []string `json:"tools,omitempty"`
	AppOnly []string `json:"appOnly,omitempty"`
}

// Apps returns the plugin's apps, by URI.
func (p *Plugin) Apps() []App {
	var out []App
	for _, e := range p.resources {
		if !strings.HasPrefix(e.uri, uiScheme) {
			continue
		}
		a := App{URI: e.uri}
		var r struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if json.Unmarshal(e.raw, &r) == nil {
			a.UI = r.Meta[uiMetaKey]
		}
		for _, d := range p.dropped {
			if d.Resource == e.uri {
				a.Dropped = append(a.Dropped, d)
			}
		}
		for _, t := range p.tools {
			if t.appURI == e.uri {
				a.Tools = append(a.Tools, t.name)
				if t.appOnly {
					a.AppOnly = append(a.AppOnly, t.name)
				}
			}
		}
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y App) int { return strings.Compare(x.URI, y.URI) })
	return out
}
