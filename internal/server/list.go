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

// Listing is one plugin of `wasmcp plugins`: where the configuration
// takes it from, the limits and grants it runs with, and, when it loads,
// its Report (ABI, digest, tools, requested capabilities).
type Listing struct {
	Name string `json:"name"`
	// Source is "[[plugins]] line N", "plugin_dirs DIR" or "url URL".
	Source string        `json:"source"`
	Path   string        `json:"path,omitempty"`
	Limits config.Limits `json:"limits"`
	Grants config.Grants `json:"grants"`
	Report *Report       `json:"report,omitempty"`
	// Error says why the plugin did not load (or, for a url plugin, that
	// it is not fetched here).
	Error string `json:"error,omitempty"`
}

// List loads every plugin cfg names, each on its own (one that fails does
// not hide the others, and collisions between them are not checked), and
// reports it as `wasmcp inspect` would, with its source and limits. Url
// plugins are listed but not fetched.
func List(ctx context.Context, cfg *config.Config) ([]Listing, error) {
	specs, err := Specs(cfg)
	if err != nil {
		return nil, err
	}
	engine, err := runtime.NewEngine(ctx, runtime.Config{CacheDir: cfg.Server.CacheDir, Modules: moduleLimits(cfg.Limits),
		ExtismUser: plugins.ExtismUserFunctions()})
	if err != nil {
		return nil, err
	}
	defer engine.Close(ctx)
	entries := map[string]*config.Plugin{}
	for i := range cfg.Plugins {
		if p := &cfg.Plugins[i]; p.Path != "" {
			abs, _ := filepath.Abs(p.Path)
			entries[abs] = p
		}
	}
	var out []Listing
	for _, s := range specs {
		l := Listing{Name: s.Name, Path: s.Path}
		entry, ok := entries[s.Path]
		if ok {
			l.Source = "[[plugins]]"
			if entry.Line > 0 {
				l.Source += fmt.Sprintf(" line %d", entry.Line)
			}
		} else {
			entry = &config.Plugin{}
			l.Source = "plugin_dirs " + filepath.Dir(s.Path)
		}
		l.Limits, l.Grants = cfg.LimitsFor(entry), entry.Grants
		rep, err := inspectSpec(ctx, engine, s, entry.Grants)
		if err != nil {
			l.Error = err.Error()
		} else {
			l.Report = rep
			if l.Name == "" {
				l.Name = rep.Manifest.Name
			}
		}
		out = append(out, l)
	}
	for i := range cfg.Plugins {
		if p := &cfg.Plugins[i]; p.URL != "" {
			out = append(out, Listing{Name: p.Name, Source: "url " + p.URL, Limits: cfg.LimitsFor(p), Grants: p.Grants,
				Error: "not fetched here: `wasmcp serve` fetches url plugins"})
		}
	}
	return out, nil
}

// inspectSpec loads s alone with engine and reports it.
func inspectSpec(ctx context.Context, engine *runtime.Engine, s plugins.Spec, granted config.Grants) (*Report, error) {
	reg, err := plugins.NewRegistry(plugins.Options{Engine: engine})
	if err != nil {
		return nil, err
	}
	defer reg.Close(ctx)
	if err := reg.Load(ctx, []plugins.Spec{s}); err != nil {
		return nil, err
	}
	p := reg.Plugins()[0]
	m := p.Module()
	rep := &Report{Path: s.Path, SHA256: p.SHA256(), Size: m.Size(), Manifest: p.Manifest(),
		Requested: p.Manifest().Capabilities, Granted: granted, Exports: m.Exports()}
	rep.Mode = "reactor"
	switch m.Mode() {
	case runtime.Command:
		rep.Mode = "command"
	case runtime.Extism:
		rep.Mode = "extism"
	case runtime.Component:
		rep.Mode = "component"
	}
	rep.ABI = p.ABI()
	for _, imp := range m.Imports() {
		rep.Imports = append(rep.Imports, imp.Module+"."+imp.Name)
	}
	sort.Strings(rep.Imports)
	rep.Apps = p.Apps()
	rep.Skills = pluginSkills(p)
	return rep, nil
}

// WriteListings prints ls for a person: a few lines per plugin.
func WriteListings(w io.Writer, ls []Listing) {
	for i, l := range ls {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s  (%s)\n", l.Name, l.Source)
		if r := l.Report; r != nil {
			fmt.Fprintf(w, "  file      %s\n", r.Path)
			fmt.Fprintf(w, "  sha256    %s (%d bytes)\n", r.SHA256, r.Size)
			fmt.Fprintf(w, "  abi       %s (%s), %s %s\n", r.ABI, r.Mode, r.Manifest.Name, r.Manifest.Version)
			names := func(items []json.RawMessage, key string) string {
				var s []string
				for _, it := range items {
					var v map[string]any
					_ = json.Unmarshal(it, &v)
					s = append(s, fmt.Sprint(v[key]))
				}
				return strings.Join(s, ", ")
			}
			for _, sec := range []struct {
				title string
				items []json.RawMessage
				key   string
			}{{"tools", r.Manifest.Tools, "name"}, {"resources", r.Manifest.Resources, "uri"},
				{"templates", r.Manifest.ResourceTemplates, "uriTemplate"}, {"prompts", r.Manifest.Prompts, "name"}} {
				if len(sec.items) > 0 {
					fmt.Fprintf(w, "  %-9s %s\n", sec.title, names(sec.items, sec.key))
				}
			}
		} else if l.Path != "" {
			fmt.Fprintf(w, "  file      %s\n", l.Path)
		}
		fmt.Fprintf(w, "  grants    %s\n", grantsText(l.Grants))
		fmt.Fprintf(w, "  limits    memory %s, timeout %s, max_output %s, instances %d\n",
			l.Limits.Memory, l.Limits.Timeout, l.Limits.MaxOutput, l.Limits.Instances)
		if l.Error != "" {
			fmt.Fprintf(w, "  error     %s\n", l.Error)
		}
	}
}

// grantsText is g on one line, "none" when it grants nothing.
func grantsText(g config.Grants) string {
	keys := func(m map[string]string) string {
		k := make([]string, 0, len(m))
		for x := range m {
			k = append(k, x)
		}
		sort.Strings(k)
		return strings.Join(k, " ")
	}
	var s []string
	if len(g.HTTP) > 0 {
		s = append(s, "http "+strings.Join(g.HTTP, " "))
	}
	if g.KV {
		s = append(s, "kv")
	}
	if len(g.Config) > 0 {
		s = append(s, "config "+keys(g.Config))
	}
	if len(g.Env) > 0 {
		s = append(s, "env "+keys(g.Env))
	}
	for _, m := range g.FS {
		s = append(s, "fs "+m.Host+" -> "+m.Guest+" ("+m.Mode+")")
	}
	for _, b := range []struct {
		on   bool
		name string
	}{{g.Elicitation, "elicitation"}, {g.Sampling, "sampling"}, {g.Roots, "roots"}} {
		if b.on {
			s = append(s, b.name)
		}
	}
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, "; ")
}
