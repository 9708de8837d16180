package config

import (
	"bufio"
	"encoding"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// configKeys returns every key a configuration file may hold, as dotted
// paths ("server.name", "plugins.grants.fs.mode"), from the toml tags of
// Config's fields: a struct (or pointer to one, slice of them or map of
// them by name, [plugins.override.NAME]) is a table, anything else (and
// a struct written as text, such as Rate) a key.
func configKeys() []string {
	var keys []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice || ft.Kind() == reflect.Map {
				ft = ft.Elem()
			}
			text := reflect.PointerTo(ft).Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
			if ft.Kind() == reflect.Struct && ft.PkgPath() == t.PkgPath() && !text {
				walk(prefix+name+".", ft)
				continue
			}
			keys = append(keys, prefix+name)
		}
	}
	walk("", reflect.TypeFor[Config]())
	slices.Sort(keys)
	return keys
}

// docTable matches a table's heading in docs/configuration.md, such as
// "## `[server]`" or "### `[[plugins]]`", and docKey a key's row,
// "| `name` | ...".
var (
	docTable = regexp.MustCompile("^#{2,4} `\\[{1,2}([a-z_.]+?)(?:\\.NAME)?\\]{1,2}`")
	docKey   = regexp.MustCompile("^\\| `([a-z0-9_]+)` \\|")
)

// documentedKeys returns the keys docs/configuration.md documents, as
// dotted paths.
func documentedKeys(t *testing.T) []string {
	f, err := os.Open("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var keys []string
	table := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if m := docTable.FindStringSubmatch(line); m != nil {
			table = m[1]
			continue
		}
		if m := docKey.FindStringSubmatch(line); m != nil {
			if table == "" {
				t.Errorf("docs/configuration.md: key %q outside a table heading", m[1])
				continue
			}
			keys = append(keys, table+"."+m[1])
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

// TestConfigurationDoc: docs/configuration.md documents every key of the
// configuration structs, once, and no key they do not have, so that the
// reference cannot drift from the code.
func TestConfigurationDoc(t *testing.T) {
	code, doc := configKeys(), documentedKeys(t)
	for i := 1; i < len(doc); i++ {
		if doc[i] == doc[i-1] {
			t.Errorf("docs/configuration.md documents %s twice", doc[i])
		}
	}
	for _, k := range code {
		if _, found := slices.BinarySearch(doc, k); !found {
			t.Errorf("docs/configuration.md does not document %s", k)
		}
	}
	for _, k := range doc {
		if _, found := slices.BinarySearch(code, k); !found {
			t.Errorf("docs/configuration.md documents %s, which internal/config does not have", k)
		}
	}
}
