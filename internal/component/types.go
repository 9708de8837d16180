package component

import (
	"fmt"
	"strings"
)

// Kind says what a Type is.
type Kind uint8

// The kinds of type: the primitive and compound value types of the
// Component Model MVP, resource handles, resource types themselves,
// function types and the types of instances and components.
const (
	Bool Kind = iota + 1
	S8
	U8
	S16
	U16
	S32
	U32
	S64
	U64
	F32
	F64
	Char
	String
	Record
	Variant
	List
	Tuple
	Flags
	Enum
	Option
	Result
	Own
	Borrow
	Resource
	Func
	InstanceKind
	ComponentKind
)

var kindNames = [...]string{
	Bool: "bool", S8: "s8", U8: "u8", S16: "s16", U16: "u16", S32: "s32", U32: "u32",
	S64: "s64", U64: "u64", F32: "f32", F64: "f64", Char: "char", String: "string",
	Record: "record", Variant: "variant", List: "list", Tuple: "tuple", Flags: "flags",
	Enum: "enum", Option: "option", Result: "result", Own: "own", Borrow: "borrow",
	Resource: "resource", Func: "func", InstanceKind: "instance", ComponentKind: "component",
}

// String returns the kind's WIT keyword.
func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Type is a decoded type. Which fields are set depends on Kind:
//
//   - Record: Fields (name and type of each field).
//   - Variant: Fields (name of each case, Type nil for a case without payload).
//   - Tuple: Fields (Type only).
//   - Flags, Enum: Names.
//   - List, Option: Elem.
//   - Result: Elem (the ok type, or nil) and Err (or nil).
//   - Own, Borrow: Res, the resource type the handle points to.
//   - Resource: Res.
//   - Func: Params and Result (nil when the function returns nothing).
//   - InstanceKind: Exports; ComponentKind: Imports and Exports.
//
// Types are immutable once decoded and may be shared: the same *Type
// appears wherever the binary refers to the same type index.
type Type struct {
	Kind    Kind
	Fields  []Field
	Names   []string
	Elem    *Type
	Err     *Type
	Res     *ResourceType
	Params  []Field
	Result  *Type
	Imports []Extern
	Exports []Extern

	// Name is the name the type was exported or imported under in the
	// instance or component that defined it (for example "descriptor"), or
	// "" for an anonymous type.
	Name string
	// cost is the number of type nodes in the type's expansion, bounded at
	// decode time so that flattening and lifting stay bounded.
	cost  int
	depth int
}

// Field is a named member: a record field, a variant case, a function
// parameter or (with an empty Name) a tuple element.
type Field struct {
	Name string
	Type *Type
}

// ResourceType is one resource type. Each definition or import is its own
// identity: handles of two ResourceTypes never mix.
type ResourceType struct {
	// Name is the name the resource was imported or exported under, when known.
	Name string
	// Dtor is the core function index of the destructor of a resource
	// defined by this component, or -1.
	Dtor int64
	// Imported is true for a resource the component imports (the host
	// implements it) rather than defines.
	Imported bool
}

// Primitive reports whether k is a primitive value type (bool through string).
func (k Kind) Primitive() bool { return k >= Bool && k <= String }

// IsValue reports whether t is a value type (something a parameter or a
// result can have).
func (t *Type) IsValue() bool { return t != nil && t.Kind >= Bool && t.Kind <= Borrow }

// String renders t in WIT syntax, for messages and `inspect`.
func (t *Type) String() string {
	var b strings.Builder
	t.write(&b, 0)
	return b.String()
}

func (t *Type) write(b *strings.Builder, depth int) {
	if t == nil {
		b.WriteString("_")
		return
	}
	if depth > 0 && t.Name != "" && !t.Kind.Primitive() {
		b.WriteString(t.Name)
		return
	}
	switch t.Kind {
	case Record, Variant:
		b.WriteString(t.Kind.String())
		b.WriteString(" { ")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(f.Name)
			if t.Kind == Record {
				b.WriteString(": ")
				f.Type.write(b, depth+1)
			} else if f.Type != nil {
				b.WriteString("(")
				f.Type.write(b, depth+1)
				b.WriteString(")")
			}
		}
		b.WriteString(" }")
	case Tuple:
		b.WriteString("tuple<")
		for i, f := range t.Fields {
			if i > 0 {
				b.WriteString(", ")
			}
			f.Type.write(b, depth+1)
		}
		b.WriteString(">")
	case Flags, Enum:
		b.WriteString(t.Kind.String())
		b.WriteString(" { ")
		b.WriteString(strings.Join(t.Names, ", "))
		b.WriteString(" }")
	case List, Option:
		b.WriteString(t.Kind.String())
		b.WriteString("<")
		t.Elem.write(b, depth+1)
		b.WriteString(">")
	case Result:
		b.WriteString("result")
		if t.Elem != nil || t.Err != nil {
			b.WriteString("<")
			t.Elem.write(b, depth+1)
			if t.Err != nil {
				b.WriteString(", ")
				t.Err.write(b, depth+1)
			}
			b.WriteString(">")
		}
	case Own, Borrow:
		name := "resource"
		if t.Res != nil && t.Res.Name != "" {
			name = t.Res.Name
		}
		if t.Kind == Borrow {
			b.WriteString("borrow<" + name + ">")
		} else {
			b.WriteString(name)
		}
	case Resource:
		b.WriteString("resource")
		if t.Res != nil && t.Res.Name != "" {
			b.WriteString(" " + t.Res.Name)
		}
	case Func:
		b.WriteString("func(")
		for i, p := range t.Params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Name + ": ")
			p.Type.write(b, depth+1)
		}
		b.WriteString(")")
		if t.Result != nil {
			b.WriteString(" -> ")
			t.Result.write(b, depth+1)
		}
	case InstanceKind, ComponentKind:
		b.WriteString(t.Kind.String())
		b.WriteString(" { ")
		for i, e := range t.Imports {
			if i > 0 {
				b.WriteString("; ")
			}
			b.WriteString("import " + e.Name)
		}
		for i, e := range t.Exports {
			if i > 0 || len(t.Imports) > 0 {
				b.WriteString("; ")
			}
			b.WriteString("export " + e.Name)
		}
		b.WriteString(" }")
	default:
		b.WriteString(t.Kind.String())
	}
}

// Sort is the kind of thing an import, export or index refers to.
type Sort uint8

// The component-level sorts, and the core sorts (prefixed Core).
const (
	SortFunc Sort = iota + 1
	SortValue
	SortType
	SortComponent
	SortInstance
	SortModule // a core module (import/export of `core module`)
	SortCoreFunc
	SortCoreTable
	SortCoreMemory
	SortCoreGlobal
	SortCoreType
	SortCoreInstance
)

var sortNames = [...]string{
	SortFunc: "func", SortValue: "value", SortType: "type", SortComponent: "component",
	SortInstance: "instance", SortModule: "core module", SortCoreFunc: "core func",
	SortCoreTable: "core table", SortCoreMemory: "core memory", SortCoreGlobal: "core global",
	SortCoreType: "core type", SortCoreInstance: "core instance",
}

// String returns the sort as the text format spells it.
func (s Sort) String() string {
	if int(s) < len(sortNames) && sortNames[s] != "" {
		return sortNames[s]
	}
	return fmt.Sprintf("sort(%d)", s)
}

// Extern describes an import or export: its name and what it is. Type is
// the function type (SortFunc), the instance or component type
// (SortInstance, SortComponent) or the type itself (SortType); it is nil
// for a core module.
type Extern struct {
	Name string
	Sort Sort
	Type *Type
}

// Func returns the exported function name of an instance type, or nil.
func (t *Type) Func(name string) *Type {
	if t == nil {
		return nil
	}
	for _, e := range t.Exports {
		if e.Name == name && e.Sort == SortFunc {
			return e.Type
		}
	}
	return nil
}
