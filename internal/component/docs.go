package component

import (
	"bytes"
	"encoding/json"
)

// maxDocsSize bounds the package-docs section read: a larger one is
// ignored (the component still loads, without descriptions).
const maxDocsSize = 1 << 20

// packageDocs is the JSON of a `package-docs` custom section, as
// wit-component (wit-parser's PackageMetadata) writes it after a version
// byte (0 or 1): the doc comments of one WIT package's worlds and
// interfaces. Stability annotations are ignored.
type packageDocs struct {
	Docs       string               `json:"docs"`
	Worlds     map[string]worldDocs `json:"worlds"`
	Interfaces map[string]ifaceDocs `json:"interfaces"`
}

// worldDocs is one world's docs. In the v0 form a world's functions and
// kebab-named interfaces, imported or exported, are under "funcs" and
// "interfaces"; the v1 form puts an export that shares its name with an
// import under "func_exports" and "interface_exports".
type worldDocs struct {
	Docs             string               `json:"docs"`
	Interfaces       map[string]ifaceDocs `json:"interfaces"`
	InterfaceExports map[string]ifaceDocs `json:"interface_exports"`
	Types            map[string]typeDocs  `json:"types"`
	Funcs            map[string]funcDocs  `json:"funcs"`
	FuncExports      map[string]funcDocs  `json:"func_exports"`
}

type ifaceDocs struct {
	Docs  string              `json:"docs"`
	Funcs map[string]funcDocs `json:"funcs"`
	Types map[string]typeDocs `json:"types"`
}

type typeDocs struct {
	Docs  string            `json:"docs"`
	Items map[string]string `json:"items"`
}

// funcDocs is a function's docs: a string (or null) in the v0 form, an
// object {"docs": ...} in the v1 form.
type funcDocs struct {
	Docs string
}

func (f *funcDocs) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Docs string `json:"docs"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		f.Docs = o.Docs
		return nil
	}
	var s *string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if s != nil {
		f.Docs = *s
	}
	return nil
}

func (f funcDocs) text() string { return f.Docs }

// parsePackageDocs decodes a package-docs section, or returns nil when
// there is none or it cannot be read.
func parsePackageDocs(data []byte) *packageDocs {
	if len(data) < 2 || len(data) > maxDocsSize || data[0] > 1 {
		return nil
	}
	var d packageDocs
	if err := json.Unmarshal(data[1:], &d); err != nil {
		return nil
	}
	return &d
}

// worlds returns d's worlds in name order (a package may define several;
// which one the component targets is not recorded).
func (d *packageDocs) worlds() []worldDocs {
	if d == nil {
		return nil
	}
	out := make([]worldDocs, 0, len(d.Worlds))
	for _, k := range sortedKeys(d.Worlds) {
		out = append(out, d.Worlds[k])
	}
	return out
}

// worldFunc returns the docs of a world-level function.
func (d *packageDocs) worldFunc(name string, imported bool) string {
	for _, w := range d.worlds() {
		if !imported {
			if f, ok := w.FuncExports[name]; ok && f.Docs != "" {
				return f.Docs
			}
		}
		if f, ok := w.Funcs[name]; ok && f.Docs != "" {
			return f.Docs
		}
	}
	return ""
}

// worldType returns the docs of a world-level type.
func (d *packageDocs) worldType(name string) string {
	for _, w := range d.worlds() {
		if t, ok := w.Types[name]; ok && t.Docs != "" {
			return t.Docs
		}
	}
	return ""
}

// iface returns the docs of an imported or exported interface: for a
// kebab name, the world's inline interface; for an interface name, the
// package's interface of that name (the section does not name its
// package: the docs are taken only when every function they document is
// one of the instance's, so that an import of another package's
// interface of the same name, wasi:cli/run next to a local "run", keeps
// none).
func (d *packageDocs) iface(in *Interface, t *Type, imported bool) ifaceDocs {
	if d == nil {
		return ifaceDocs{}
	}
	if in.Namespace == "" && in.Package == "" {
		for _, w := range d.worlds() {
			if !imported {
				if i, ok := w.InterfaceExports[in.Name]; ok {
					return i
				}
			}
			if i, ok := w.Interfaces[in.Name]; ok {
				return i
			}
		}
		return ifaceDocs{}
	}
	i := d.Interfaces[in.Interface]
	for name := range i.Funcs {
		if t.Func(name) == nil {
			return ifaceDocs{}
		}
	}
	return i
}
