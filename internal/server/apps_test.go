package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
)

// This file is the acceptance of MCP Apps and Skills (docs/apps-and-
// skills.md) through the real server: examples/go-dashboard (an app, an
// app-only tool, an embedded skill) twice, once under a prefix, and a
// [[skills]] directory, over stdio and HTTP, on 2025-11-25 sessions and
// 2026-07-28 requests.

// appsClient sends one request as its transport and version require,
// declaring the client capabilities caps.
type appsClient interface {
	do(method string, params map[string]any) response
	// initialized is the initialize result of a legacy session.
	initialized() json.RawMessage
}

// stdioApps is a stdio client: legacy opens a session with caps; modern
// puts caps in every request's _meta.
type stdioApps struct {
	c      *stdioClient
	modern bool
	caps   map[string]any
	init   json.RawMessage
}

func (s *stdioApps) initialized() json.RawMessage { return s.init }

func (s *stdioApps) do(method string, params map[string]any) response {
	if s.modern {
		params["_meta"] = modernMeta(s.caps)
	}
	return s.c.call(method, params)
}

// httpApps is an HTTP client: legacy holds a session (Mcp-Session-Id);
// modern sends each request with its _meta and headers.
type httpApps struct {
	c      *httpClient
	modern bool
	caps   map[string]any
	sid    string
	init   json.RawMessage
}

func (h *httpApps) initialized() json.RawMessage { return h.init }

func (h *httpApps) do(method string, params map[string]any) response {
	if h.modern {
		return h.c.modernCaps(method, params, h.caps).response
	}
	return h.c.post(rpc(2, method, params), map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": h.sid}).response
}

// uiCaps are the capabilities of a client with MCP Apps.
var uiCaps = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}}}}

func mustBase64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAppsAndSkills: capabilities and discover list both extensions; a
// client without the UI extension gets the text content and no app-only
// tool; resources/read of a ui:// resource gives the HTML with its
// _meta.ui, the csp narrowed to the plugin's http grants and a prefixed
// copy's prefix announced; skills/list, skills/get, the skill://
// resources and resources/directory/read answer, with the digests
// checked against sha256 of the bytes.
func TestAppsAndSkills(t *testing.T) {
	dir := t.TempDir()
	wasm, err := os.ReadFile("../../examples/go-dashboard/go-dashboard.wasm")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "dashboard.wasm"), wasm, 0o644); err != nil {
		t.Fatal(err)
	}
	skillFiles := map[string]string{
		"tidy/SKILL.md":           "---\nname: tidy\ndescription: Keep things tidy\n---\n# Tidy\nSee templates/.\n",
		"tidy/templates/list.md":  "- [ ] one\n",
		"tidy/templates/logo.bin": "\x00\x01\xff",
	}
	for p, data := range skillFiles {
		p = filepath.Join(dir, "skills", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dashSkill, err := os.ReadFile("../../examples/go-dashboard/skill/SKILL.md")
	if err != nil {
		t.Fatal(err)
	}
	// The plain copy is granted https://api.example.com/, not the
	// app's other origin (https://metrics.example.org): it is narrowed
	// away. The prefixed copy has no http grant: both go.
	toml := testLimits + `
[[skills]]
dir = "./skills"
[[plugins]]
name = "dash"
path = "dashboard.wasm"
[plugins.grants]
http = ["https://api.example.com/"]
[[plugins]]
name = "dash2"
path = "dashboard.wasm"
prefix = "two_"
`
	// Two copies of a 3.7 MB Go module: a cold compile under -race on a
	// loaded machine can pass the tests' 3 minute load wait.
	srv, err := buildServer(t, toml, dir, Options{Version: "test", LoadWait: 10 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	url := serveHTTP(t, srv) + "/mcp"

	// Digests computed here from the bytes, not taken from the server.
	digest := func(s string) string {
		sum := sha256.Sum256([]byte(s))
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	wantSkills := map[string]map[string]string{ // skill URI -> file URI -> digest
		"skill://tidy/SKILL.md": {
			"skill://tidy/SKILL.md":           digest(skillFiles["tidy/SKILL.md"]),
			"skill://tidy/templates/list.md":  digest(skillFiles["tidy/templates/list.md"]),
			"skill://tidy/templates/logo.bin": digest(skillFiles["tidy/templates/logo.bin"]),
		},
		"skill://dash/reading-metrics/SKILL.md":  {"skill://dash/reading-metrics/SKILL.md": digest(string(dashSkill))},
		"skill://dash2/reading-metrics/SKILL.md": {"skill://dash2/reading-metrics/SKILL.md": digest(string(dashSkill))},
	}

	open := func(t *testing.T, transport string, modern bool, caps map[string]any) appsClient {
		t.Helper()
		switch transport {
		case "stdio":
			c := &stdioApps{c: startStdio(t, srv), modern: modern, caps: caps}
			if !modern {
				r := c.c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
					"clientInfo": map[string]any{"name": "t", "version": "1"}})
				if r.Error != nil {
					t.Fatalf("initialize: %+v", r.Error)
				}
				c.init = r.Result
				c.c.notify("notifications/initialized", map[string]any{})
			}
			return c
		default:
			h := &httpApps{c: &httpClient{t: t, url: url}, modern: modern, caps: caps}
			if !modern {
				init := h.c.post(rpc(1, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": caps,
					"clientInfo": map[string]any{"name": "t", "version": "1"}}), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
				h.sid, h.init = init.header.Get("Mcp-Session-Id"), init.Result
				if init.Error != nil || h.sid == "" {
					t.Fatalf("initialize: %d %s", init.status, init.raw)
				}
				h.c.post(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"},
					map[string]string{"MCP-Protocol-Version": "2025-11-25", "Mcp-Session-Id": h.sid})
			}
			return h
		}
	}

	for _, transport := range []string{"stdio", "http"} {
		for _, version := range []string{"2025-11-25", "2026-07-28"} {
			modern := version == "2026-07-28"
			t.Run(transport+"/"+version, func(t *testing.T) {
				ui := open(t, transport, modern, uiCaps)
				plain := open(t, transport, modern, map[string]any{})

				// Capabilities list both extensions, with their settings.
				var caps struct {
					Capabilities struct {
						Extensions map[string]json.RawMessage `json:"extensions"`
					} `json:"capabilities"`
				}
				capsRaw := ui.initialized()
				if modern {
					capsRaw = ui.do("server/discover", map[string]any{}).Result
				}
				if err := json.Unmarshal(capsRaw, &caps); err != nil {
					t.Fatalf("capabilities %s: %v", capsRaw, err)
				}
				if got := string(caps.Capabilities.Extensions["io.modelcontextprotocol/ui"]); got != `{"mimeTypes":["text/html;profile=mcp-app"]}` {
					t.Errorf("ui extension settings = %s", got)
				}
				if got := string(caps.Capabilities.Extensions["io.modelcontextprotocol/skills"]); got != `{"directoryRead":true}` {
					t.Errorf("skills extension settings = %s", got)
				}

				// Tools: the app-only tool only for a client with the
				// extension; resourceUri prefixed with the plugin's prefix.
				tools := func(c appsClient) map[string]string {
					var res struct {
						Tools []struct {
							Name string `json:"name"`
							Meta struct {
								UI struct {
									ResourceURI string `json:"resourceUri"`
								} `json:"ui"`
							} `json:"_meta"`
						} `json:"tools"`
					}
					r := c.do("tools/list", map[string]any{})
					if err := json.Unmarshal(r.Result, &res); err != nil {
						t.Fatalf("tools/list %s: %v", r.Result, err)
					}
					out := map[string]string{}
					for _, tl := range res.Tools {
						out[tl.Name] = tl.Meta.UI.ResourceURI
					}
					return out
				}
				got := tools(ui)
				want := map[string]string{"service_metrics": "ui://dashboard/view", "metrics_page": "ui://dashboard/view",
					"two_service_metrics": "ui://two_dashboard/view", "two_metrics_page": "ui://two_dashboard/view"}
				for name, uri := range want {
					if got[name] != uri {
						t.Errorf("ui client: tool %s resourceUri %q, want %q (tools %v)", name, got[name], uri, got)
					}
				}
				got = tools(plain)
				if _, ok := got["metrics_page"]; ok || got["service_metrics"] != "ui://dashboard/view" {
					t.Errorf("plain client tools = %v (want no app-only tool)", got)
				}

				// Calls: the text fallback for everyone; the app-only tool
				// refused to a client without the extension, answered to
				// one with it (as the app calls it through its host).
				for _, c := range []appsClient{ui, plain} {
					tr := decodeTool(t, c.do("tools/call", map[string]any{"name": "service_metrics", "arguments": map[string]any{"page": 2}}))
					if !strings.HasPrefix(tr.text(), "Service metrics, page 2 of 3") || len(tr.StructuredContent) == 0 {
						t.Errorf("service_metrics: %+v", tr)
					}
				}
				if r := plain.do("tools/call", map[string]any{"name": "metrics_page", "arguments": map[string]any{}}); r.Error == nil && !strings.Contains(string(r.Result), `"isError":true`) {
					t.Errorf("plain client called the app-only tool: %s", r.Result)
				}
				if tr := decodeTool(t, ui.do("tools/call", map[string]any{"name": "two_metrics_page", "arguments": map[string]any{"seed": 7}})); !strings.Contains(tr.text(), "sample 7") {
					t.Errorf("two_metrics_page: %+v", tr)
				}

				// resources/read of the apps: the HTML with _meta.ui, the
				// csp narrowed to the grants, the prefix announced.
				read := func(uri string) (text string, meta map[string]any) {
					var res struct {
						Contents []struct {
							URI      string         `json:"uri"`
							MIMEType string         `json:"mimeType"`
							Text     string         `json:"text"`
							Meta     map[string]any `json:"_meta"`
						} `json:"contents"`
					}
					r := ui.do("resources/read", map[string]any{"uri": uri})
					if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Contents) != 1 {
						t.Fatalf("read %s: %s %v", uri, r.Result, r.Error)
					}
					c := res.Contents[0]
					if c.URI != uri || c.MIMEType != "text/html;profile=mcp-app" || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
						t.Errorf("read %s: uri %q type %q text %.40q", uri, c.URI, c.MIMEType, c.Text)
					}
					return c.Text, c.Meta
				}
				html, meta := read("ui://dashboard/view")
				if b, _ := json.Marshal(meta["ui"]); string(b) != `{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}` {
					t.Errorf("dash _meta.ui = %s", b)
				}
				if strings.Contains(html, "wasmcp-tool-prefix\" content") {
					t.Error("unprefixed app got a prefix tag")
				}
				html, meta = read("ui://two_dashboard/view")
				if b, _ := json.Marshal(meta["ui"]); string(b) != `{"csp":{"connectDomains":[]},"prefersBorder":true}` {
					t.Errorf("dash2 _meta.ui = %s", b)
				}
				if !strings.Contains(html, `<meta name="wasmcp-tool-prefix" content="two_">`) {
					t.Error("prefixed app lacks its prefix tag")
				}
				// The listed resource is narrowed the same way.
				var lst struct {
					Resources []struct {
						URI  string         `json:"uri"`
						Meta map[string]any `json:"_meta"`
					} `json:"resources"`
				}
				if r := ui.do("resources/list", map[string]any{}); json.Unmarshal(r.Result, &lst) != nil {
					t.Fatalf("resources/list %s", r.Result)
				}
				for _, r := range lst.Resources {
					if r.URI == "ui://dashboard/view" {
						if b, _ := json.Marshal(r.Meta["ui"]); strings.Contains(string(b), "metrics.example.org") {
							t.Errorf("listed app keeps the ungranted origin: %s", b)
						}
					}
				}

				// Skills: list and get with digests computed here, the
				// files' bytes by resources/read, directories.
				type entry struct {
					URI         string `json:"uri"`
					Frontmatter struct {
						Name string `json:"name"`
					} `json:"frontmatter"`
					Resources []struct {
						URI    string `json:"uri"`
						Digest string `json:"digest"`
						Size   int    `json:"size"`
					} `json:"resources"`
				}
				check := func(where string, e entry) {
					files, ok := wantSkills[e.URI]
					if !ok {
						t.Errorf("%s: unexpected skill %s", where, e.URI)
						return
					}
					if len(e.Resources) != len(files) || !strings.HasSuffix(strings.TrimSuffix(e.URI, "/SKILL.md"), "/"+e.Frontmatter.Name) {
						t.Errorf("%s: %s: %+v", where, e.URI, e)
					}
					for _, r := range e.Resources {
						if files[r.URI] != r.Digest {
							t.Errorf("%s: %s digest %s, want %s", where, r.URI, r.Digest, files[r.URI])
						}
					}
				}
				var list struct {
					Skills     []entry `json:"skills"`
					ResultType string  `json:"resultType"`
					TTL        *int    `json:"ttlMs"`
				}
				if r := plain.do("skills/list", map[string]any{}); json.Unmarshal(r.Result, &list) != nil || len(list.Skills) != len(wantSkills) {
					t.Fatalf("skills/list = %s %v", r.Result, r.Error)
				}
				if modern && (list.ResultType != "complete" || list.TTL == nil) {
					t.Errorf("skills/list resultType %q ttlMs %v", list.ResultType, list.TTL)
				}
				for _, e := range list.Skills {
					check("skills/list", e)
				}
				for uri := range wantSkills {
					var got struct {
						Skill entry `json:"skill"`
					}
					if r := plain.do("skills/get", map[string]any{"uri": uri}); json.Unmarshal(r.Result, &got) != nil {
						t.Fatalf("skills/get %s = %s %v", uri, r.Result, r.Error)
					}
					check("skills/get", got.Skill)
				}
				if r := plain.do("skills/get", map[string]any{"uri": "skill://nope/SKILL.md"}); r.Error == nil || r.Error.Code != -32602 {
					t.Errorf("skills/get of an unknown skill = %s %v", r.Result, r.Error)
				}
				for uri, files := range wantSkills["skill://tidy/SKILL.md"] {
					var res struct {
						Contents []struct {
							Text *string `json:"text"`
							Blob *string `json:"blob"`
						} `json:"contents"`
					}
					r := plain.do("resources/read", map[string]any{"uri": uri})
					if json.Unmarshal(r.Result, &res) != nil || len(res.Contents) != 1 {
						t.Fatalf("read %s = %s %v", uri, r.Result, r.Error)
					}
					var data []byte
					if c := res.Contents[0]; c.Text != nil {
						data = []byte(*c.Text)
					} else if c.Blob != nil {
						data = mustBase64(t, *c.Blob)
					}
					if digest(string(data)) != files {
						t.Errorf("read %s: bytes do not match the digest", uri)
					}
				}
				dirs := []struct {
					uri  string
					want []string
				}{
					{"skill://tidy", []string{"skill://tidy/SKILL.md", "skill://tidy/templates"}},
					{"skill://tidy/templates", []string{"skill://tidy/templates/list.md", "skill://tidy/templates/logo.bin"}},
					{"skill://dash2", []string{"skill://dash2/reading-metrics"}},
				}
				for _, d := range dirs {
					var res struct {
						Resources []struct {
							URI string `json:"uri"`
						} `json:"resources"`
					}
					r := plain.do("resources/directory/read", map[string]any{"uri": d.uri})
					if json.Unmarshal(r.Result, &res) != nil {
						t.Fatalf("directory/read %s = %s %v", d.uri, r.Result, r.Error)
					}
					var got []string
					for _, c := range res.Resources {
						got = append(got, c.URI)
					}
					if !slices.Equal(got, d.want) {
						t.Errorf("directory/read %s = %v, want %v", d.uri, got, d.want)
					}
				}
				if r := plain.do("resources/directory/read", map[string]any{"uri": "skill://tidy/SKILL.md"}); r.Error == nil || r.Error.Code != -32602 {
					t.Errorf("directory/read of a file = %s %v", r.Result, r.Error)
				}
			})
		}
	}
}

// TestInspectApps: the report of `wasmcp inspect` shows a plugin's apps
// as served (prefixed URI, narrowed _meta.ui, what was narrowed away, the
// linked and app-only tools) and its skills.
func TestInspectApps(t *testing.T) {
	wasm, err := filepath.Abs("../../examples/go-dashboard/go-dashboard.wasm")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte("[[plugins]]\nname = \"dash\"\npath = "+strconv.Quote(wasm)+
		"\nprefix = \"d_\"\n[plugins.grants]\nhttp = [\"https://api.example.com/\"]\n"), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Server.CacheDir = testCacheDir(t)
	rep, err := Inspect(context.Background(), cfg, wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Apps) != 1 || len(rep.Skills) != 1 {
		t.Fatalf("apps %+v skills %+v", rep.Apps, rep.Skills)
	}
	a := rep.Apps[0]
	if a.URI != "ui://d_dashboard/view" || string(a.UI) != `{"csp":{"connectDomains":["https://api.example.com"]},"prefersBorder":true}` ||
		len(a.Dropped) != 1 || a.Dropped[0].Domain != "https://metrics.example.org" ||
		!slices.Equal(a.Tools, []string{"d_service_metrics", "d_metrics_page"}) || !slices.Equal(a.AppOnly, []string{"d_metrics_page"}) {
		t.Errorf("app = %+v", a)
	}
	if s := rep.Skills[0]; s.URI != "skill://dash/reading-metrics/SKILL.md" || s.Files != 1 || s.Refused != "" {
		t.Errorf("skill = %+v", s)
	}
	var b strings.Builder
	rep.WriteText(&b)
	for _, want := range []string{"ui://d_dashboard/view", "app-only: d_metrics_page", "narrowed away (not in the http grants): connectDomains https://metrics.example.org", "skill://dash/reading-metrics/SKILL.md"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}
