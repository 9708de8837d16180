package wasmcp

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// An argPlan decodes tool arguments into one struct type without
// encoding/json's scanner, for the struct types where it can do exactly
// what json.Unmarshal does: exported fields without embedding, simple
// json tags and distinct names. Strings, booleans and numbers are set
// directly; other field types are decoded with json.Unmarshal, one member
// at a time. Anything unusual (a value of the wrong type, a number out of
// range, a key matching a field only after case folding, a duplicate
// member) makes decode report false, and the caller decodes the arguments
// again with json.Unmarshal, which gives its error message.
type argPlan struct {
	fields []argField
	names  []string // the fields' names, for scanObject
}

type argField struct {
	name  string
	index int
	kind  reflect.Kind // String, Bool, Int*, Uint*, Float*; Invalid: json.Unmarshal
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// newArgPlan returns the plan for t, or nil if t needs encoding/json.
func newArgPlan(t reflect.Type) *argPlan {
	if t.Kind() != reflect.Struct || t.NumField() > 64 || customDecoding(t) {
		return nil
	}
	pl := &argPlan{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil // promoted fields: leave them to encoding/json
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts != "" && opts != "omitempty" && opts != "omitzero" {
			return nil // ",string" and anything unknown
		}
		if name == "" {
			name = f.Name
		}
		if !plainName(name) {
			return nil
		}
		for _, g := range pl.fields {
			if strings.EqualFold(g.name, name) {
				return nil
			}
		}
		kind := f.Type.Kind()
		switch kind {
		case reflect.String, reflect.Bool,
			reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
			reflect.Float32, reflect.Float64:
			if customDecoding(f.Type) || f.Type == jsonNumber {
				kind = reflect.Invalid
			}
		default:
			kind = reflect.Invalid
		}
		pl.fields = append(pl.fields, argField{name: name, index: i, kind: kind})
		pl.names = append(pl.names, name)
	}
	return pl
}

// customDecoding reports whether values of type t decode themselves.
func customDecoding(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

// plainName reports whether a field name is ASCII letters, digits, '_'
// and '-' only, a name encoding/json takes as it is.
func plainName(s string) bool { return wordBytes(s, '-') }

// decode decodes the JSON object args (valid JSON) into v, a settable
// zero struct of the plan's type; false means v is undefined and args must
// go to json.Unmarshal.
func (pl *argPlan) decode(args []byte, v reflect.Value) bool {
	return scanObject(args, pl.names, func(i int, raw []byte) bool {
		f := pl.fields[i]
		return setField(v.Field(f.index), f.kind, raw)
	})
}

// setField sets fv from the JSON value raw as encoding/json would, or
// reports false.
func setField(fv reflect.Value, kind reflect.Kind, raw []byte) bool {
	if kind == reflect.Invalid {
		return json.Unmarshal(raw, fv.Addr().Interface()) == nil
	}
	if jsonscan.Kind(raw) == 'z' {
		return true // null leaves a scalar as it is
	}
	switch kind {
	case reflect.String:
		s, ok := unquote(raw)
		if ok {
			fv.SetString(s)
		}
		return ok
	case reflect.Bool:
		switch string(raw) {
		case "true":
			fv.SetBool(true)
		case "false":
		default:
			return false
		}
		return true
	}
	if jsonscan.Kind(raw) != 'n' {
		return false
	}
	switch kind {
	case reflect.Float32, reflect.Float64:
		n, err := strconv.ParseFloat(string(raw), fv.Type().Bits())
		if err != nil || fv.OverflowFloat(n) {
			return false
		}
		fv.SetFloat(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(string(raw), 10, 64)
		if err != nil || fv.OverflowUint(n) {
			return false
		}
		fv.SetUint(n)
	default:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || fv.OverflowInt(n) {
			return false
		}
		fv.SetInt(n)
	}
	return true
}

// unquote decodes the JSON string literal lit (valid JSON) as
// encoding/json does; false if lit is not a string.
func unquote(lit []byte) (string, bool) {
	for len(lit) > 0 && isSpace(lit[len(lit)-1]) {
		lit = lit[:len(lit)-1]
	}
	for len(lit) > 0 && isSpace(lit[0]) {
		lit = lit[1:]
	}
	if len(lit) < 2 || lit[0] != '"' {
		return "", false
	}
	body := lit[1 : len(lit)-1]
	i := 0
	for i < len(body) && body[i] != '\\' {
		i++
	}
	if i == len(body) {
		return string(body), true
	}
	b := make([]byte, i, len(body))
	copy(b, body)
	for i < len(body) {
		c := body[i]
		if c != '\\' {
			j := i + 1
			for j < len(body) && body[j] != '\\' {
				j++
			}
			b = append(b, body[i:j]...)
			i = j
			continue
		}
		i++
		switch e := body[i]; e {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r := hex4(body[i+1:])
			i += 4
			if utf16.IsSurrogate(r) {
				// A pair only with a \u escape right after, as in
				// encoding/json; a lone half becomes U+FFFD.
				if i+6 < len(body) && body[i+1] == '\\' && body[i+2] == 'u' {
					if d := utf16.DecodeRune(r, hex4(body[i+3:])); d != utf8.RuneError {
						r = d
						i += 6
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			}
			b = utf8.AppendRune(b, r)
		default: // '"', '\\', '/'
			b = append(b, e)
		}
		i++
	}
	return string(b), true
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// hex4 decodes the four hex digits at the start of b (valid JSON).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		default:
			c = c - 'A' + 10
		}
		r = r<<4 | rune(c)
	}
	return r
}
