package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wasmcp/wasmcp/internal/component"
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
	// WIT, Tools and Skipped describe a component (Mode "component"): its
	// WIT world, the tools its exported functions map to, and those that
	// map to none, with the reason. A component has no Manifest.
	WIT     string          `json:"wit,omitempty"`
	Tools   []ComponentTool `json:"tools,omitempty"`
	Skipped []string        `json:"skipped,omitempty"`
	// Apps are the plugin's MCP Apps as served: _meta.ui after the csp
	// is narrowed to the http grants, what was narrowed away, the tools
	// linked to each (docs/apps-and-skills.md).
	Apps []plugins.App `json:"apps,omitempty"`
	// Skills are the skills of the manifest as served, or why not.
	Skills []SkillReport `json:"skills,omitempty"`
}

// ComponentTool is one tool a component maps to, as tools/list would
// list it.
type ComponentTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
}

// inspectComponent reports on a component: what it imports and exports,
// its WIT world and its tools.
func inspectComponent(path string, c *component.Component, wasm []byte, granted config.Grants) *Report {
	w := c.Describe()
	rep := &Report{Path: path, SHA256: fmt.Sprintf("%x", sha256.Sum256(wasm)), Size: len(wasm),
		Mode: "component", ABI: "component", Granted: granted, WIT: w.String()}
	for _, im := range w.Imports {
		rep.Imports = append(rep.Imports, im.Name)
	}
	for _, ex := range w.Exports {
		rep.Exports = append(rep.Exports, ex.Name)
	}
	tools, skipped := w.Tools()
	for _, t := range tools {
		rep.Tools = append(rep.Tools, ComponentTool{t.Name, t.Description, t.InputSchema, t.OutputSchema})
	}
	for _, s := range skipped {
		rep.Skipped = append(rep.Skipped, s.String())
	}
	return rep
}

// writeComponent prints a component's report for a person.
func (r *Report) writeComponent(w io.Writer) {
	fmt.Fprintf(w, "component %s\n", filepath.Base(r.Path))
	fmt.Fprintf(w, "file      %s (%d bytes, sha256 %s)\n", r.Path, r.Size, r.SHA256)
	fmt.Fprintf(w, "mode      component (WASI 0.2)\n")
	if len(r.Tools) > 0 {
		fmt.Fprintf(w, "tools\n")
		for _, t := range r.Tools {
			desc, _, _ := strings.Cut(t.Description, "\n")
			fmt.Fprintf(w, "  %-28s %s\n", t.Name, desc)
		}
	}
	if len(r.Skipped) > 0 {
		fmt.Fprintf(w, "not tools\n")
		for _, s := range r.Skipped {
			fmt.Fprintf(w, "  %s\n", s)
		}
	}
	fmt.Fprintf(w, "wit\n")
	for _, line := range strings.Split(strings.TrimRight(r.WIT, "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight("  "+line, " "))
	}
	writeGranted(w, r.Imports, r.Granted)
}

// writeGranted prints, for each grant a component can use, the WASI
// interfaces it imports that use it and what the config grants.
func writeGranted(w io.Writer, imports []string, g config.Grants) {
	fmt.Fprintf(w, "%-15s%-31s | %s\n", "capabilities", "imported by the component", "granted by the config")
	var fs []string
	for _, f := range g.FS {
		fs = append(fs, f.Guest+" ("+f.Mode+")")
	}
	uses := func(prefixes ...string) []string {
		var out []string
		for _, im := range imports {
			for _, p := range prefixes {
				if strings.HasPrefix(im, p) {
					out = append(out, im)
				}
			}
		}
		return out
	}
	list := func(s []string) string {
		if len(s) == 0 {
			return "-"
		}
		return strings.Join(s, ", ")
	}
	for _, row := range []struct {
		name       string
		imported   []string
		configured []string
	}{
		{"http", uses("wasi:http/outgoing-handler"), g.HTTP},
		{"fs", uses("wasi:filesystem/preopens"), fs},
		{"env", uses("wasi:cli/environment"), sortedKeys(g.Env)},
		{"config", uses("wasi:config/store", "wasi:config/runtime"), sortedKeys(g.Config)},
	} {
		fmt.Fprintf(w, "  %-12s %-31s | %s\n", row.name, list(row.imported), list(row.configured))
	}
}

func sortedKeys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	sort.Strings(k)
	return k
}

// SkillReport is one skill of a plugin: its SKILL.md URI, files and
// bytes, or the reason it is refused.
type SkillReport struct {
	URI     string `json:"uri,omitempty"`
	Files   int    `json:"files"`
	Bytes   int    `json:"bytes"`
	Refused string `json:"refused,omitempty"`
}

// pluginSkills reports the skills of p's manifest as skillSource serves
// them.
func pluginSkills(p *plugins.Plugin) []SkillReport {
	var out []SkillReport
	m := p.Manifest()
	if m == nil {
		return nil
	}
	for _, ms := range m.Skills {
		n := 0
		for _, v := range ms.Files {
			n += len(v)
		}
		sk, err := pluginSkill(p, ms)
		if err != nil {
			out = append(out, SkillReport{Files: len(ms.Files), Bytes: n, Refused: err.Error()})
			continue
		}
		out = append(out, SkillReport{URI: sk.URI, Files: len(sk.Files), Bytes: n})
	}
	return out
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
	if c, wasm, err := plugins.ReadComponent(abs, uint64(cfg.Limits.MaxModuleSize)); err != nil {
		return nil, fmt.Errorf("plugin %s: %w", abs, err)
	} else if c != nil {
		return inspectComponent(abs, c, wasm, entry.Grants), nil
	}
	engine, err := runtime.NewEngine(ctx, runtime.Config{CacheDir: cfg.Server.CacheDir, Modules: moduleLimits(cfg.Limits),
		ExtismUser: plugins.ExtismUserFunctions()})
	if err != nil {
		return nil, err
	}
	defer engine.Close(ctx)
	return inspectSpec(ctx, engine, specFor(cfg, entry, abs), entry.Grants)
}

// WriteText prints r for a person.
func (r *Report) WriteText(w io.Writer) {
	if r.Mode == "component" {
		r.writeComponent(w)
		return
	}
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
	if len(r.Apps) > 0 {
		fmt.Fprintf(w, "apps\n")
		for _, a := range r.Apps {
			fmt.Fprintf(w, "  %-28s tools %s", a.URI, strings.Join(a.Tools, ", "))
			if len(a.AppOnly) > 0 {
				fmt.Fprintf(w, " (app-only: %s)", strings.Join(a.AppOnly, ", "))
			}
			fmt.Fprintf(w, "\n")
			if len(a.UI) > 0 {
				fmt.Fprintf(w, "    _meta.ui %s\n", a.UI)
			}
			for _, d := range a.Dropped {
				fmt.Fprintf(w, "    narrowed away (not in the http grants): %s %s\n", d.List, d.Domain)
			}
		}
	}
	if len(r.Skills) > 0 {
		fmt.Fprintf(w, "skills\n")
		for _, s := range r.Skills {
			if s.Refused != "" {
				fmt.Fprintf(w, "  refused: %s\n", s.Refused)
				continue
			}
			fmt.Fprintf(w, "  %-28s %d files, %d bytes\n", s.URI, s.Files, s.Bytes)
		}
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
	keys := sortedKeys
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
