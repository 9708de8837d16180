package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// Report is what `wasmcp inspect` prints about one plugin file.
type Report struct {
	Path      string            `json:"path"`
	SHA256    string            `json:"sha256"`
	Size      int               `json:"size"`
	Mode      string            `json:"mode"`
	ABI       string            `json:"abi"` // wasmcp/1, extism/v1 or extism/v2
	Imports   []string          `json:"imports"`
	Exports   []string          `json:"exports"`
	Manifest  *plugins.Manifest `json:"manifest"`
	Requested plugins.Requested `json:"requested"`
	Granted   config.Grants     `json:"granted"`
}

// Inspect loads the plugin at path (with the grants cfg gives a
// [[plugins]] entry of the same path, else none) and reports its
// manifest, imports and capabilities.
func Inspect(ctx context.Context, cfg *config.Config, path string) (*Report, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	entry := &config.Plugin{}
	for i := range cfg.Plugins {
		if p, _ := filepath.Abs(cfg.Plugins[i].Path); p == abs {
			entry = &cfg.Plugins[i]
		}
	}
	engine, err := runtime.NewEngine(ctx, runtime.Config{CacheDir: cfg.Server.CacheDir, Modules: moduleLimits(cfg.Limits)})
	if err != nil {
		return nil, err
	}
	defer engine.Close(ctx)
	return inspectSpec(ctx, engine, specFor(cfg, entry, abs), entry.Grants)
}

// WriteText prints r for a person.
func (r *Report) WriteText(w io.Writer) {
	m := r.Manifest
	fmt.Fprintf(w, "plugin   %s %s\n", m.Name, m.Version)
	if m.Description != "" {
		fmt.Fprintf(w, "         %s\n", m.Description)
	}
	fmt.Fprintf(w, "file     %s (%d bytes, sha256 %s)\n", r.Path, r.Size, r.SHA256)
	fmt.Fprintf(w, "mode     %s, abi %s\n", r.Mode, r.ABI)
	section := func(title string, items []json.RawMessage, key string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(w, "%s\n", title)
		for _, it := range items {
			var v map[string]any
			_ = json.Unmarshal(it, &v)
			desc, _ := v["description"].(string)
			if i := strings.IndexByte(desc, '\n'); i >= 0 {
				desc = desc[:i]
			}
			fmt.Fprintf(w, "  %-28v %s\n", v[key], desc)
		}
	}
	section("tools", m.Tools, "name")
	section("resources", m.Resources, "uri")
	section("resource templates", m.ResourceTemplates, "uriTemplate")
	section("prompts", m.Prompts, "name")
	if m.Completions {
		fmt.Fprintf(w, "completions yes\n")
	}
	fmt.Fprintf(w, "imports  %s\n", strings.Join(r.Imports, " "))
	fmt.Fprintf(w, "capabilities   requested by the plugin  |  granted by the config\n")
	row := func(name, req, got string) { fmt.Fprintf(w, "  %-12s %-26s | %s\n", name, req, got) }
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ", ")
	}
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "-"
	}
	keys := func(m map[string]string) []string {
		var k []string
		for x := range m {
			k = append(k, x)
		}
		sort.Strings(k)
		return k
	}
	var fs []string
	for _, f := range r.Granted.FS {
		fs = append(fs, f.Guest+" ("+f.Mode+")")
	}
	row("http", list(r.Requested.HTTP), list(r.Granted.HTTP))
	row("kv", yes(r.Requested.KV), yes(r.Granted.KV))
	row("config", list(r.Requested.Config), list(keys(r.Granted.Config)))
	row("env", list(r.Requested.Env), list(keys(r.Granted.Env)))
	row("fs", list(r.Requested.FS), list(fs))
	row("elicitation", yes(r.Requested.Elicitation), yes(r.Granted.Elicitation))
	row("sampling", yes(r.Requested.Sampling), yes(r.Granted.Sampling))
	row("roots", yes(r.Requested.Roots), yes(r.Granted.Roots))
}
