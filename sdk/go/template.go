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

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

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

// match returns the variables of uri, or false if it does not match.
// Variables take the shortest values that let the rest match.
func (t *uriTemplate) match(uri string) (map[string]string, bool) {
	values := make([]string, 0, len(t.vars))
	failed := map[[2]int]bool{} // (part, position) known not to match
	var try func(i, pos int) bool
	try = func(i, pos int) bool {
		if i == len(t.parts) {
			return pos == len(uri)
		}
		key := [2]int{i, pos}
		if failed[key] {
			return false
		}
		p := t.parts[i]
		if p.name == "" {
			if strings.HasPrefix(uri[pos:], p.literal) && try(i+1, pos+len(p.literal)) {
				return true
			}
			failed[key] = true
			return false
		}
		for end := pos + 1; end <= len(uri); end++ {
			if c := uri[end-1]; !p.reserved && (c == '/' || c == '?' || c == '#') {
				break
			}
			values = append(values, uri[pos:end])
			if try(i+1, end) {
				return true
			}
			values = values[:len(values)-1]
		}
		failed[key] = true
		return false
	}
	if !try(0, 0) {
		return nil, false
	}
	vars := make(map[string]string, len(t.vars))
	for i, name := range t.vars {
		v := values[i]
		if u, err := url.PathUnescape(v); err == nil {
			v = u
		}
		vars[name] = v
	}
	return vars, true
}
