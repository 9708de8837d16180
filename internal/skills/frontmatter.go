package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxFrontmatter bounds the front matter block of a SKILL.md.
const maxFrontmatter = 64 << 10

// parseSkillMD reads the YAML front matter of a SKILL.md and returns it
// as a JSON object, with its name and description checked.
//
// The YAML read is the subset that skill front matter uses: "key: value"
// lines whose value is a plain, single- or double-quoted scalar, one
// level of nested mapping ("metadata:" then indented "key: value"
// lines), flow sequences of scalars ("[a, b]"), "#" comments and blank
// lines. Anything else (block sequences, anchors, multi-line scalars) is
// refused with an error naming the line, never guessed at. Plain scalars
// true/false/null and numbers become JSON booleans, null and numbers, as
// YAML has them.
func parseSkillMD(md []byte) (fm json.RawMessage, name, desc string, err error) {
	if !utf8.Valid(md) {
		return nil, "", "", errors.New("not UTF-8")
	}
	md = bytes.TrimPrefix(md, []byte("\ufeff"))
	text := strings.ReplaceAll(string(md), "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, "", "", errors.New("no front matter (the file must begin with a --- line)")
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	if end < 0 || (len(rest) > end+4 && rest[end+4] != '\n' && rest[end+4] != '\r') {
		if !strings.HasPrefix(rest, "---") {
			return nil, "", "", errors.New("front matter has no closing --- line")
		}
		end = -1
	}
	block := ""
	if end >= 0 {
		block = rest[:end]
	}
	if len(block) > maxFrontmatter {
		return nil, "", "", fmt.Errorf("front matter over %d bytes", maxFrontmatter)
	}
	obj, err := parseYAMLMap(block)
	if err != nil {
		return nil, "", "", err
	}
	name, _ = obj.get("name").(string)
	desc, _ = obj.get("description").(string)
	if err := checkName(name); err != nil {
		return nil, "", "", fmt.Errorf("front matter: %w", err)
	}
	if strings.TrimSpace(desc) == "" || len(desc) > maxDescLen {
		return nil, "", "", fmt.Errorf("front matter: description must be 1 to %d characters", maxDescLen)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, "", "", err
	}
	return b, name, desc, nil
}

// ordered is a JSON object that keeps the author's key order.
type ordered struct {
	keys []string
	vals map[string]any
}

func (o *ordered) get(k string) any { return o.vals[k] }

func (o *ordered) set(k string, v any) error {
	if _, dup := o.vals[k]; dup {
		return fmt.Errorf("key %q appears twice", k)
	}
	o.keys = append(o.keys, k)
	o.vals[k] = v
	return nil
}

// MarshalJSON writes the members in the author's order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := json.Marshal(o.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func newOrdered() *ordered { return &ordered{vals: map[string]any{}} }

// parseYAMLMap parses the front matter subset described at parseSkillMD.
func parseYAMLMap(block string) (*ordered, error) {
	top := newOrdered()
	var nested *ordered // the open nested mapping, if any
	nestedIndent := 0
	for i, line := range strings.Split(block, "\n") {
		n := i + 2 // line number in SKILL.md (after the first ---)
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		if strings.ContainsRune(line, '\t') {
			return nil, fmt.Errorf("front matter line %d: tab characters are not allowed in YAML indentation", n)
		}
		indent := len(line) - len(strings.TrimLeft(line, " "))
		key, val, ok := splitKey(trimmed)
		if !ok {
			return nil, fmt.Errorf("front matter line %d: not a \"key: value\" line (only that YAML subset is read)", n)
		}
		target := top
		switch {
		case indent == 0:
			nested = nil
		case nested != nil && (nestedIndent == 0 || indent == nestedIndent):
			nestedIndent = indent
			target = nested
		default:
			return nil, fmt.Errorf("front matter line %d: unexpected indentation", n)
		}
		if val == "" && target == top {
			m := newOrdered()
			if err := top.set(key, m); err != nil {
				return nil, fmt.Errorf("front matter line %d: %w", n, err)
			}
			nested, nestedIndent = m, 0
			continue
		}
		v, err := scalarOrFlow(val)
		if err != nil {
			return nil, fmt.Errorf("front matter line %d: %w", n, err)
		}
		if err := target.set(key, v); err != nil {
			return nil, fmt.Errorf("front matter line %d: %w", n, err)
		}
	}
	return top, nil
}

// splitKey splits "key: value" (the key plain or quoted).
func splitKey(s string) (key, val string, ok bool) {
	if s[0] == '"' || s[0] == '\'' {
		end := strings.IndexByte(s[1:], s[0])
		if end < 0 {
			return "", "", false
		}
		key, s = s[1:end+1], s[end+2:]
		if !strings.HasPrefix(s, ":") {
			return "", "", false
		}
		return key, strings.TrimSpace(s[1:]), key != ""
	}
	i := strings.Index(s, ":")
	if i <= 0 || (i+1 < len(s) && s[i+1] != ' ') {
		return "", "", false
	}
	key = strings.TrimSpace(s[:i])
	if strings.ContainsAny(key, "{}[]&*!|>%@`-") && !validPlainKey(key) {
		return "", "", false
	}
	return key, strings.TrimSpace(s[i+1:]), true
}

func validPlainKey(k string) bool {
	if k == "" || k[0] == '-' {
		return false
	}
	return !strings.ContainsAny(k, "{}[]&*!|>%@`#")
}

// scalarOrFlow reads a scalar or a flow sequence of scalars.
func scalarOrFlow(v string) (any, error) {
	if strings.HasPrefix(v, "[") {
		if !strings.HasSuffix(v, "]") {
			return nil, errors.New("unterminated flow sequence")
		}
		inner := strings.TrimSpace(v[1 : len(v)-1])
		out := []any{}
		if inner == "" {
			return out, nil
		}
		for _, part := range splitFlow(inner) {
			x, err := scalar(strings.TrimSpace(part))
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	}
	return scalar(v)
}

// splitFlow splits a flow sequence's inside on commas outside quotes.
func splitFlow(s string) []string {
	var parts []string
	var q byte
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q == 0 && c == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// scalar reads one YAML scalar of the subset.
func scalar(v string) (any, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '"':
		var s string
		if len(v) < 2 || v[len(v)-1] != '"' || json.Unmarshal([]byte(v), &s) != nil {
			return nil, errors.New("malformed double-quoted string")
		}
		return s, nil
	case v[0] == '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return nil, errors.New("malformed single-quoted string")
		}
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'"), nil
	case strings.ContainsAny(v[:1], "{&*!|>%@`[]"):
		return nil, fmt.Errorf("unsupported YAML value %q (only scalars and flow sequences are read)", v)
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	switch v {
	case "true", "True", "TRUE":
		return true, nil
	case "false", "False", "FALSE":
		return false, nil
	case "null", "Null", "NULL", "~":
		return nil, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXpP_") && !strings.EqualFold(v, "inf") && !strings.EqualFold(v, "nan") && !strings.EqualFold(v, "infinity") {
		return f, nil
	}
	return v, nil
}
