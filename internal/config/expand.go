package config

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// expand replaces ${NAME} and ${NAME:-default} in s with values from
// lookup. "$$" stands for a literal "$"; a "$" followed by anything else is
// kept as is. An unset NAME without a default is an error, as is an
// unterminated or malformed reference.
func expand(s string, lookup func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 >= len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		ref := s[i+2 : i+2+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		if !validEnvName(name) {
			return "", fmt.Errorf("invalid environment reference ${%s}: the name must match [A-Za-z_][A-Za-z0-9_]*", ref)
		}
		v, ok := lookup(name)
		switch {
		case hasDef && v == "":
			v = def
		case !ok:
			return "", fmt.Errorf("environment variable %s is not set (referenced as ${%s}; write ${%s:-default} to make it optional)", name, name, name)
		}
		b.WriteString(v)
		i += 2 + end + 1
	}
	return b.String(), nil
}

// validEnvName reports whether name is a portable environment variable
// name.
func validEnvName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expandStrings expands environment references in every string reachable
// from v (a pointer to a struct): fields, slice elements and map values,
// but not map keys. Each failure is reported with the TOML path of the
// value, e.g. plugins[0].grants.config.api_key.
func expandStrings(v any, lookup func(string) (string, bool)) []error {
	var errs []error
	var walk func(rv reflect.Value, path string)
	walk = func(rv reflect.Value, path string) {
		switch rv.Kind() {
		case reflect.Pointer:
			if !rv.IsNil() {
				walk(rv.Elem(), path)
			}
		case reflect.Struct:
			t := rv.Type()
			for i := 0; i < t.NumField(); i++ {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
				if !f.IsExported() || name == "-" {
					continue
				}
				if name == "" {
					name = f.Name
				}
				walk(rv.Field(i), joinPath(path, name))
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < rv.Len(); i++ {
				walk(rv.Index(i), path+"["+strconv.Itoa(i)+"]")
			}
		case reflect.Map:
			if rv.Type().Elem().Kind() != reflect.String {
				return
			}
			keys := rv.MapKeys()
			sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
			for _, k := range keys {
				s, err := expand(rv.MapIndex(k).String(), lookup)
				if err != nil {
					errs = append(errs, fmt.Errorf("%s: %w", joinPath(path, k.String()), err))
					continue
				}
				nv := reflect.New(rv.Type().Elem()).Elem()
				nv.SetString(s)
				rv.SetMapIndex(k, nv)
			}
		case reflect.String:
			s, err := expand(rv.String(), lookup)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", path, err))
				return
			}
			rv.SetString(s)
		}
	}
	walk(reflect.ValueOf(v), "")
	return errs
}

func joinPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
