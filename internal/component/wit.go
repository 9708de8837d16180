package component

import (
	"sort"
	"strings"
)

// World is the WIT view of a component: what it imports and exports, with
// the types of its functions and the doc comments of its `package-docs`
// custom section. Describe builds it; String renders it as WIT text.
type World struct {
	// Imports and Exports are the component's imports and exports, in
	// binary order. Core modules and nested components are left out:
	// WIT does not describe them.
	Imports []WorldItem
	Exports []WorldItem
	// Docs is the package's doc comment, or "".
	Docs string
}

// WorldItem is one import or export of a world: a function of the world
// itself (Func), an interface (Interface) or a type (Type). Exactly one
// of the three is set.
type WorldItem struct {
	// Name is the import or export name: a plain kebab name ("echo") or
	// an interface name ("wasi:cli/environment@0.2.3").
	Name      string
	Func      *Function
	Interface *Interface
	Type      *Type
	// Docs is the item's doc comment (for a function, Func.Docs), or "".
	Docs string
}

// Interface is an imported or exported instance: the functions and types
// it exports.
type Interface struct {
	// Name is the full import or export name.
	Name string
	// Namespace, Package, Interface and Version are Name's parts
	// ("wasi", "cli", "environment", "0.2.3"); for a plain kebab name
	// only Interface is set, to Name.
	Namespace, Package, Interface, Version string
	Types                                  []NamedType
	Funcs                                  []Function
	Docs                                   string
}

// NamedType is a type an interface exports, under its name.
type NamedType struct {
	Name string
	Type *Type
	Docs string
}

// Function is one function of a world or an interface.
type Function struct {
	// Name is the function's name in its world or interface; a resource
	// method is named as the binary names it ("[method]file.read").
	Name   string
	Params []Field
	// Result is the result type, nil when the function returns nothing.
	Result *Type
	Docs   string
}

// Method reports whether f is a resource constructor, method or static
// function ("[constructor]r", "[method]r.f", "[static]r.f").
func (f *Function) Method() bool { return strings.HasPrefix(f.Name, "[") }

// SplitInterfaceName splits an interface name "ns:pkg/iface@version" into
// its parts. A plain name (no ':' or '/') comes back as the interface
// alone.
func SplitInterfaceName(name string) (namespace, pkg, iface, version string) {
	slash := strings.IndexByte(name, '/')
	if slash < 0 {
		return "", "", name, ""
	}
	head, tail := name[:slash], name[slash+1:]
	if at := strings.IndexByte(tail, '@'); at >= 0 {
		tail, version = tail[:at], tail[at+1:]
	}
	namespace, pkg, _ = strings.Cut(head, ":")
	return namespace, pkg, tail, version
}

// Describe returns the WIT view of c. It does not fail: docs that cannot
// be read are left out (see Docs).
func (c *Component) Describe() *World {
	docs := parsePackageDocs(c.Docs())
	w := &World{}
	if docs != nil {
		w.Docs = docs.Docs
	}
	for _, im := range c.Imports {
		if it, ok := describeItem(im.Extern, docs, true); ok {
			w.Imports = append(w.Imports, it)
		}
	}
	for _, ex := range c.Exports {
		if it, ok := describeItem(ex.Extern, docs, false); ok {
			w.Exports = append(w.Exports, it)
		}
	}
	return w
}

func describeItem(e Extern, docs *packageDocs, imported bool) (WorldItem, bool) {
	it := WorldItem{Name: e.Name}
	switch e.Sort {
	case SortFunc:
		if e.Type == nil || e.Type.Kind != Func {
			return it, false
		}
		f := funcOf(e.Name, e.Type)
		f.Docs = docs.worldFunc(e.Name, imported)
		it.Func, it.Docs = &f, f.Docs
	case SortInstance:
		if e.Type == nil {
			return it, false
		}
		in := &Interface{Name: e.Name}
		in.Namespace, in.Package, in.Interface, in.Version = SplitInterfaceName(e.Name)
		id := docs.iface(in, e.Type, imported)
		in.Docs = id.Docs
		for _, x := range e.Type.Exports {
			switch {
			case x.Sort == SortFunc && x.Type != nil && x.Type.Kind == Func:
				f := funcOf(x.Name, x.Type)
				f.Docs = id.Funcs[x.Name].text()
				in.Funcs = append(in.Funcs, f)
			case x.Sort == SortType && x.Type != nil:
				in.Types = append(in.Types, NamedType{Name: x.Name, Type: x.Type, Docs: id.Types[x.Name].Docs})
			}
		}
		it.Interface, it.Docs = in, in.Docs
	case SortType:
		if e.Type == nil {
			return it, false
		}
		it.Type = e.Type
		it.Docs = docs.worldType(e.Name)
	default:
		return it, false
	}
	return it, true
}

func funcOf(name string, t *Type) Function {
	return Function{Name: name, Params: t.Params, Result: t.Result}
}

// String renders w as WIT text: one `import` or `export` line per world
// function and type, and a block per interface with its types and
// functions, each preceded by its doc comment.
func (w *World) String() string {
	var b strings.Builder
	writeDocs(&b, "", w.Docs)
	b.WriteString("world component {\n")
	// A blank line sets an interface's block apart, and the exports from
	// the imports.
	var prev *WorldItem
	for _, verb := range []string{"import", "export"} {
		items := w.Imports
		if verb == "export" {
			items = w.Exports
		}
		for i := range items {
			it := &items[i]
			if prev != nil && (it.Interface != nil || prev.Interface != nil || (i == 0 && verb == "export")) {
				b.WriteString("\n")
			}
			writeItem(&b, verb, *it)
			prev = it
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func writeItem(b *strings.Builder, verb string, it WorldItem) {
	const ind = "  "
	writeDocs(b, ind, it.Docs)
	switch {
	case it.Func != nil:
		b.WriteString(ind + verb + " " + it.Name + ": " + funcSig(it.Func) + ";\n")
	case it.Type != nil:
		b.WriteString(ind + verb + " " + typeDef(it.Name, it.Type) + "\n")
	case it.Interface != nil:
		in := it.Interface
		b.WriteString(ind + verb + " " + it.Name + ": interface {\n")
		for _, t := range in.Types {
			writeDocs(b, ind+ind, t.Docs)
			b.WriteString(ind + ind + typeDef(t.Name, t.Type) + "\n")
		}
		for _, f := range in.Funcs {
			writeDocs(b, ind+ind, f.Docs)
			b.WriteString(ind + ind + f.Name + ": " + funcSig(&f) + ";\n")
		}
		b.WriteString(ind + "}\n")
	}
}

func writeDocs(b *strings.Builder, indent, docs string) {
	if docs == "" {
		return
	}
	for _, line := range strings.Split(strings.TrimRight(docs, "\n"), "\n") {
		b.WriteString(strings.TrimRight(indent+"/// "+line, " ") + "\n")
	}
}

// funcSig renders f's type: func(a: T, ...) -> R.
func funcSig(f *Function) string {
	t := &Type{Kind: Func, Params: f.Params, Result: f.Result}
	return t.String()
}

// typeDef renders a named type as a WIT definition: `record name { ... }`,
// `resource name;`, or `type name = T;` for the others.
func typeDef(name string, t *Type) string {
	switch t.Kind {
	case Record, Variant, Flags, Enum:
		if t.Name != "" && t.Name != name {
			return "type " + name + " = " + t.Name + ";"
		}
		s := t.String() // "record { ... }"
		return t.Kind.String() + " " + name + strings.TrimPrefix(s, t.Kind.String())
	case Resource:
		return "resource " + name + ";"
	}
	if t.Name == name {
		// An anonymous type named by this export: show its structure.
		anon := *t
		anon.Name = ""
		return "type " + name + " = " + anon.String() + ";"
	}
	return "type " + name + " = " + t.ref() + ";"
}

// ref renders t as a reference to it: its name when it has one, else its
// structure.
func (t *Type) ref() string {
	var b strings.Builder
	t.write(&b, 1)
	return b.String()
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
