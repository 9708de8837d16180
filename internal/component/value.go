package component

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Values of component types, in the plain Go form the JSON conversion
// (Tool.Args, ToJSON) reads and writes:
//
//	bool            bool
//	s8 … s64        int64
//	u8 … u64        uint64
//	f32, f64        float64
//	char            rune
//	string          string
//	list, tuple     []any
//	record          map[string]any, by field name
//	variant         Case
//	enum            string, the case name
//	option          nil for none, Some for some
//	result          ResultValue
//	flags           []string, the names set, in declaration order
//
// Resource handles have no plain form: functions that use them are not
// tools.

// Case is a value of a variant type: the case's name and its payload (nil
// for a case without one).
type Case struct {
	Name  string
	Value any
}

// Some is a present option value.
type Some struct{ Value any }

// ResultValue is a value of a result type: Err says which side, Value is the
// payload (nil when that side has no type).
type ResultValue struct {
	Err   bool
	Value any
}

// ArgError is an argument that does not fit its parameter's type; the
// server answers it with -32602. Path names the place ("point.z[1]").
type ArgError struct {
	Path string
	Msg  string
}

func (e *ArgError) Error() string {
	if e.Path == "" {
		return "arguments: " + e.Msg
	}
	return "argument " + e.Path + ": " + e.Msg
}

// Args converts a tool call's arguments, a JSON object with one property
// per parameter (others are ignored, as Wassette does), into the
// parameter values in plain form. Every error is an *ArgError.
func (t *Tool) Args(raw []byte) ([]any, error) {
	var args map[string]json.RawMessage
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return nil, &ArgError{Msg: "not a JSON object"}
	}
	out := make([]any, len(t.Params))
	for i, p := range t.Params {
		a, ok := args[p.Name]
		if !ok {
			return nil, &ArgError{Path: p.Name, Msg: "missing (every parameter is required)"}
		}
		v, err := decodeJSON(a)
		if err != nil {
			return nil, &ArgError{Path: p.Name, Msg: err.Error()}
		}
		if out[i], err = FromJSON(p.Type, v, p.Name); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// decodeJSON decodes one JSON value with numbers kept as json.Number, so
// that 64-bit integers keep every digit.
func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, errors.New("not valid JSON")
	}
	return v, nil
}

// FromJSON converts v, a value decoded from JSON with numbers as
// json.Number (or float64), into the plain form of a value of type t, in
// the shapes Wassette accepts: a record is an object, a list or tuple an
// array, a variant {"tag": case, "val": payload}, an enum its case name, an
// option null or the value, a result {"ok": v} or {"err": v}, flags an
// array of the names set. path names v in errors (*ArgError).
func FromJSON(t *Type, v any, path string) (any, error) {
	bad := func(format string, args ...any) error {
		return &ArgError{Path: path, Msg: fmt.Sprintf(format, args...)}
	}
	if t == nil {
		if v != nil {
			return nil, bad("want null, got %s", jsonKind(v))
		}
		return nil, nil
	}
	switch t.Kind {
	case Bool:
		b, ok := v.(bool)
		if !ok {
			return nil, bad("want a boolean, got %s", jsonKind(v))
		}
		return b, nil
	case S8, S16, S32, S64, U8, U16, U32, U64:
		return intFromJSON(t.Kind, v, bad)
	case F32, F64:
		f, ok := number(v)
		if !ok {
			return nil, bad("want a number, got %s", jsonKind(v))
		}
		if t.Kind == F32 {
			if math.Abs(f) > math.MaxFloat32 {
				return nil, bad("%v is out of range for f32", f)
			}
			f = float64(float32(f))
		}
		return f, nil
	case Char:
		s, ok := v.(string)
		if !ok || utf8.RuneCountInString(s) != 1 {
			return nil, bad("want a string of one character, got %s", jsonKind(v))
		}
		r, _ := utf8.DecodeRuneInString(s)
		return r, nil
	case String:
		s, ok := v.(string)
		if !ok {
			return nil, bad("want a string, got %s", jsonKind(v))
		}
		return s, nil
	case List:
		a, ok := v.([]any)
		if !ok {
			return nil, bad("want an array, got %s", jsonKind(v))
		}
		out := make([]any, len(a))
		for i, e := range a {
			var err error
			if out[i], err = FromJSON(t.Elem, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case Tuple:
		a, ok := v.([]any)
		if !ok || len(a) != len(t.Fields) {
			return nil, bad("want an array of %d items, got %s", len(t.Fields), jsonKind(v))
		}
		out := make([]any, len(a))
		for i, f := range t.Fields {
			var err error
			if out[i], err = FromJSON(f.Type, a[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return nil, err
			}
		}
		return out, nil
	case Record:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad("want an object, got %s", jsonKind(v))
		}
		out := make(map[string]any, len(t.Fields))
		for _, f := range t.Fields {
			e, ok := m[f.Name]
			if !ok {
				return nil, bad("field %q missing", f.Name)
			}
			var err error
			if out[f.Name], err = FromJSON(f.Type, e, path+"."+f.Name); err != nil {
				return nil, err
			}
		}
		return out, nil
	case Variant:
		m, ok := v.(map[string]any)
		if !ok {
			return nil, bad(`want an object {"tag": …, "val": …}, got %s`, jsonKind(v))
		}
		tag, _ := m["tag"].(string)
		for _, f := range t.Fields {
			if f.Name != tag {
				continue
			}
			if f.Type == nil {
				return Case{Name: tag}, nil
			}
			val, ok := m["val"]
			if !ok {
				return nil, bad("case %q needs a \"val\"", tag)
			}
			p, err := FromJSON(f.Type, val, path+"."+tag)
			if err != nil {
				return nil, err
			}
			return Case{Name: tag, Value: p}, nil
		}
		return nil, bad("tag %q is not one of %s", tag, strings.Join(caseNames(t), ", "))
	case Enum:
		s, _ := v.(string)
		for _, n := range t.Names {
			if n == s {
				return s, nil
			}
		}
		return nil, bad("want one of %s, got %s", strings.Join(t.Names, ", "), jsonKind(v))
	case Option:
		if v == nil {
			return nil, nil
		}
		e, err := FromJSON(t.Elem, v, path)
		if err != nil {
			return nil, err
		}
		return Some{Value: e}, nil
	case Result:
		m, ok := v.(map[string]any)
		if ok {
			if e, ok := m["ok"]; ok {
				p, err := FromJSON(t.Elem, e, path+".ok")
				if err != nil {
					return nil, err
				}
				return ResultValue{Value: p}, nil
			}
			if e, ok := m["err"]; ok {
				p, err := FromJSON(t.Err, e, path+".err")
				if err != nil {
					return nil, err
				}
				return ResultValue{Err: true, Value: p}, nil
			}
		}
		return nil, bad(`want {"ok": …} or {"err": …}, got %s`, jsonKind(v))
	case Flags:
		a, ok := v.([]any)
		if !ok {
			return nil, bad("want an array of flag names, got %s", jsonKind(v))
		}
		set := map[string]bool{}
		for _, e := range a {
			s, _ := e.(string)
			known := false
			for _, n := range t.Names {
				known = known || n == s
			}
			if !known {
				return nil, bad("want flags among %s, got %s", strings.Join(t.Names, ", "), jsonKind(e))
			}
			set[s] = true
		}
		out := []string{}
		for _, n := range t.Names {
			if set[n] {
				out = append(out, n)
			}
		}
		return out, nil
	}
	return nil, bad("a %v cannot be given as JSON", t.Kind)
}

func caseNames(t *Type) []string {
	names := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		names[i] = f.Name
	}
	return names
}

// intFromJSON converts an integer: a JSON number with no fractional part
// within k's range.
func intFromJSON(k Kind, v any, bad func(string, ...any) error) (any, error) {
	lo, hi := intRange(k)
	want := func() error { return bad("want an integer from %v to %v, got %s", lo, hi, jsonKind(v)) }
	var s string
	switch n := v.(type) {
	case json.Number:
		s = n.String()
	case float64:
		s = strconv.FormatFloat(n, 'f', -1, 64)
	default:
		return nil, want()
	}
	signed := k == S8 || k == S16 || k == S32 || k == S64
	if signed {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(s, 64)
			if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
				return nil, want()
			}
			i = int64(f)
		}
		if i < toInt64(lo) || i > toInt64(hi) {
			return nil, want()
		}
		return i, nil
	}
	u, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != math.Trunc(f) || f < 0 || f > 1<<53 {
			return nil, want()
		}
		u = uint64(f)
	}
	if u > toUint64(hi) {
		return nil, want()
	}
	return u, nil
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case int:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

func toUint64(v any) uint64 {
	switch n := v.(type) {
	case int:
		return uint64(n)
	case uint64:
		return n
	}
	return 0
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(n.String(), 64)
		return f, err == nil
	case float64:
		return n, true
	}
	return 0, false
}

// jsonKind names the JSON type of v for errors, with the value when it is
// short.
func jsonKind(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return "the number " + x.String()
	case float64:
		return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		if len(x) <= 32 {
			return strconv.Quote(x)
		}
		return "a string"
	case []any:
		return fmt.Sprintf("an array of %d", len(x))
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// ToJSON converts v, a value of type t in plain form, into a value that
// encoding/json writes in the shapes FromJSON reads. A non-finite float
// becomes the string "NaN", "inf" or "-inf" (JSON has no such numbers).
func ToJSON(t *Type, v any) (any, error) {
	bad := func() error { return fmt.Errorf("component: a %T is not a value of type %s", v, t) }
	if t == nil {
		return nil, nil
	}
	switch t.Kind {
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case S8, S16, S32, S64:
		if i, ok := v.(int64); ok {
			return i, nil
		}
	case U8, U16, U32, U64:
		if u, ok := v.(uint64); ok {
			return u, nil
		}
	case F32, F64:
		if f, ok := v.(float64); ok {
			switch {
			case math.IsNaN(f):
				return "NaN", nil
			case math.IsInf(f, 1):
				return "inf", nil
			case math.IsInf(f, -1):
				return "-inf", nil
			}
			return f, nil
		}
	case Char:
		if r, ok := v.(rune); ok {
			return string(r), nil
		}
	case String:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case List:
		if a, ok := v.([]any); ok {
			out := make([]any, len(a))
			for i, e := range a {
				var err error
				if out[i], err = ToJSON(t.Elem, e); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case Tuple:
		if a, ok := v.([]any); ok && len(a) == len(t.Fields) {
			out := make([]any, len(a))
			for i, f := range t.Fields {
				var err error
				if out[i], err = ToJSON(f.Type, a[i]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case Record:
		if m, ok := v.(map[string]any); ok {
			out := make(map[string]any, len(t.Fields))
			for _, f := range t.Fields {
				var err error
				if out[f.Name], err = ToJSON(f.Type, m[f.Name]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case Variant:
		if c, ok := v.(Case); ok {
			for _, f := range t.Fields {
				if f.Name != c.Name {
					continue
				}
				if f.Type == nil {
					return map[string]any{"tag": c.Name}, nil
				}
				p, err := ToJSON(f.Type, c.Value)
				if err != nil {
					return nil, err
				}
				return map[string]any{"tag": c.Name, "val": p}, nil
			}
		}
	case Enum:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case Option:
		if v == nil {
			return nil, nil
		}
		if s, ok := v.(Some); ok {
			return ToJSON(t.Elem, s.Value)
		}
	case Result:
		if r, ok := v.(ResultValue); ok {
			side, pt := "ok", t.Elem
			if r.Err {
				side, pt = "err", t.Err
			}
			p, err := ToJSON(pt, r.Value)
			if err != nil {
				return nil, err
			}
			return map[string]any{side: p}, nil
		}
	case Flags:
		if a, ok := v.([]string); ok {
			out := append([]string{}, a...)
			order := map[string]int{}
			for i, n := range t.Names {
				order[n] = i
			}
			sort.SliceStable(out, func(i, j int) bool { return order[out[i]] < order[out[j]] })
			return out, nil
		}
	}
	return nil, bad()
}

// Output is what a tool call returns, in MCP terms: the text content,
// the structuredContent ({"result": value}) and whether it is an error.
type Output struct {
	Text       string
	Structured json.RawMessage
	IsError    bool
}

// Output converts the function's return value (in plain form; ignored
// when the function returns nothing) into the call's result: an err of a
// result type is an error whose text is the err value (a string as it
// is, anything else as JSON); any other value is text (the same way) plus
// structured content. A function without a result answers "" and no
// structured content.
func (t *Tool) Output(v any) (Output, error) {
	if t.Result == nil {
		return Output{}, nil
	}
	j, err := ToJSON(t.Result, v)
	if err != nil {
		return Output{}, err
	}
	var out Output
	text := j
	if r, ok := v.(ResultValue); ok && t.Result.Kind == Result && r.Err {
		out.IsError = true
		text = j.(map[string]any)["err"]
	}
	if s, ok := text.(string); ok {
		out.Text = s
	} else {
		b, err := json.Marshal(text)
		if err != nil {
			return Output{}, err
		}
		out.Text = string(b)
	}
	if out.Structured, err = json.Marshal(map[string]any{"result": j}); err != nil {
		return Output{}, err
	}
	return out, nil
}
