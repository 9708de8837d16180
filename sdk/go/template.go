package wasmcp

import (
	"fmt"
	"net/url"
	"strings"
)

// uriTemplate matches URIs against an RFC 6570 template of level 1
// ("{var}") plus reserved expansion ("{+var}"). It avoids package regexp,
// which would add about half a megabyte to every plugin.
type uriTemplate struct {
	raw   string
	parts []tmplPart
	vars  []string
}

// tmplPart is a literal, or a variable when name is set.
type tmplPart struct {
	literal  string
	name     string
	reserved bool // {+name}: may contain "/", "?" and "#"
}

func validVarName(s string) bool { return wordBytes(s, '.') }

func parseTemplate(s string) (*uriTemplate, error) {
	t := &uriTemplate{raw: s}
	rest := s
	for rest != "" {
		open := strings.IndexByte(rest, '{')
		lit := rest
		if open >= 0 {
			lit = rest[:open]
		}
		if strings.Contains(lit, "}") {
			return nil, fmt.Errorf("unmatched \"}\" in %q", s)
		}
		if lit != "" {
			t.parts = append(t.parts, tmplPart{literal: lit})
		}
		if open < 0 {
			break
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("unterminated \"{\" in %q", s)
		}
		expr := rest[open+1 : open+end]
		rest = rest[open+end+1:]
		part := tmplPart{name: expr}
		if strings.HasPrefix(expr, "+") {
			part = tmplPart{name: expr[1:], reserved: true}
		}
		if !validVarName(part.name) {
			return nil, fmt.Errorf("expression {%s} in %q: only {name} and {+name} are supported", expr, s)
		}
		if n := len(t.parts); n > 0 && t.parts[n-1].name != "" {
			return nil, fmt.Errorf("adjacent variables in %q: separate them with a literal", s)
		}
		for _, v := range t.vars {
			if v == part.name {
				return nil, fmt.Errorf("variable %q appears twice in %q", part.name, s)
			}
		}
		t.vars = append(t.vars, part.name)
		t.parts = append(t.parts, part)
	}
	return t, nil
}

// maxTemplateURI bounds the URIs matched against templates.
const maxTemplateURI = 64 << 10

func isSep(c byte) bool { return c == '/' || c == '?' || c == '#' }

// match returns the variables of uri, or false if it does not match.
// Earlier variables take the shortest values that let the rest match. It
// runs in O(parts × len(uri)): can[i][p] records whether parts[i:] match
// uri[p:], computed from the end, and the values are then read forwards.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	if len(uri) > maxTemplateURI {
		return nil, false
	}
	n := len(uri)
	can := make([][]bool, len(t.parts)+1)
	for i := range can {
		can[i] = make([]bool, n+1)
	}
	can[len(t.parts)][n] = true
	for i := len(t.parts) - 1; i >= 0; i-- {
		p, next, cur := t.parts[i], can[i+1], can[i]
		if p.name == "" {
			for pos := 0; pos+len(p.literal) <= n; pos++ {
				cur[pos] = next[pos+len(p.literal)] && uri[pos:pos+len(p.literal)] == p.literal
			}
			continue
		}
		// cur[pos]: some end q in (pos, n] has next[q], with no separator
		// in uri[pos:q] unless the variable is reserved.
		has := false
		for pos := n - 1; pos >= 0; pos-- {
			if !p.reserved && isSep(uri[pos]) {
				has = false
				continue
			}
			has = has || next[pos+1]
			cur[pos] = has
		}
	}
	if !can[0][0] {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	pos := 0
	for i, p := range t.parts {
		if p.name == "" {
			pos += len(p.literal)
			continue
		}
		end := pos + 1
		for !can[i+1][end] {
			end++
		}
		v := uri[pos:end]
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		vars[p.name] = v
		pos = end
	}
	return vars, true
}
