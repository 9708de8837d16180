package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/abi"
)

// Manifest is a plugin's answer to wasmcp/describe (ABI §3). Items are kept
// as the plugin wrote them, so keys wasmcp does not know reach the client.
type Manifest struct {
	ABI               int               `json:"abi"`
	Name              string            `json:"name"`
	Version           string            `json:"version,omitempty"`
	Description       string            `json:"description,omitempty"`
	Tools             []json.RawMessage `json:"tools,omitempty"`
	Resources         []json.RawMessage `json:"resources,omitempty"`
	ResourceTemplates []json.RawMessage `json:"resourceTemplates,omitempty"`
	Prompts           []json.RawMessage `json:"prompts,omitempty"`
	Completions       bool              `json:"completions,omitempty"`
	Capabilities      Requested         `json:"capabilities"`
	// Skills are Agent Skills embedded in the plugin (sdk/ABI.md): each
	// one's files by path inside the skill, SKILL.md among them. They are
	// data the host serves through the Skills extension, never code.
	Skills []ManifestSkill `json:"skills,omitempty"`
}

// ManifestSkill is one skill of a Manifest: its files, path -> UTF-8
// content.
type ManifestSkill struct {
	Files map[string]string `json:"files"`
}

// Requested is what a plugin asks for in its manifest. Only the operator's
// grants decide what it gets; wasmcp inspect shows both side by side.
type Requested struct {
	HTTP        []string `json:"http,omitempty"`
	KV          bool     `json:"kv,omitempty"`
	Config      []string `json:"config,omitempty"`
	Env         []string `json:"env,omitempty"`
	FS          []string `json:"fs,omitempty"`
	Elicitation bool     `json:"elicitation,omitempty"`
	Sampling    bool     `json:"sampling,omitempty"`
	Roots       bool     `json:"roots,omitempty"`
}

// ManifestLimits bound what one plugin's manifest may declare, so that a
// describe listing hundreds of thousands of items costs the host nothing
// past the limit (each item costs memory: its JSON, a compiled schema, an
// index entry). Zero fields take the defaults.
type ManifestLimits struct {
	// MaxItems bounds the tools, resources, resource templates and
	// prompts of one manifest, together (default DefaultMaxManifestItems).
	MaxItems int
	// MaxBytes bounds the size of one manifest (default
	// DefaultMaxManifestBytes).
	MaxBytes int
}

// The defaults of ManifestLimits.
const (
	DefaultMaxManifestItems = 1000
	DefaultMaxManifestBytes = 1 << 20
)

func (l ManifestLimits) withDefaults() ManifestLimits {
	if l.MaxItems <= 0 {
		l.MaxItems = DefaultMaxManifestItems
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxManifestBytes
	}
	return l
}

// ErrManifestLimit is a manifest over one of its ManifestLimits.
var ErrManifestLimit = errors.New("manifest over its limit")

// ErrManifestEncoding is a manifest that is not valid UTF-8: JSON allows
// no other encoding, and an item holding such bytes cannot be listed to a
// client (its list would not be valid JSON).
var ErrManifestEncoding = errors.New("manifest is not valid UTF-8")

// ParseManifest decodes and checks a describe answer within limits (a
// manifest over one is refused before its items are looked at, with an
// error wrapping ErrManifestLimit that names the limit). Every other
// problem found is reported, joined into one error.
func ParseManifest(data []byte, limits ManifestLimits) (*Manifest, error) {
	limits = limits.withDefaults()
	if len(data) > limits.MaxBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d byte limit ([limits] max_manifest_bytes)", ErrManifestLimit, len(data), limits.MaxBytes)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("manifest is not valid JSON: %w", err)
	}
	if n := len(m.Tools) + len(m.Resources) + len(m.ResourceTemplates) + len(m.Prompts); n > limits.MaxItems {
		return nil, fmt.Errorf("%w: %d items (%d tools, %d resources, %d resource templates, %d prompts), over the limit of %d ([limits] max_manifest_items)",
			ErrManifestLimit, n, len(m.Tools), len(m.Resources), len(m.ResourceTemplates), len(m.Prompts), limits.MaxItems)
	}
	if !utf8.Valid(data) {
		return nil, encodingError(data, &m)
	}
	var errs []error
	if m.ABI != abi.Version {
		errs = append(errs, fmt.Errorf("manifest declares abi %d; this host speaks abi %d", m.ABI, abi.Version))
	}
	if m.Name != "" {
		if err := checkName("plugin", m.Name); err != nil {
			errs = append(errs, err)
		}
	}
	errs = checkNamed(errs, "tools", "tool", m.Tools, checkTaskSupport)
	errs = checkNamed(errs, "prompts", "prompt", m.Prompts, nil)
	seen := map[string]bool{}
	for i, raw := range m.Resources {
		uri, err := itemString(raw, "uri")
		if err == nil {
			_, err = itemString(raw, "name")
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("resources[%d]: %w", i, err))
			continue
		}
		if seen[uri] {
			errs = append(errs, fmt.Errorf("resources[%d]: duplicate resource uri %q", i, uri))
		}
		seen[uri] = true
	}
	for i, raw := range m.ResourceTemplates {
		tmpl, err := itemString(raw, "uriTemplate")
		if err == nil {
			_, err = itemString(raw, "name")
		}
		if err == nil {
			_, err = ParseURITemplate(tmpl)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("resourceTemplates[%d]: %w", i, err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &m, nil
}

// encodingError names where data, the manifest m was decoded from, first
// holds invalid UTF-8: the item, by its field, index and name (or uri),
// else the byte of the manifest.
func encodingError(data []byte, m *Manifest) error {
	for _, f := range []struct {
		field string
		items []json.RawMessage
	}{{"tools", m.Tools}, {"resources", m.Resources}, {"resourceTemplates", m.ResourceTemplates}, {"prompts", m.Prompts}} {
		for i, raw := range f.items {
			if utf8.Valid(raw) {
				continue
			}
			name, err := itemString(raw, "name")
			if err != nil {
				name, _ = itemString(raw, "uri")
			}
			return fmt.Errorf("%w: %s[%d] %q, at byte %d of the item", ErrManifestEncoding, f.field, i, name, invalidAt(raw))
		}
	}
	for i, sk := range m.Skills {
		for path, content := range sk.Files {
			if strings.ContainsRune(path+content, utf8.RuneError) {
				return fmt.Errorf("%w: skills[%d], file %q", ErrManifestEncoding, i, path)
			}
		}
	}
	return fmt.Errorf("%w: at byte %d", ErrManifestEncoding, invalidAt(data))
}

// invalidAt returns the offset of the first invalid UTF-8 sequence of b.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// checkNamed appends to errs what is wrong with items, the manifest's
// field of kind: each needs a valid name, unique among them, and passes
// check (when not nil) once its name is read.
func checkNamed(errs []error, field, kind string, items []json.RawMessage, check func(json.RawMessage) error) []error {
	seen := map[string]bool{}
	for i, raw := range items {
		name, err := itemString(raw, "name")
		if err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
			continue
		}
		if err := checkName(kind, name); err != nil {
			errs = append(errs, fmt.Errorf("%s[%d]: %w", field, i, err))
		}
		if seen[name] {
			errs = append(errs, fmt.Errorf("%s[%d]: duplicate %s name %q", field, i, kind, name))
		}
		seen[name] = true
		if check != nil {
			if err := check(raw); err != nil {
				errs = append(errs, fmt.Errorf("%s[%d] (%q): %w", field, i, name, err))
			}
		}
	}
	return errs
}

// checkTaskSupport checks a tool's optional execution.taskSupport (MCP
// 2025-11-25): "forbidden" (the default), "optional" or "required". The
// engine runs a tool that may be a task in the background when the
// client asks for one (docs/tasks.md).
func checkTaskSupport(raw json.RawMessage) error {
	var t struct {
		Execution *struct {
			TaskSupport *string `json:"taskSupport"`
		} `json:"execution"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return fmt.Errorf("execution must be an object with a string taskSupport")
	}
	if t.Execution == nil || t.Execution.TaskSupport == nil {
		return nil
	}
	switch *t.Execution.TaskSupport {
	case "forbidden", "optional", "required":
		return nil
	}
	return fmt.Errorf("execution.taskSupport %q: want forbidden, optional or required", *t.Execution.TaskSupport)
}

// itemString returns the non-empty string member key of a JSON object.
func itemString(raw json.RawMessage, key string) (string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf("not a JSON object")
	}
	v, ok := obj[key]
	if !ok {
		return "", fmt.Errorf("missing %q", key)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%q is not a string", key)
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("%q is empty", key)
	}
	return s, nil
}
