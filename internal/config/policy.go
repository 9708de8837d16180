package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// yamlTypeName matches the Go type names in yaml's errors.
var yamlTypeName = regexp.MustCompile(` in type config\.\w+`)

// maxPolicySize bounds a policy file.
const maxPolicySize = 1 << 20

// policyDoc is a Wassette (policy-mcp) policy file, version 1.
type policyDoc struct {
	Schema      string       `yaml:"$schema"`
	Version     string       `yaml:"version"`
	Description string       `yaml:"description"`
	Permissions *permissions `yaml:"permissions"`
}

type permissions struct {
	Storage *struct {
		Allow []storagePerm `yaml:"allow"`
		Deny  []storagePerm `yaml:"deny"`
	} `yaml:"storage"`
	Network *struct {
		Allow []networkPerm `yaml:"allow"`
		Deny  []networkPerm `yaml:"deny"`
	} `yaml:"network"`
	Environment *struct {
		Allow []struct {
			Key string `yaml:"key"`
		} `yaml:"allow"`
	} `yaml:"environment"`
	Resources *resources `yaml:"resources"`
	Runtime   yaml.Node  `yaml:"runtime"`
	IPC       yaml.Node  `yaml:"ipc"`
}

type storagePerm struct {
	URI    string   `yaml:"uri"`
	Access []string `yaml:"access"`
}

type networkPerm struct {
	Host     string `yaml:"host"`
	CIDR     string `yaml:"cidr"`
	Defaults *bool  `yaml:"defaults"`
}

type resources struct {
	CPU    *float64 `yaml:"cpu"`
	Memory *uint64  `yaml:"memory"` // MB
	IO     *uint64  `yaml:"io"`
	Limits *struct {
		CPU    yaml.Node `yaml:"cpu"`
		Memory string    `yaml:"memory"` // a Kubernetes quantity: 512Mi, 1G
	} `yaml:"limits"`
}

// ApplyPolicies reads the policy file of every [[plugins]] entry that
// names one and sets the entry's grants (and memory limit) from it; Load
// calls it between Parse and Validate. A policy and a [plugins.grants]
// table on one entry, or a permission wasmcp cannot honour, is an error
// naming the entry, the file and the permission.
func (c *Config) ApplyPolicies() error {
	var errs []error
	for i := range c.Plugins {
		p := &c.Plugins[i]
		if p.Policy == "" {
			continue
		}
		where := fmt.Sprintf("plugins[%d] (%q): policy %s", i, p.Name, p.Policy)
		if p.Line > 0 {
			where = fmt.Sprintf("line %d: %s", p.Line, where)
		}
		if !reflect.DeepEqual(p.Grants, Grants{}) {
			errs = append(errs, fmt.Errorf("%s: policy and [plugins.grants]: give one, not both", where))
			continue
		}
		g, mem, err := ReadPolicy(p.Policy, os.LookupEnv)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		if mem != 0 {
			if p.Memory != 0 {
				errs = append(errs, fmt.Errorf("%s: permissions.resources memory and the entry's memory: give one, not both", where))
				continue
			}
			p.Memory = mem
		}
		p.Grants = *g
	}
	return errors.Join(errs...)
}

// ReadPolicy reads a Wassette policy file (policy-mcp format, version
// 1.x) as grants, the way Wassette applies it, and returns the memory limit
// it sets (0 for none). lookup gives the environment the allowed keys'
// values come from (an allowed key that is not set is left out, as
// Wassette does). See docs/components.md for the mapping.
func ReadPolicy(file string, lookup func(string) (string, bool)) (*Grants, Size, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPolicySize+1))
	if err != nil {
		return nil, 0, err
	}
	if len(data) > maxPolicySize {
		return nil, 0, fmt.Errorf("larger than %d bytes", maxPolicySize)
	}
	return ParsePolicy(data, filepath.Dir(file), lookup)
}

// ParsePolicy is ReadPolicy of a policy file's content; relative storage
// paths are resolved against dir.
func ParsePolicy(data []byte, dir string, lookup func(string) (string, bool)) (*Grants, Size, error) {
	var doc policyDoc
	d := yaml.NewDecoder(bytes.NewReader(data))
	d.KnownFields(true)
	if err := d.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, fmt.Errorf("not a policy file: %s", yamlTypeName.ReplaceAllString(err.Error(), ""))
	}
	if !strings.HasPrefix(doc.Version, "1.") && doc.Version != "1" {
		return nil, 0, fmt.Errorf("version: %q is not a 1.x policy version", doc.Version)
	}
	g := &Grants{}
	pm := doc.Permissions
	if pm == nil {
		return g, 0, nil
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("permissions."+format, args...)) }
	if pm.Storage != nil {
		for i, s := range pm.Storage.Allow {
			host, err := storagePath(s.URI, dir)
			if err != nil {
				bad("storage.allow[%d].uri %q: %v", i, s.URI, err)
				continue
			}
			mode, err := storageMode(s.Access)
			if err != nil {
				bad("storage.allow[%d].access: %v", i, err)
				continue
			}
			merged := false
			for j := range g.FS {
				if g.FS[j].Host == host {
					if mode == "rw" {
						g.FS[j].Mode = "rw"
					}
					merged = true
				}
			}
			if !merged {
				g.FS = append(g.FS, Mount{Host: host, Guest: filepath.ToSlash(host), Mode: mode})
			}
		}
		for i, s := range pm.Storage.Deny {
			host, err := storagePath(s.URI, dir)
			if err != nil {
				bad("storage.deny[%d].uri %q: %v", i, s.URI, err)
				continue
			}
			for _, m := range g.FS {
				if within(host, m.Host) || within(m.Host, host) {
					bad("storage.deny[%d].uri %q: overlaps the allowed %s; wasmcp mounts whole directories and cannot deny part of one (everything not allowed is already denied)", i, s.URI, m.Host)
					break
				}
			}
		}
	}
	if pm.Network != nil {
		var hosts []string
		for i, n := range pm.Network.Allow {
			switch {
			case n.CIDR != "":
				bad("network.allow[%d].cidr %q: wasmcp grants HTTP by host name, not by address range; list the hosts", i, n.CIDR)
			case n.Defaults != nil:
				bad("network.allow[%d].defaults: wasmcp has no predefined host list; list the hosts", i)
			case n.Host == "":
				bad("network.allow[%d]: want a host", i)
			case strings.Contains(n.Host, "*"):
				bad("network.allow[%d].host %q: wildcards are not supported; list each host", i, n.Host)
			default:
				rules, h, err := hostRules(n.Host)
				if err != nil {
					bad("network.allow[%d].host %q: %v", i, n.Host, err)
					continue
				}
				hosts = append(hosts, h)
				g.HTTP = append(g.HTTP, rules...)
			}
		}
		for i, n := range pm.Network.Deny {
			switch {
			case n.CIDR != "":
				p, err := netip.ParsePrefix(n.CIDR)
				if err != nil {
					bad("network.deny[%d].cidr %q: not a CIDR range", i, n.CIDR)
				} else if p.Bits() != 0 {
					bad("network.deny[%d].cidr %q: wasmcp cannot deny an address range to the hosts a policy allows; only 0.0.0.0/0 or ::/0 (everything not allowed, already denied) is accepted", i, n.CIDR)
				}
			case n.Host == "*":
			case n.Host != "":
				for _, h := range hosts {
					if hostMatches(strings.ToLower(n.Host), h) {
						bad("network.deny[%d].host %q: denies the allowed host %s", i, n.Host, h)
						break
					}
				}
			default:
				bad("network.deny[%d]: want a host or a cidr", i)
			}
		}
	}
	if pm.Environment != nil {
		for i, e := range pm.Environment.Allow {
			if !validEnvName(e.Key) {
				bad("environment.allow[%d].key %q: not a valid environment variable name", i, e.Key)
				continue
			}
			v, ok := lookup(e.Key)
			if !ok {
				continue
			}
			if g.Env == nil {
				g.Env, g.Config = map[string]string{}, map[string]string{}
			}
			g.Env[e.Key], g.Config[e.Key] = v, v
		}
	}
	var mem Size
	if r := pm.Resources; r != nil {
		if r.CPU != nil || (r.Limits != nil && !r.Limits.CPU.IsZero()) {
			bad("resources cpu: wasmcp has no per-plugin CPU share (every call has a deadline and the CPU scheduler); remove it")
		}
		if r.IO != nil {
			bad("resources.io: wasmcp has no I/O rate limit; remove it")
		}
		switch {
		case r.Limits != nil && r.Limits.Memory != "":
			q, err := quantity(r.Limits.Memory)
			if err != nil {
				bad("resources.limits.memory %q: %v", r.Limits.Memory, err)
			}
			mem = Size(q)
		case r.Memory != nil:
			mem = Size(*r.Memory << 20)
		}
	}
	if !pm.Runtime.IsZero() {
		bad("runtime: wasmcp runs every plugin on its own engine and sandbox; remove it")
	}
	if !pm.IPC.IsZero() {
		bad("ipc: not supported; remove it")
	}
	if len(errs) > 0 {
		return nil, 0, errors.Join(errs...)
	}
	return g, mem, nil
}

// hostRules maps an allowed host to http grants, as Wassette matches
// hosts: a bare host ("api.example.com", optionally with a :port) allows
// https and http; a URL ("https://api.example.com/") allows its scheme
// only, to the whole host (its path is ignored). It also returns the
// host name, lower case.
func hostRules(host string) ([]string, string, error) {
	if strings.Contains(host, "://") {
		u, err := url.Parse(host)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
			return nil, "", errors.New("want a host name, or an http or https URL of one")
		}
		h := strings.ToLower(u.Host)
		return []string{u.Scheme + "://" + h + "/"}, strings.ToLower(u.Hostname()), nil
	}
	u, err := url.Parse("https://" + host + "/")
	if err != nil || u.Hostname() == "" || u.User != nil || u.Path != "/" || u.RawQuery != "" || u.Fragment != "" {
		return nil, "", errors.New("want a host name with an optional :port")
	}
	h := strings.ToLower(u.Host)
	return []string{"https://" + h + "/", "http://" + h + "/"}, strings.ToLower(u.Hostname()), nil
}

// storagePath turns an fs:// URI into the absolute directory it names:
// the path after fs://, a trailing /** (the directory's whole tree)
// dropped, resolved against dir when relative.
func storagePath(uri, dir string) (string, error) {
	p, ok := strings.CutPrefix(uri, "fs://")
	if !ok {
		return "", errors.New("only fs:// storage is supported")
	}
	p = strings.TrimSuffix(p, "/**")
	switch {
	case p == "" || p == "**":
		return "", errors.New("names no directory")
	case strings.ContainsAny(p, "*?["):
		return "", errors.New("wasmcp mounts whole directories: a pattern other than a trailing /** is not supported")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p), nil
}

// storageMode maps an access list to a mount mode: [read] is "ro",
// [read, write] "rw". Write without read cannot be honoured (a mount that
// can be written can be read).
func storageMode(access []string) (string, error) {
	read, write := false, false
	for _, a := range access {
		switch a {
		case "read":
			read = true
		case "write":
			write = true
		default:
			return "", fmt.Errorf("%q is not read or write", a)
		}
	}
	switch {
	case read && write:
		return "rw", nil
	case read:
		return "ro", nil
	case write:
		return "", errors.New("write without read cannot be honoured (a writable mount is readable); write [read, write]")
	}
	return "", errors.New("empty")
}

// within reports whether path p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// hostMatches reports whether the policy host pattern pat (a name or
// *.domain) matches host.
func hostMatches(pat, host string) bool {
	if suffix, ok := strings.CutPrefix(pat, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return pat == host
}

// quantity parses a Kubernetes memory quantity: a number of bytes with an
// optional suffix k, M, G, T (powers of 1000) or Ki, Mi, Gi, Ti (powers of
// 1024).
func quantity(s string) (uint64, error) {
	units := []struct {
		suffix string
		mult   uint64
	}{{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40}, {"k", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}}
	mult := uint64(1)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, mult = n, u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, errors.New("want a positive whole number with an optional suffix Ki, Mi, Gi, Ti, k, M, G or T")
	}
	if n > (1<<63)/mult {
		return 0, errors.New("too large")
	}
	return n * mult, nil
}
