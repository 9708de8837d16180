// Command go-fetch is a wasmcp plugin that fetches web pages through the
// host's http/fetch (only URLs the operator granted), extracts their title,
// readable text and links, and caches the result in the plugin's key-value
// store with a time-to-live.
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o examples/go-fetch/go-fetch.wasm ./examples/go-fetch
//
// It needs http grants for the sites it may read, and optionally kv (the
// cache) and the config key cache_ttl (a Go duration, default 10m).
package main

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

var plugin = wasmcp.New(wasmcp.Info{
	Name:        "go-fetch",
	Version:     "1.0.0",
	Description: "Fetches web pages the operator allows, returns their title, text and links, and caches them.",
	Capabilities: wasmcp.Capabilities{
		HTTP:   []string{"https://", "http://"}, // any site: the operator's grants decide which
		KV:     true,
		Config: []string{"cache_ttl"},
	},
})

func init() {
	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:  "fetch_page",
		Title: "Fetch a web page",
		Description: "Fetches a URL and returns the page's title, its readable text (HTML reduced to plain text with " +
			"Markdown-style headings and lists) and its links. Results are cached for a while; set refresh to fetch again. " +
			"Only sites the server's operator allowed can be fetched.",
		InputSchema: wasmcp.Object(
			wasmcp.Required("url", wasmcp.String("An http or https URL.").With("format", "uri").With("maxLength", 2048)),
			wasmcp.Optional("max_chars", wasmcp.Integer("Longest text to return (default 20000).").With("minimum", 100).With("maximum", maxStoredText)),
			wasmcp.Optional("refresh", wasmcp.Boolean("Ignore the cache.")),
		),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("url", wasmcp.String("")),
			wasmcp.Required("status", wasmcp.Integer("HTTP status.")),
			wasmcp.Required("content_type", wasmcp.String("")),
			wasmcp.Required("title", wasmcp.String("Empty when the page has none.")),
			wasmcp.Required("text", wasmcp.String("")),
			wasmcp.Required("truncated", wasmcp.Boolean("True when text was cut at max_chars.")),
			wasmcp.Required("links", wasmcp.Array(wasmcp.Object(
				wasmcp.Required("url", wasmcp.String("Absolute URL.")),
				wasmcp.Required("text", wasmcp.String("")),
			), "Up to 50 links of the page.")),
			wasmcp.Required("cached", wasmcp.Boolean("True when served from the cache.")),
			wasmcp.Required("fetched_at", wasmcp.String("RFC 3339 time of the fetch.")),
		),
		Annotations: &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(true)},
	}, fetchPage)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:         "clear_cache",
		Title:        "Clear the page cache",
		Description:  "Forgets the cached copy of one URL, or of every page when url is left out.",
		InputSchema:  wasmcp.Object(wasmcp.Optional("url", wasmcp.String("The URL to forget."))),
		OutputSchema: wasmcp.Object(wasmcp.Required("removed", wasmcp.Integer("Cache entries removed."))),
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(false), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
	}, clearCache)

	wasmcp.Serve(plugin)
}

func ptr[T any](v T) *T { return &v }

func main() {} // required by Go; a reactor never runs it
