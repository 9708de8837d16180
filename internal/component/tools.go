package component

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Tool is the MCP tool an exported function maps to, named, described and
// typed as Wassette exposes it (docs/components.md):
//
//   - a world-level function keeps its WIT name ("list-directory"); a
//     function of an exported interface is named
//     <interface export name>_<function>, every character other than an
//     ASCII letter, digit or '-' turned into '_' and letters lowered
//     ("wasi:cli/run@0.2.0" and "run" give "wasi_cli_run_0_2_0_run");
//   - the input schema is an object with one required property per
//     parameter; the output schema wraps the result type's schema as
//     {"result": ...}, the shape structuredContent has;
//   - the description is the function's WIT doc comment, else
//     "Auto-generated schema for function '<name>'".
type Tool struct {
	Name         string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // nil when the function returns nothing
	// Export is the component export that holds the function: the
	// function itself for a world-level one, else its interface.
	Export string
	// Func is the function's name inside Export's interface, "" for a
	// world-level function.
	Func   string
	Params []Field
	// Result is the function's result type, nil when it returns nothing.
	Result *Type
}

// CallName names the tool's function as runtime/component's Call does:
// "NAME" for a world-level function, "INTERFACE#NAME" for a function of
// an exported interface.
func (t *Tool) CallName() string {
	if t.Func == "" {
		return t.Export
	}
	return t.Export + "#" + t.Func
}

// Skipped is an exported function that maps to no tool, with the reason.
type Skipped struct {
	Export, Func, Reason string
}

func (s Skipped) String() string {
	name := s.Export
	if s.Func != "" {
		name += "#" + s.Func
	}
	return name + ": " + s.Reason
}

// maxToolName is the longest tool name MCP allows (^[a-zA-Z0-9_-]{1,128}$).
const maxToolName = 128

// maxSchemaNodes bounds the JSON Schema nodes of one tool's input and
// output schemas together: types are bounded when decoded, but a function
// may have many parameters of large types.
const maxSchemaNodes = 1 << 16

// ToolName returns the tool name of function fn of the interface exported
// as export (export "" for a world-level function fn), as Wassette forms
// it.
func ToolName(export, fn string) string {
	if export == "" {
		return normalizeName(fn)
	}
	return normalizeName(export) + "_" + normalizeName(fn)
}

// normalizeName lowers ASCII letters and turns every character other than
// an ASCII letter, digit or '-' into '_'.
func normalizeName(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Tools maps w's exported functions to tools, in export order, and lists
// the functions that map to none: resource constructors and methods, and
// functions that take or return a resource handle (a tool call has no way
// to pass a handle), functions whose name is too long or taken by an
// earlier tool, and functions whose schemas would be too large.
func (w *World) Tools() ([]Tool, []Skipped) {
	var tools []Tool
	var skipped []Skipped
	taken := map[string]string{}
	add := func(export string, iface bool, f *Function) {
		t := Tool{Export: export, Params: f.Params, Result: f.Result}
		if iface {
			t.Func = f.Name
			t.Name = ToolName(export, f.Name)
		} else {
			t.Name = ToolName("", export)
		}
		skip := func(reason string) { skipped = append(skipped, Skipped{Export: export, Func: t.Func, Reason: reason}) }
		switch {
		case f.Method():
			skip("a resource constructor or method")
			return
		case usesHandle(f):
			skip("takes or returns a resource handle")
			return
		case len(t.Name) > maxToolName:
			skip(fmt.Sprintf("its tool name is longer than %d characters", maxToolName))
			return
		case t.Name == "":
			skip("empty tool name")
			return
		}
		if prev, dup := taken[t.Name]; dup {
			skip(fmt.Sprintf("its tool name %q is already %s's", t.Name, prev))
			return
		}
		budget := maxSchemaNodes
		in, err := inputSchema(f.Params, &budget)
		if err != nil {
			skip(err.Error())
			return
		}
		t.InputSchema = in
		if f.Result != nil {
			if t.OutputSchema, err = outputSchema(f.Result, &budget); err != nil {
				skip(err.Error())
				return
			}
		}
		t.Description = f.Docs
		if strings.TrimSpace(t.Description) == "" {
			t.Description = fmt.Sprintf("Auto-generated schema for function '%s'", t.Name)
		}
		taken[t.Name] = export
		if iface {
			taken[t.Name] += "#" + f.Name
		}
		tools = append(tools, t)
	}
	for _, it := range w.Exports {
		switch {
		case it.Func != nil:
			add(it.Name, false, it.Func)
		case it.Interface != nil:
			for i := range it.Interface.Funcs {
				add(it.Name, true, &it.Interface.Funcs[i])
			}
		}
	}
	return tools, skipped
}

// usesHandle reports whether a parameter or the result of f is or holds
// an own or borrow handle.
func usesHandle(f *Function) bool {
	for _, p := range f.Params {
		if hasHandle(p.Type) {
			return true
		}
	}
	return hasHandle(f.Result)
}

func hasHandle(t *Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case Own, Borrow, Resource:
		return true
	}
	for _, f := range t.Fields {
		if hasHandle(f.Type) {
			return true
		}
	}
	return hasHandle(t.Elem) || hasHandle(t.Err)
}

func inputSchema(params []Field, budget *int) (json.RawMessage, error) {
	props := map[string]any{}
	required := []string{}
	for _, p := range params {
		s, err := schemaOf(p.Type, budget)
		if err != nil {
			return nil, err
		}
		props[p.Name] = s
		required = append(required, p.Name)
	}
	return json.Marshal(map[string]any{"type": "object", "properties": props, "required": required})
}

func outputSchema(t *Type, budget *int) (json.RawMessage, error) {
	s, err := schemaOf(t, budget)
	if err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{
		"type":       "object",
		"properties": map[string]any{"result": s},
		"required":   []string{"result"},
	})
}

type obj = map[string]any

// schemaOf returns the JSON Schema of values of t, spending one unit of
// budget per node.
func schemaOf(t *Type, budget *int) (obj, error) {
	if *budget--; *budget < 0 {
		return nil, fmt.Errorf("its schema has more than %d nodes", maxSchemaNodes)
	}
	if t == nil {
		return obj{"type": "null"}, nil
	}
	sub := func(t *Type) (obj, error) { return schemaOf(t, budget) }
	switch t.Kind {
	case Bool:
		return obj{"type": "boolean"}, nil
	case S8, S16, S32, S64, U8, U16, U32, U64:
		lo, hi := intRange(t.Kind)
		return obj{"type": "integer", "minimum": lo, "maximum": hi}, nil
	case F32, F64:
		return obj{"type": "number"}, nil
	case Char:
		return obj{"type": "string", "description": "1 unicode codepoint", "minLength": 1, "maxLength": 1}, nil
	case String:
		return obj{"type": "string"}, nil
	case List:
		items, err := sub(t.Elem)
		if err != nil {
			return nil, err
		}
		return obj{"type": "array", "items": items}, nil
	case Record:
		props := obj{}
		required := []string{}
		for _, f := range t.Fields {
			s, err := sub(f.Type)
			if err != nil {
				return nil, err
			}
			props[f.Name] = s
			required = append(required, f.Name)
		}
		return obj{"type": "object", "properties": props, "required": required}, nil
	case Tuple:
		items := []any{}
		for _, f := range t.Fields {
			s, err := sub(f.Type)
			if err != nil {
				return nil, err
			}
			items = append(items, s)
		}
		return obj{"type": "array", "prefixItems": items, "minItems": len(items), "maxItems": len(items)}, nil
	case Variant:
		cases := []any{}
		for _, f := range t.Fields {
			props := obj{"tag": obj{"const": f.Name}}
			required := []string{"tag"}
			if f.Type != nil {
				s, err := sub(f.Type)
				if err != nil {
					return nil, err
				}
				props["val"] = s
				required = append(required, "val")
			}
			cases = append(cases, obj{"type": "object", "properties": props, "required": required})
		}
		return obj{"oneOf": cases}, nil
	case Enum:
		return obj{"type": "string", "enum": append([]string{}, t.Names...)}, nil
	case Option:
		s, err := sub(t.Elem)
		if err != nil {
			return nil, err
		}
		return obj{"anyOf": []any{obj{"type": "null"}, s}}, nil
	case Result:
		ok, err := sub(t.Elem)
		if err != nil {
			return nil, err
		}
		bad, err := sub(t.Err)
		if err != nil {
			return nil, err
		}
		return obj{"oneOf": []any{
			obj{"type": "object", "properties": obj{"ok": ok}, "required": []string{"ok"}},
			obj{"type": "object", "properties": obj{"err": bad}, "required": []string{"err"}},
		}}, nil
	case Flags:
		return obj{"type": "array", "items": obj{"type": "string", "enum": append([]string{}, t.Names...)}, "uniqueItems": true}, nil
	}
	return nil, fmt.Errorf("a %v cannot be given as JSON", t.Kind)
}

// intRange returns the smallest and largest values of integer kind k.
func intRange(k Kind) (lo, hi any) {
	switch k {
	case S8:
		return math.MinInt8, math.MaxInt8
	case S16:
		return math.MinInt16, math.MaxInt16
	case S32:
		return math.MinInt32, math.MaxInt32
	case S64:
		return int64(math.MinInt64), int64(math.MaxInt64)
	case U8:
		return 0, math.MaxUint8
	case U16:
		return 0, math.MaxUint16
	case U32:
		return 0, uint64(math.MaxUint32)
	}
	return 0, uint64(math.MaxUint64)
}
