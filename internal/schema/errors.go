package schema

import (
	"encoding/json"
	"fmt"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// ValidationError is returned by [Schema.Validate] when the instance does
// not conform. Its message lists the problems separated by "; ".
type ValidationError struct {
	// Problems are the failures found, in the order the validator met them.
	Problems []Problem
	// Omitted counts further problems left out of Problems (see
	// Options.MaxProblems).
	Omitted int
}

// Problem is one failure: which value, and what is wrong with it.
type Problem struct {
	// Path names the value from the root name: "arguments.city",
	// "arguments.items[2].name", or just "arguments".
	Path string
	// Message says what is wrong, e.g. "missing required property" or
	// "must be <= 16".
	Message string
}

// String formats p as "path: message".
func (p Problem) String() string { return p.Path + ": " + p.Message }

// Error returns every problem as "path: message", separated by "; ".
func (e *ValidationError) Error() string {
	s := joinProblems(e.Problems)
	if e.Omitted > 0 {
		s += fmt.Sprintf("; and %d more", e.Omitted)
	}
	return s
}

func joinProblems(ps []Problem) string {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

// maxMessage bounds one problem's message, in bytes.
const maxMessage = 300

// collector gathers problems from a jsonschema error tree.
type collector struct {
	instance any
	root     string
	max      int
	out      []Problem
	omitted  int
	seen     map[Problem]bool
	nested   bool // inside an anyOf/oneOf summary: do not summarise again
}

// problems flattens a validation error into at most max problems and
// the count of the ones left out. instance (may be nil) tells array
// indexes from property names in paths.
func problems(ve *jsonschema.ValidationError, instance any, root string, max int) ([]Problem, int) {
	c := &collector{instance: instance, root: root, max: max, seen: map[Problem]bool{}}
	c.walk(ve)
	// The validator reports a schema's properties in map order: sort, so
	// that the same instance always gets the same message.
	slices.SortStableFunc(c.out, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	if len(c.out) == 0 {
		c.add(nil, "does not match the schema")
	}
	return c.out, c.omitted
}

func (c *collector) add(loc []string, msg string, extra ...string) {
	if len(msg) > maxMessage {
		msg = msg[:maxMessage-3] + "..."
	}
	p := Problem{Path: c.path(loc, extra...), Message: msg}
	if c.seen[p] {
		return
	}
	c.seen[p] = true
	if len(c.out) >= c.max {
		c.omitted++
		return
	}
	c.out = append(c.out, p)
}

var identifier = regexp.MustCompile(`^[A-Za-z_$][A-Za-z0-9_$-]*$`)

// path renders an instance location (plus extra property names) from
// the root, using the instance to tell array indexes from keys.
func (c *collector) path(loc []string, extra ...string) string {
	var b strings.Builder
	b.WriteString(c.root)
	v := c.instance
	for _, tok := range append(append([]string(nil), loc...), extra...) {
		switch t := v.(type) {
		case []any:
			b.WriteString("[" + tok + "]")
			if i, err := strconv.Atoi(tok); err == nil && i >= 0 && i < len(t) {
				v = t[i]
			} else {
				v = nil
			}
			continue
		case map[string]any:
			v = t[tok]
		default:
			v = nil
		}
		if identifier.MatchString(tok) {
			b.WriteString("." + tok)
		} else {
			b.WriteString("[" + strconv.Quote(tok) + "]")
		}
	}
	return b.String()
}

func (c *collector) walk(e *jsonschema.ValidationError) {
	loc := e.InstanceLocation
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
		for _, cause := range e.Causes {
			c.walk(cause)
		}
		if len(e.Causes) == 0 {
			c.add(loc, "does not match the schema")
		}
	case *kind.AnyOf, *kind.OneOf:
		if o, ok := k.(*kind.OneOf); ok && o.Subschemas != nil {
			c.add(loc, fmt.Sprintf("matches %d of the alternatives (oneOf), must match exactly one", len(o.Subschemas)))
			return
		}
		// Summarise: one line for the value, with the first reason each
		// alternative gave.
		var reasons []string
		for _, cause := range e.Causes {
			if c.nested {
				break
			}
			sub := &collector{instance: c.instance, root: c.root, max: 1, seen: map[Problem]bool{}, nested: true}
			sub.walk(cause)
			if len(sub.out) > 0 && len(reasons) < 3 {
				r := sub.out[0]
				if r.Path == c.path(loc) {
					reasons = append(reasons, r.Message)
				} else {
					reasons = append(reasons, r.String())
				}
			}
		}
		msg := "does not match any of the allowed alternatives"
		if len(reasons) > 0 {
			msg += " (" + strings.Join(reasons, " | ") + ")"
		}
		c.add(loc, msg)
	case *kind.Required:
		for _, m := range k.Missing {
			c.add(loc, "missing required property", m)
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			c.add(loc, "unknown property, not allowed by the schema", p)
		}
	case *kind.Type:
		c.add(loc, fmt.Sprintf("must be %s, got %s", article(strings.Join(k.Want, " or ")), k.Got))
	case *kind.Minimum:
		c.add(loc, "must be >= "+rat(k.Want))
	case *kind.Maximum:
		c.add(loc, "must be <= "+rat(k.Want))
	case *kind.ExclusiveMinimum:
		c.add(loc, "must be > "+rat(k.Want))
	case *kind.ExclusiveMaximum:
		c.add(loc, "must be < "+rat(k.Want))
	case *kind.MultipleOf:
		c.add(loc, "must be a multiple of "+rat(k.Want))
	case *kind.MinLength:
		c.add(loc, fmt.Sprintf("must be at least %d characters long, got %d", k.Want, k.Got))
	case *kind.MaxLength:
		c.add(loc, fmt.Sprintf("must be at most %d characters long, got %d", k.Want, k.Got))
	case *kind.MinItems:
		c.add(loc, fmt.Sprintf("must have at least %d items, got %d", k.Want, k.Got))
	case *kind.MaxItems:
		c.add(loc, fmt.Sprintf("must have at most %d items, got %d", k.Want, k.Got))
	case *kind.MinProperties:
		c.add(loc, fmt.Sprintf("must have at least %d properties, got %d", k.Want, k.Got))
	case *kind.MaxProperties:
		c.add(loc, fmt.Sprintf("must have at most %d properties, got %d", k.Want, k.Got))
	case *kind.Pattern:
		c.add(loc, fmt.Sprintf("must match the pattern %s", strconv.Quote(k.Want)))
	case *kind.Format:
		c.add(loc, fmt.Sprintf("must be a valid %s", k.Want))
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			want[i] = jsonText(w)
		}
		if len(want) == 1 {
			c.add(loc, "must be "+want[0])
		} else {
			c.add(loc, "must be one of "+strings.Join(want, ", "))
		}
	case *kind.Const:
		c.add(loc, "must be "+jsonText(k.Want))
	case *kind.DependentRequired:
		c.missingWith(loc, k.Prop, k.Missing)
	case *kind.Dependency:
		c.missingWith(loc, k.Prop, k.Missing)
	case *kind.FalseSchema:
		c.add(loc, "is not allowed here")
	case *kind.Not:
		c.add(loc, "must not match the schema under \"not\"")
	default:
		msg := libraryMessage(e.ErrorKind)
		msg = strings.TrimPrefix(msg, "value ")
		c.add(loc, msg)
	}
}

// missingWith reports each property of missing that the presence of prop
// requires (dependentRequired, or the array form of dependencies).
func (c *collector) missingWith(loc []string, prop string, missing []string) {
	for _, m := range missing {
		c.add(loc, fmt.Sprintf("missing property, required when %q is present", prop), m)
	}
}

// libraryMessage is the library's English text for an error kind.
func libraryMessage(k jsonschema.ErrorKind) string {
	out := (&jsonschema.ValidationError{ErrorKind: k}).BasicOutput()
	if out.Error == nil {
		return "does not match the schema"
	}
	return out.Error.String()
}

// jsonText renders a schema value as JSON, shortened when long.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 80 {
		return string(b[:77]) + "..."
	}
	return string(b)
}

// rat formats an exact number the way it would be written in JSON.
func rat(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// article prefixes a JSON type name with "a" or "an".
func article(t string) string {
	if t == "" {
		return "a value"
	}
	switch t[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + t
	}
	return "a " + t
}
