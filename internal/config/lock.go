package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// LockFile is the name of the lock file, kept beside the configuration.
const LockFile = "wasmcp.lock"

// Lock is the content of wasmcp.lock: for each url plugin, the digest
// it resolved to, the wasm's SHA-256 and the grants it was locked with
// (Plugins); for every plugin, the definitions of its tools, prompts,
// resources and resource templates as clients saw them (Pins). serve
// loads exactly the locked digests, refuses a plugin whose grants widened
// since, and under [server] pin withholds or warns about an item whose
// definition is not in Pins.
type Lock struct {
	Version int         `toml:"version"`
	Plugins []LockEntry `toml:"plugins,omitempty"`
	Pins    []PinEntry  `toml:"pins,omitempty"`
}

// The values of [server] pin.
const (
	PinBlock = "block"
	PinWarn  = "warn"
	PinOff   = "off"
)

// LockVersion is the version `wasmcp lock` writes: 2 has Pins; files of
// version 1 (url plugins only) still load.
const LockVersion = 2

// PinEntry is one [[pins]] entry of wasmcp.lock: the definitions one
// plugin exposed when it was locked. A plugin with an entry is pinned to
// exactly these items (an entry without items pins it to none); a plugin
// without one is not pinned.
type PinEntry struct {
	// Plugin is the plugin's name in the configuration.
	Plugin string `toml:"plugin"`
	// SHA256 is the hex SHA-256 of the wasm that was described (for a
	// person reading the file; serve compares the definitions, not it).
	SHA256 string `toml:"sha256"`
	// Items are the plugin's definitions, by kind then name.
	Items []PinnedItem `toml:"items,omitempty"`
}

// PinnedItem is one definition of a [[pins]] entry.
type PinnedItem struct {
	// Kind is "tool", "prompt", "resource" or "template".
	Kind string `toml:"kind"`
	// Name is what clients address the item by: a tool's or prompt's
	// exposed name (its prefix included), a resource's URI, a
	// template's uriTemplate.
	Name string `toml:"name"`
	// Digest is "sha256:HEX" of Definition.
	Digest string `toml:"digest"`
	// Definition is the item's JSON as clients list it, in canonical
	// form (members sorted, no insignificant space).
	Definition string `toml:"definition"`
}

// PinKinds are the kinds of PinnedItem, in the order the file lists
// them.
var PinKinds = []string{"tool", "prompt", "resource", "template"}

// DefinitionDigest returns "sha256:HEX" of a canonical definition.
func DefinitionDigest(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Pin returns the [[pins]] entry of plugin name, or nil (also on a nil
// Lock).
func (l *Lock) Pin(name string) *PinEntry {
	if l == nil {
		return nil
	}
	for i := range l.Pins {
		if l.Pins[i].Plugin == name {
			return &l.Pins[i]
		}
	}
	return nil
}

// LockEntry is one [[plugins]] entry of wasmcp.lock.
type LockEntry struct {
	// Name and URL identify the configured plugin; an entry whose URL no
	// longer matches the configuration is ignored.
	Name string `toml:"name"`
	URL  string `toml:"url"`
	// Digest is the manifest digest (oci://) or the file's
	// "sha256:HEX" (https://); SHA256 is the wasm file's hex SHA-256.
	Digest string `toml:"digest"`
	SHA256 string `toml:"sha256"`
	// Grants are the plugin's grants when it was locked.
	Grants Grants `toml:"grants"`
}

// LockPath returns where the lock file of c lives: beside its
// configuration file; "" when c did not come from a file.
func LockPath(c *Config) string {
	if c.File == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(c.File), LockFile)
}

// LoadLock reads the lock file of c; nil (and no error) when there is
// none.
func LoadLock(c *Config) (*Lock, error) {
	path := LockPath(c)
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err)
	}
	return ParseLock(data)
}

// ParseLock decodes the content of a lock file, strictly (unknown keys
// are errors, naming their line).
func ParseLock(data []byte) (*Lock, error) {
	var l Lock
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(&l)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", LockFile, strings.TrimPrefix(err.Error(), "toml: "))
	}
	if errs := unknownKeys(data, md); len(errs) > 0 {
		return nil, fmt.Errorf("%s: %w", LockFile, errors.Join(errs...))
	}
	seen := make(map[string]int, len(l.Plugins))
	for i, e := range l.Plugins {
		if !ValidName(e.Name) || e.URL == "" || !strings.HasPrefix(e.Digest, "sha256:") || !hexPattern.MatchString(strings.TrimPrefix(e.Digest, "sha256:")) || !hexPattern.MatchString(e.SHA256) {
			return nil, fmt.Errorf("%s: plugins[%d] (%q): name, url, digest (sha256:HEX) and sha256 are required", LockFile, i, e.Name)
		}
		// serve loads the entry of a name: two would leave it to the
		// order which digest runs.
		if j, ok := seen[e.Name]; ok {
			o := l.Plugins[j]
			return nil, fmt.Errorf("%s: plugins[%d] (%s, %s) and plugins[%d] (%s, %s) both lock plugin %q: keep one (run `wasmcp lock` to rewrite the file)",
				LockFile, j, o.URL, o.Digest, i, e.URL, e.Digest, e.Name)
		}
		seen[e.Name] = i
	}
	if err := checkPins(l.Pins); err != nil {
		return nil, fmt.Errorf("%s: %w", LockFile, err)
	}
	return &l, nil
}

// checkPins checks the [[pins]] entries: named, unique, every item of a
// known kind, named once, its digest that of its definition.
func checkPins(pins []PinEntry) error {
	seen := map[string]bool{}
	for i, p := range pins {
		if !ValidName(p.Plugin) {
			return fmt.Errorf("pins[%d]: plugin %q is not a plugin name", i, p.Plugin)
		}
		if seen[p.Plugin] {
			return fmt.Errorf("pins[%d]: plugin %q has two entries: keep one (run `wasmcp lock --update` to rewrite the file)", i, p.Plugin)
		}
		seen[p.Plugin] = true
		items := map[string]bool{}
		for j, it := range p.Items {
			at := fmt.Sprintf("pins[%d] (%s) items[%d]", i, p.Plugin, j)
			if !slices.Contains(PinKinds, it.Kind) {
				return fmt.Errorf("%s: kind %q is not one of %s", at, it.Kind, strings.Join(PinKinds, ", "))
			}
			if it.Name == "" {
				return fmt.Errorf("%s: name is required", at)
			}
			if items[it.Kind+" "+it.Name] {
				return fmt.Errorf("%s: %s %q is listed twice", at, it.Kind, it.Name)
			}
			items[it.Kind+" "+it.Name] = true
			if d := DefinitionDigest(it.Definition); it.Digest != d {
				return fmt.Errorf("%s: %s %q: digest %s is not that of its definition (%s): the file was edited by hand; run `wasmcp lock --update`", at, it.Kind, it.Name, it.Digest, d)
			}
		}
	}
	return nil
}

// Encode returns the lock file's content.
func (l *Lock) Encode() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# wasmcp.lock: written by `wasmcp lock`; serve loads exactly these digests\n" +
		"# and, under [server] pin, serves only these definitions. See docs/governance.md.\n")
	if err := toml.NewEncoder(&buf).Encode(l); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Entry returns the entry of plugin name, or nil (also on a nil Lock).
func (l *Lock) Entry(name string) *LockEntry {
	if l == nil {
		return nil
	}
	for i := range l.Plugins {
		if l.Plugins[i].Name == name {
			return &l.Plugins[i]
		}
	}
	return nil
}

// ErrGrantsWidened is wrapped by [Lock.Check] when a plugin's grants
// allow more than they did when it was locked.
var ErrGrantsWidened = errors.New("grants widened since " + LockFile)

// Check returns an error wrapping [ErrGrantsWidened], listing every
// difference, when p's grants allow more than its lock entry's; nil when
// p is not locked or its grants are the same or narrower.
func (l *Lock) Check(p *Plugin) error {
	e := l.Entry(p.Name)
	if e == nil || e.URL != p.URL {
		return nil
	}
	if diff := WidenedGrants(&e.Grants, &p.Grants); len(diff) > 0 {
		return fmt.Errorf("%w: %s (review them, then run `wasmcp lock` to accept)", ErrGrantsWidened, strings.Join(diff, "; "))
	}
	return nil
}

// WidenedGrants lists what now allows that was did not, one item per
// grant ("+ http https://api.example/", "+ fs /data rw", ...).
func WidenedGrants(was, now *Grants) []string {
	var d []string
	for _, h := range now.HTTP {
		covered := false
		for _, w := range was.HTTP {
			covered = covered || strings.HasPrefix(h, w)
		}
		if !covered {
			d = append(d, "+ http "+h)
		}
	}
	flag := func(name string, w, n bool) {
		if n && !w {
			d = append(d, "+ "+name)
		}
	}
	flag("kv", was.KV, now.KV)
	flag("elicitation", was.Elicitation, now.Elicitation)
	flag("sampling", was.Sampling, now.Sampling)
	flag("roots", was.Roots, now.Roots)
	for _, k := range sortedKeys(now.Env) {
		if v, ok := was.Env[k]; !ok {
			d = append(d, "+ env "+k)
		} else if v != now.Env[k] {
			d = append(d, "~ env "+k+" (value changed)")
		}
	}
	for _, k := range sortedKeys(now.Config) {
		if _, ok := was.Config[k]; !ok {
			d = append(d, "+ config "+k)
		}
	}
	for _, m := range now.FS {
		i := slices.IndexFunc(was.FS, func(o Mount) bool { return o.Host == m.Host && o.Guest == m.Guest })
		switch {
		case i < 0:
			d = append(d, fmt.Sprintf("+ fs %s -> %s (%s)", m.Host, m.Guest, m.Mode))
		case was.FS[i].ReadOnly() && !m.ReadOnly():
			d = append(d, fmt.Sprintf("~ fs %s -> %s ro -> rw", m.Host, m.Guest))
		}
	}
	sort.Strings(d)
	return d
}
