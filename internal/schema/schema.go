package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Default limits; see [Options].
const (
	DefaultMaxSchemaBytes = 512 << 10
	DefaultMaxDepth       = 64
	DefaultMaxNodes       = 20000
	DefaultMaxProblems    = 10
	DefaultMaxCost        = 10_000_000
	minLevelCost          = 1000
)

// Options configures [Compile]. The zero value (or a nil *Options) uses
// the defaults documented on each field.
type Options struct {
	// Root names the validated value in error messages, e.g. "arguments"
	// gives "arguments.city: ...". Default "value".
	Root string
	// MaxSchemaBytes refuses larger schemas. Default DefaultMaxSchemaBytes.
	MaxSchemaBytes int
	// MaxDepth refuses schemas, and instances at validation time, nested
	// deeper than this many objects and arrays. Default DefaultMaxDepth.
	MaxDepth int
	// MaxNodes refuses schemas with more JSON values than this (a bound on
	// compile time and, with MaxDepth, on validation cost). Default
	// DefaultMaxNodes.
	MaxNodes int
	// MaxProblems is the most problems a validation error lists; further
	// ones are counted. Default DefaultMaxProblems.
	MaxProblems int
	// MaxCost bounds the estimated number of subschema evaluations one
	// validation may take; larger instances are refused without being
	// validated. Default DefaultMaxCost. Independently, instances are
	// refused at nesting depths where a single value would cost more
	// evaluations than the schema has subschemas (or 1000, if larger):
	// that only happens with schemas whose cost grows exponentially with
	// depth.
	MaxCost int
}

func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.Root == "" {
		r.Root = "value"
	}
	if r.MaxSchemaBytes <= 0 {
		r.MaxSchemaBytes = DefaultMaxSchemaBytes
	}
	if r.MaxDepth <= 0 {
		r.MaxDepth = DefaultMaxDepth
	}
	if r.MaxNodes <= 0 {
		r.MaxNodes = DefaultMaxNodes
	}
	if r.MaxProblems <= 0 {
		r.MaxProblems = DefaultMaxProblems
	}
	if r.MaxCost <= 0 {
		r.MaxCost = DefaultMaxCost
	}
	return r
}

// Schema is a compiled JSON Schema. It is safe for concurrent use.
type Schema struct {
	s    *jsonschema.Schema
	opts Options
	// costs[k] is the estimated evaluations for one value at depth k;
	// maxDepth is the deepest instance nesting accepted.
	costs    []float64
	maxDepth int
	// anyObject: the schema accepts exactly the JSON objects.
	anyObject bool
	// plan, if not nil, lets Validate accept valid instances without
	// decoding them (see fast.go).
	plan *plan
}

// base and location are where the schema is registered: relative
// references resolve against them (and are refused by the loader). They
// are removed from messages.
const (
	base     = "mem://wasmcp/"
	location = base + "schema.json"
)

// errExternal is what the loader answers for every URL: nothing outside
// the schema document is ever fetched.
var errExternal = errors.New("external references are not allowed")

type refuseLoader struct{}

func (refuseLoader) Load(string) (any, error) { return nil, errExternal }

// Compile compiles a schema given as JSON text. It fails on invalid JSON,
// on a schema that is not valid against its draft's meta-schema, on a
// reference to another document, and on a schema over the size limits.
func Compile(raw []byte, opts *Options) (*Schema, error) {
	o := opts.withDefaults()
	if len(raw) > o.MaxSchemaBytes {
		return nil, fmt.Errorf("schema: %d bytes is over the limit of %d", len(raw), o.MaxSchemaBytes)
	}
	doc, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("schema: invalid JSON: %w", err)
	}
	depth, nodes := measure(doc)
	if depth > o.MaxDepth {
		return nil, fmt.Errorf("schema: nested %d levels deep, over the limit of %d", depth, o.MaxDepth)
	} else if nodes > o.MaxNodes {
		return nil, fmt.Errorf("schema: %d values, over the limit of %d", nodes, o.MaxNodes)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(location, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	s, err := c.Compile(location)
	if err != nil {
		return nil, compileError(err, doc)
	}
	levelCap := float64(max(minLevelCost, nodes))
	costs := levelCosts(doc, o.MaxDepth, levelCap)
	maxDepth := o.MaxDepth
	for k, c := range costs {
		if c > levelCap {
			maxDepth = k - 1
			break
		}
	}
	if maxDepth < 0 {
		return nil, fmt.Errorf("schema: too expensive to evaluate: its references and applicators multiply to more than %.0f evaluations per value", levelCap)
	}
	sch := &Schema{s: s, opts: o, costs: costs, maxDepth: maxDepth, anyObject: acceptsAnyObject(doc)}
	if !sch.anyObject {
		if p, ok := buildPlan(doc, s, true); ok {
			sch.plan = p
		}
	}
	return sch, nil
}

// acceptsAnyObject reports whether schema doc accepts every JSON object and
// nothing else ({"type":"object"} with only annotations besides), the
// inputSchema of every tool without arguments: such instances need no
// validator run.
func acceptsAnyObject(doc any) bool {
	m, ok := doc.(map[string]any)
	if !ok || m["type"] != "object" {
		return false
	}
	for k, v := range m {
		switch k {
		case "type", "$schema", "$id", "$comment", "title", "description", "examples", "default", "deprecated", "readOnly", "writeOnly":
		case "additionalProperties", "unevaluatedProperties":
			if v != true {
				return false
			}
		case "properties", "patternProperties", "$defs", "definitions":
			if p, ok := v.(map[string]any); !ok || (len(p) > 0 && k != "$defs" && k != "definitions") {
				return false
			}
		case "required":
			if r, ok := v.([]any); !ok || len(r) > 0 {
				return false
			}
		default:
			if !strings.HasPrefix(k, "x-") {
				return false
			}
		}
	}
	return true
}

// compileError turns the library's compile errors into one short message.
func compileError(err error, doc any) error {
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		if obj, ok := doc.(map[string]any); ok {
			if meta, ok := obj["$schema"].(string); ok && strings.TrimSuffix(meta, "#") == strings.TrimSuffix(le.URL, "#") {
				return fmt.Errorf("schema: unsupported $schema %q (use draft 2020-12, the default, or draft-07)", meta)
			}
		}
		if errors.Is(le.Err, errExternal) {
			return fmt.Errorf("schema: reference to %q: %w (only references inside the schema, like \"#/$defs/x\", resolve)", strings.TrimPrefix(le.URL, base), errExternal)
		}
		return fmt.Errorf("schema: cannot load %q: %w", le.URL, le.Err)
	}
	var se *jsonschema.SchemaValidationError
	if errors.As(err, &se) {
		var ve *jsonschema.ValidationError
		if errors.As(se.Err, &ve) {
			probs, _ := problems(ve, nil, "schema", 5)
			return fmt.Errorf("schema: not a valid JSON Schema: %s", joinProblems(probs))
		}
	}
	msg := strings.ReplaceAll(strings.ReplaceAll(err.Error(), location, "schema"), base, "")
	return fmt.Errorf("schema: %s", strings.Join(strings.Fields(msg), " "))
}

// Validate checks an instance given as JSON text. It returns nil, a
// *[ValidationError], or an error saying the instance is not JSON or is
// nested too deeply.
func (s *Schema) Validate(instance []byte) error {
	if s.anyObject {
		if !json.Valid(instance) {
			return fmt.Errorf("%s: invalid JSON", s.opts.Root)
		}
		if t := bytes.TrimLeft(instance, " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return &ValidationError{Problems: []Problem{{Path: s.opts.Root, Message: "must be an object"}}}
		}
		return nil
	}
	if s.plan != nil && s.fastValid(instance) {
		return nil
	}
	v, err := decode(instance)
	if err != nil {
		return fmt.Errorf("%s: invalid JSON: %w", s.opts.Root, err)
	}
	return s.ValidateValue(v)
}

// ValidateValue checks an already decoded instance: nil, bool, string,
// float64 or json.Number, []any and map[string]any, as encoding/json
// produces them.
func (s *Schema) ValidateValue(v any) error {
	if depth, _ := measure(v); depth > s.maxDepth {
		if s.maxDepth < s.opts.MaxDepth {
			return fmt.Errorf("%s: nested %d levels deep; this schema's cost grows too fast with depth to validate more than %d levels", s.opts.Root, depth, s.maxDepth)
		}
		return fmt.Errorf("%s: nested %d levels deep, over the limit of %d", s.opts.Root, depth, s.opts.MaxDepth)
	}
	if cost := instanceCost(v, s.costs, 0); cost > float64(s.opts.MaxCost) {
		return fmt.Errorf("%s: too large to validate against this schema (about %.0f subschema evaluations, limit %d)", s.opts.Root, cost, s.opts.MaxCost)
	}
	err := s.s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return fmt.Errorf("%s: %w", s.opts.Root, err)
	}
	probs, omitted := problems(ve, v, s.opts.Root, s.opts.MaxProblems)
	return &ValidationError{Problems: probs, Omitted: omitted}
}

// decode parses JSON text keeping numbers exact, refusing trailing data.
func decode(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := d.Token(); err == nil {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

// measure returns the nesting depth (objects and arrays) and the number of
// values of v.
func measure(v any) (depth, nodes int) {
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			d, n := measure(e)
			depth, nodes = max(depth, d), nodes+n
		}
	case []any:
		for _, e := range t {
			d, n := measure(e)
			depth, nodes = max(depth, d), nodes+n
		}
	default:
		return 0, 1
	}
	return depth + 1, nodes + 1
}
