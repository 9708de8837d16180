package wasmcp

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// uriTemplate matches URIs against an RFC 6570 template of level 1
// ("{var}") plus reserved expansion ("{+var}").
type uriTemplate struct {
	raw  string
	re   *regexp.Regexp
	vars []string
}

var varName = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

func parseTemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	var re strings.Builder
	re.WriteString("^")
	rest := s
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			if strings.Contains(rest, "}") {
				return nil, fmt.Errorf("unmatched \"}\" in %q", s)
			}
			re.WriteString(regexp.QuoteMeta(rest))
			break
		}
		lit := rest[:open]
		if strings.Contains(lit, "}") {
			return nil, fmt.Errorf("unmatched \"}\" in %q", s)
		}
		re.WriteString(regexp.QuoteMeta(lit))
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unterminated \"{\" in %q", s)
		}
		orig := rest[open+1 : open+end]
		expr := orig
		rest = rest[open+end+1:]
		pattern := `([^/?#]+?)`
		if strings.HasPrefix(expr, "+") {
			expr = expr[1:]
			pattern = `(.+?)`
		}
		if !varName.MatchString(expr) {
			return nil, fmt.Errorf("expression {%s} in %q: only {name} and {+name} are supported", orig, s)
		}
		for _, v := range t.vars {
			if v == expr {
				return nil, fmt.Errorf("variable %q appears twice in %q", expr, s)
			}
		}
		t.vars = append(t.vars, expr)
		re.WriteString(pattern)
	}
	re.WriteString("$")
	compiled, err := regexp.Compile(re.String())
	if err != nil {
		return nil, fmt.Errorf("template %q: %w", s, err)
	}
	t.re = compiled
	return t, nil
}

// match returns the variables of uri, or false if it does not match.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v := m[i+1]
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		vars[name] = v
	}
	return vars, true
}
