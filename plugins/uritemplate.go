package plugins

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// URITemplate matches URIs against an RFC 6570 template, so that a
// resources/read of a concrete URI reaches the plugin that serves the
// template. Supported expressions: {var} and {a,b} (simple), {+var}
// (reserved), {#var} (fragment), {/var} (path segments), {.var} (labels),
// {?a,b} and {&a,b} (query). Values are extracted, not validated: the
// plugin gets the concrete URI.
type URITemplate struct {
	raw    string
	prefix string // the literal text before the first expression
	re     *regexp.Regexp
	names  []string
}

// MaxTemplateVars bounds the variables of one URI template. Matching a
// URI costs time in proportion to the URI's length times the template's
// size (Go's regexp is linear in the input, with a factor of its
// program), so both are bounded: a template by this and its 2048 bytes
// at load, a URI by the engine's max_uri (8 KiB) at request.
const MaxTemplateVars = 16

// MaxPluginTemplateVars bounds the variables of all of one plugin's
// templates together: a URI that no template matches is tried against
// every one whose literal prefix it has, so this bounds what one
// resources/read costs per plugin (the worst 16-variable template costs
// tens of milliseconds against an 8 KiB URI).
const MaxPluginTemplateVars = 64

// ParseURITemplate compiles a template.
func ParseURITemplate(s string) (*URITemplate, error) {
	if len(s) > 2048 {
		return nil, fmt.Errorf("uri template is over 2048 bytes")
	}
	if n := strings.Count(s, "{"); n > MaxTemplateVars {
		return nil, fmt.Errorf("uri template %q: %d expressions, at most %d", short(s), n, MaxTemplateVars)
	}
	var b strings.Builder
	var names []string
	b.WriteString("^")
	rest := s
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.IndexByte(rest, '}') >= 0 {
				return nil, fmt.Errorf("uri template %q: unmatched '}'", s)
			}
			b.WriteString(regexp.QuoteMeta(rest))
			break
		}
		lit := rest[:open]
		if strings.IndexByte(lit, '}') >= 0 {
			return nil, fmt.Errorf("uri template %q: unmatched '}'", s)
		}
		b.WriteString(regexp.QuoteMeta(lit))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("uri template %q: unclosed '{'", s)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		if expr == "" {
			return nil, fmt.Errorf("uri template %q: empty expression", s)
		}
		op := byte(0)
		if strings.IndexByte("+#./;?&", expr[0]) >= 0 {
			op, expr = expr[0], expr[1:]
		}
		vars := strings.Split(expr, ",")
		for i, v := range vars {
			v = strings.TrimSuffix(v, "*")
			if k := strings.IndexByte(v, ':'); k >= 0 {
				v = v[:k]
			}
			if v == "" || !validVarName(v) {
				return nil, fmt.Errorf("uri template %q: bad variable name %q", s, vars[i])
			}
			vars[i] = v
		}
		switch op {
		case '?', '&':
			// Query parameters: optional, any order is not supported;
			// match the whole query loosely and extract later.
			b.WriteString(`(?:[?&][^#]*)?`)
			names = append(names, "")
		default:
			for i, v := range vars {
				var prefix, class string
				switch op {
				case 0:
					class = `[^/?#&,]*`
				case '+':
					class = `[^?#]*`
				case '#':
					prefix, class = "#", `.*`
				case '.':
					prefix, class = `\.`, `[^/?#.]*`
				case '/':
					prefix, class = "/", `[^/?#]*`
				case ';':
					prefix, class = ";"+regexp.QuoteMeta(v)+"=?", `[^;/?#]*`
				}
				if i > 0 && (op == 0 || op == '+' || op == '#') {
					prefix = ","
				}
				if i > 0 && op == '#' {
					prefix = ","
				}
				fmt.Fprintf(&b, "(?:%s(%s))", prefix, class)
				if op == '#' || op == '.' || op == '/' || op == ';' {
					b.WriteString("?")
				}
				names = append(names, v)
			}
		}
	}
	if len(names) > MaxTemplateVars {
		return nil, fmt.Errorf("uri template %q: %d variables, at most %d", short(s), len(names), MaxTemplateVars)
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("uri template %q: %w", s, err)
	}
	prefix, _, _ := strings.Cut(s, "{")
	return &URITemplate{raw: s, prefix: prefix, re: re, names: names}, nil
}

func validVarName(v string) bool {
	for _, c := range v {
		if !(c == '_' || c == '.' || c == '%' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// String returns the template as written.
func (t *URITemplate) String() string { return t.raw }

// short returns s, cut for an error message.
func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// Matches reports whether uri is an expansion of the template: Match
// without the variables, several times cheaper (no submatches kept).
// A URI without the template's literal prefix is refused before the
// regular expression runs (which is anchored on that prefix).
func (t *URITemplate) Matches(uri string) bool {
	return strings.HasPrefix(uri, t.prefix) && t.re.MatchString(uri)
}

// Vars returns the number of the template's variables.
func (t *URITemplate) Vars() int { return len(t.names) }

// Match reports whether uri is an expansion of the template, and returns
// the extracted variables (percent-decoded where possible).
func (t *URITemplate) Match(uri string) (map[string]string, bool) {
	if !strings.HasPrefix(uri, t.prefix) {
		return nil, false
	}
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.names))
	for i, name := range t.names {
		if name == "" {
			continue
		}
		v := m[i+1]
		if d, err := url.PathUnescape(v); err == nil {
			v = d
		}
		vars[name] = v
	}
	return vars, true
}
