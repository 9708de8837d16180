package config

import (
	"bytes"
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
// it resolved to, the wasm's SHA-256 and the grants it was locked with.
// serve loads exactly the locked digests and refuses a plugin whose
// grants widened since.
type Lock struct {
	Version int         `toml:"version"`
	Plugins []LockEntry `toml:"plugins"`
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
	return &l, nil
}

// Encode returns the lock file's content.
func (l *Lock) Encode() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString("# wasmcp.lock: written by `wasmcp lock`; serve loads exactly these digests.\n")
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
