// Command go-dashboard is a wasmcp plugin with an MCP App: the tool
// service_metrics returns a page of request metrics per service, as a
// text table for every client and as structured content that its app
// (ui://dashboard/view) shows as a sortable table and a bar chart. The
// app pages and refreshes through the app-only tool metrics_page, which
// the model never sees. It also embeds a skill (skill://<plugin>/
// reading-metrics/SKILL.md) telling an agent how to read the numbers.
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o examples/go-dashboard/go-dashboard.wasm ./examples/go-dashboard
//
// It needs no grants. Its app asks to connect to https://api.example.com
// and https://metrics.example.org; the host keeps only the origins the
// plugin's http grants cover (docs/apps-and-skills.md).
package main

import (
	_ "embed"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

//go:embed app.html
var appHTML string

//go:embed skill/SKILL.md
var skillMD string

// appURI is the app's resource; the host puts the plugin's prefix in its
// authority when it has one.
const appURI = "ui://dashboard/view"

var plugin = wasmcp.New(wasmcp.Info{
	Name:        "dashboard",
	Version:     "1.0.0",
	Description: "Request metrics per service, with an interactive table and chart for clients that show MCP Apps.",
})

func init() {
	border := true
	plugin.AddApp(wasmcp.App{
		URI:         appURI,
		Name:        "dashboard",
		Title:       "Service metrics",
		Description: "A sortable table and a bar chart of the metrics service_metrics returns; pages and refreshes in place.",
		HTML:        appHTML,
		CSP: &wasmcp.AppCSP{
			ConnectDomains: []string{"https://api.example.com", "https://metrics.example.org"},
		},
		PrefersBorder: &border,
	})

	pageIn := wasmcp.Object(
		wasmcp.Optional("page", wasmcp.Integer("Page number, from 1 (default 1).").With("minimum", 1).With("maximum", maxPage)),
		wasmcp.Optional("page_size", wasmcp.Integer("Services per page (default 5).").With("minimum", 1).With("maximum", maxPageSize)),
		wasmcp.Optional("seed", wasmcp.Integer("Sample number: another seed is another sample of the metrics (default 1).").With("minimum", 0)),
	)
	out := metricsSchema()
	plugin.AddRawTool(wasmcp.Tool{
		Name:  "service_metrics",
		Title: "Service metrics",
		Description: "Shows requests, errors and p95 latency per service, one page at a time. " +
			"Clients with MCP Apps show an interactive table and chart; others get a text table.",
		InputSchema:  pageIn,
		OutputSchema: out,
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		Meta:         wasmcp.UIMeta(appURI),
	}, metricsTool)
	plugin.AddRawTool(wasmcp.Tool{
		Name:         "metrics_page",
		Title:        "Metrics page (app)",
		Description:  "The dashboard app's paging and refresh: the same result as service_metrics.",
		InputSchema:  pageIn,
		OutputSchema: out,
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
		Meta:         wasmcp.UIMeta(appURI, wasmcp.VisibleToApp),
	}, metricsTool)

	plugin.AddSkill(wasmcp.Skill{Files: map[string]string{"SKILL.md": skillMD}})
	wasmcp.Serve(plugin)
}

func ptr[T any](v T) *T { return &v }

func main() {}
