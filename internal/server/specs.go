package server

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/plugins"
	"github.com/wasmcp/wasmcp/runtime"
)

// Specs turns a configuration into plugin specs: every [[plugins]] entry,
// then every *.wasm file of the plugin directories (sorted by name) that is
// not already an entry, with the default limits and no grants. Url
// plugins are left out: the server resolves them first (see sources.go).
func Specs(cfg *config.Config) ([]plugins.Spec, error) { return specsWith(cfg, nil) }

// specsWith is Specs with the url plugins src has resolved, each pinned to
// its wasm's SHA-256.
func specsWith(cfg *config.Config, src *urlSources) ([]plugins.Spec, error) {
	var specs []plugins.Spec
	seen := map[string]bool{}
	for i := range cfg.Plugins {
		p := &cfg.Plugins[i]
		if p.URL != "" {
			if r, ok := src.lookup(p.Name); ok {
				s := specFor(cfg, p, r.Path)
				s.SHA256 = r.SHA256
				specs = append(specs, s)
			}
			continue
		}
		abs, err := filepath.Abs(p.Path)
		if err != nil {
			return nil, fmt.Errorf("plugin %q: %w", p.Name, err)
		}
		seen[abs] = true
		specs = append(specs, specFor(cfg, p, abs))
	}
	for _, dir := range cfg.Server.PluginDirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("plugin directory: %w", err)
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".wasm") {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		for _, n := range names {
			abs, err := filepath.Abs(filepath.Join(dir, n))
			if err != nil {
				return nil, err
			}
			if seen[abs] {
				continue
			}
			seen[abs] = true
			specs = append(specs, specFor(cfg, &config.Plugin{}, abs))
		}
	}
	return specs, nil
}

func specFor(cfg *config.Config, p *config.Plugin, path string) plugins.Spec {
	l := cfg.LimitsFor(p)
	s := plugins.Spec{
		Name:   p.Name,
		Path:   path,
		SHA256: p.SHA256,
		Prefix: p.Prefix,
		Scopes: p.Scopes,
		Limits: runtime.Limits{
			Memory:    uint64(l.Memory),
			Timeout:   time.Duration(l.Timeout),
			MaxOutput: int(l.MaxOutput),
			Instances: l.Instances,
			MaxQueue:  l.MaxQueue,
			QueueWait: time.Duration(l.QueueWait),
			// Zero leaves the runtime's default.
			IdleTimeout: time.Duration(l.Idle),
		},
		Grants: hostapi.Grants{
			HTTP:        p.Grants.HTTP,
			KV:          p.Grants.KV,
			Config:      p.Grants.Config,
			Elicitation: p.Grants.Elicitation,
			Sampling:    p.Grants.Sampling,
			Roots:       p.Grants.Roots,
		},
	}
	if len(p.Grants.Env) > 0 {
		s.Sandbox.Env = p.Grants.Env
	}
	s.Tools, s.Hide = p.Tools, p.Hide
	for orig, o := range p.Override {
		if s.Override == nil {
			s.Override = map[string]plugins.ToolOverride{}
		}
		s.Override[orig] = plugins.ToolOverride{Name: o.Name, Description: o.Description}
	}
	if !p.Rate.IsZero() {
		s.Rate, s.Burst = p.Rate.PerSecond(), p.Burst
		if s.Burst <= 0 {
			s.Burst = max(1, int(math.Ceil(p.Rate.Count)))
		}
	}
	for _, m := range p.Grants.FS {
		s.Sandbox.Mounts = append(s.Sandbox.Mounts, runtime.Mount{HostPath: m.Host, GuestPath: m.Guest, ReadOnly: m.ReadOnly()})
	}
	return s
}
