package sdktest

import (
	"encoding/json"
	"testing"

	"github.com/wasmcp/wasmcp/runtime"
)

// appLangs are the SDK fixtures that declare an MCP App (ui://fixture/app
// with its _meta.ui, echo linked to it as app-only) and a skill
// (fixture-skill with a supporting file) through their SDK's helpers.
var appLangs = []string{"as", "c", "rust"}

// TestAppsAndSkills: the manifest carries the app resource with its
// MIME type and _meta.ui, the tool's _meta.ui and the skills field; the
// app's read answers the HTML with the same _meta.
func TestAppsAndSkills(t *testing.T) {
	for _, lang := range appLangs {
		t.Run(lang, func(t *testing.T) {
			t.Parallel()
			p := newPool(t, fixtures[lang], runtime.Limits{})
			status, m := call(t, p, nil, envelope("wasmcp/describe", obj{}, nil))
			if status != 0 {
				t.Fatalf("status %d: %v", status, m)
			}
			const ui = `{"ui":{"csp":{"connectDomains":["https://example.com"]},"prefersBorder":true}}`
			var app obj
			for _, r := range m["resources"].([]any) {
				if r.(obj)["uri"] == "ui://fixture/app" {
					app = r.(obj)
				}
			}
			if app == nil || app["mimeType"] != "text/html;profile=mcp-app" || js(app["_meta"]) != ui {
				t.Errorf("app resource = %v", app)
			}
			for _, tl := range m["tools"].([]any) {
				if tool := tl.(obj); tool["name"] == "echo" {
					if got := js(tool["_meta"]); got != `{"ui":{"resourceUri":"ui://fixture/app","visibility":["app"]}}` {
						t.Errorf("echo _meta = %s", got)
					}
				}
			}
			if got := js(m["skills"]); got != `[{"files":{"SKILL.md":"---\nname: fixture-skill\ndescription: A skill of the SDK fixture\n---\n# Fixture\n","refs/notes.md":"notes\n"}}]` {
				t.Errorf("skills = %s", got)
			}

			status, r := call(t, p, nil, envelope("resources/read", obj{"uri": "ui://fixture/app"}, nil))
			c, _ := r["contents"].([]any)
			if status != 0 || len(c) != 1 {
				t.Fatalf("read: %d %v", status, r)
			}
			got := c[0].(obj)
			if got["uri"] != "ui://fixture/app" || got["mimeType"] != "text/html;profile=mcp-app" || js(got["_meta"]) != ui ||
				got["text"] != "<!DOCTYPE html><html><head><title>fixture</title></head><body>app</body></html>" {
				t.Errorf("read = %v", got)
			}
		})
	}
}

// js is v as compact JSON with sorted keys.
func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
