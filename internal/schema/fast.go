package schema

import (
	"encoding/json"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Fast path.
//
// Most tool input schemas are an object of typed properties with a few
// scalar constraints. For those, Compile builds a plan: the same checks
// jsonschema would make, run directly over the instance's bytes. The fast
// path only decides validity: when it accepts, Validate returns nil without
// decoding the instance; when it rejects or has any doubt (an escaped key,
// a number with a huge exponent, a value nested too deeply, ...), Validate
// runs the decoder and jsonschema as before, which give the answer and the
// error text.
//
// A plan is built only from keywords whose semantics it reproduces
// exactly, and it reads their values from the compiled jsonschema.Schema,
// so that they are parsed as the library parses them. Any other keyword
// ($ref, combinators, patternProperties, multipleOf, asserted formats,
// uniqueItems, ...) means no plan.

// Type bits of a plan, one per JSON Schema type name.
const (
	tNull uint8 = 1 << iota
	tBoolean
	tNumber
	tInteger
	tString
	tArray
	tObject
)

// typeBits maps a type name to its bit.
var typeBits = map[string]uint8{
	"null":    tNull,
	"boolean": tBoolean,
	"number":  tNumber,
	"integer": tInteger,
	"string":  tString,
	"array":   tArray,
	"object":  tObject,
}

// plan is a subschema the fast path evaluates. The zero plan accepts every
// value (the schema true or {}).
type plan struct {
	never bool  // the schema false: no value is valid
	types uint8 // allowed types (t* bits); 0 means any

	enum    []literal // when hasEnum, the value must equal one of them
	hasEnum bool
	cnst    *literal // the value must equal it

	// Numbers.
	min, max, exMin, exMax *decimal

	// Strings.
	minLen, maxLen *int
	pattern        *regexp.Regexp

	// Arrays.
	items              *plan // nil: any items
	minItems, maxItems *int

	// Objects.
	props      []property     // properties and required names
	index      map[string]int // name → index in props, when props is long
	required   uint64         // bits of props that must be present
	additional *plan          // additionalProperties; nil: any
}

// property is a name from "properties" or "required".
type property struct {
	name string
	plan *plan // nil: not in "properties", validated by additionalProperties
}

// literal is an enum or const value. Only scalars can be compared on the
// fast path; a composite literal equals no scalar instance.
type literal struct {
	kind byte // as jsonscan.Kind: 'z', 'b', 's', 'n'; 'x' for arrays and objects
	b    bool
	s    string
	n    decimal
}

// maxLinear is the most properties looked up by a linear scan.
const maxLinear = 12

// Keywords a plan allows besides the ones it evaluates: annotations, and
// at the root the ones that only matter to references.
var (
	annotations = map[string]bool{
		"title": true, "description": true, "default": true, "examples": true,
		"$comment": true, "deprecated": true, "readOnly": true, "writeOnly": true,
		"format": true, // only when the compiled schema does not assert it
	}
	evaluated = map[string]bool{
		"type": true, "enum": true, "const": true,
		"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
		"minLength": true, "maxLength": true, "pattern": true,
		"items": true, "minItems": true, "maxItems": true,
		"properties": true, "required": true, "additionalProperties": true,
	}
	rootOnly = map[string]bool{"$schema": true, "$id": true, "$defs": true, "definitions": true}
)

// buildPlan returns the plan for the subschema doc (as decoded JSON) that
// compiled to cs, or false if the fast path cannot evaluate it exactly.
func buildPlan(doc any, cs *jsonschema.Schema, root bool) (*plan, bool) {
	if cs == nil {
		return nil, false
	}
	switch d := doc.(type) {
	case bool:
		if cs.Bool == nil || *cs.Bool != d {
			return nil, false
		}
		return &plan{never: !d}, true
	case map[string]any:
		return objectPlan(d, cs, root)
	}
	return nil, false
}

// objectPlan builds the plan of a subschema written as a JSON object.
func objectPlan(d map[string]any, cs *jsonschema.Schema, root bool) (*plan, bool) {
	for k := range d {
		if !evaluated[k] && !annotations[k] && !(root && rootOnly[k]) && !strings.HasPrefix(k, "x-") {
			return nil, false
		}
	}
	if cs.Bool != nil || cs.Ref != nil || cs.RecursiveRef != nil || cs.DynamicRef != nil ||
		cs.Format != nil || len(cs.Extensions) > 0 || cs.Not != nil || cs.AllOf != nil ||
		cs.AnyOf != nil || cs.OneOf != nil || cs.If != nil || cs.PatternProperties != nil ||
		cs.PrefixItems != nil || cs.MultipleOf != nil || cs.UniqueItems ||
		cs.ContentEncoding != nil || cs.ContentMediaType != nil || cs.ContentSchema != nil ||
		cs.UnevaluatedProperties != nil || cs.UnevaluatedItems != nil {
		return nil, false
	}
	p := &plan{}
	if cs.Types != nil {
		for _, t := range cs.Types.ToStrings() {
			bit, ok := typeBits[t]
			if !ok {
				return nil, false
			}
			p.types |= bit
		}
	}
	if cs.Enum != nil {
		p.hasEnum = true
		for _, v := range cs.Enum.Values {
			l, ok := newLiteral(v)
			if !ok {
				return nil, false
			}
			p.enum = append(p.enum, l)
		}
	}
	if cs.Const != nil {
		l, ok := newLiteral(*cs.Const)
		if !ok {
			return nil, false
		}
		p.cnst = &l
	}
	for _, b := range []struct {
		r   *big.Rat
		dst **decimal
	}{{cs.Minimum, &p.min}, {cs.Maximum, &p.max}, {cs.ExclusiveMinimum, &p.exMin}, {cs.ExclusiveMaximum, &p.exMax}} {
		if b.r == nil {
			continue
		}
		n, ok := ratDecimal(b.r)
		if !ok {
			return nil, false
		}
		*b.dst = &n
	}
	p.minLen, p.maxLen = cs.MinLength, cs.MaxLength
	if cs.Pattern != nil {
		re, ok := cs.Pattern.(*regexp.Regexp)
		if !ok {
			return nil, false
		}
		p.pattern = re
	}

	// Arrays.
	p.minItems, p.maxItems = cs.MinItems, cs.MaxItems
	if items, ok := d["items"]; ok {
		sub := cs.Items2020
		if sub == nil {
			sub, _ = cs.Items.(*jsonschema.Schema)
		}
		if p.items, ok = buildPlan(items, sub, false); !ok {
			return nil, false
		}
	} else if cs.Items != nil || cs.Items2020 != nil || cs.AdditionalItems != nil {
		return nil, false
	}

	// Objects.
	docProps, _ := d["properties"].(map[string]any)
	if len(docProps) != len(cs.Properties) {
		return nil, false
	}
	for name, sub := range cs.Properties {
		sp, ok := buildPlan(docProps[name], sub, false)
		if !ok {
			return nil, false
		}
		p.props = append(p.props, property{name: name, plan: sp})
	}
	for _, name := range cs.Required {
		i := p.lookup(name)
		if i < 0 {
			i = len(p.props)
			p.props = append(p.props, property{name: name})
		}
		if i >= 64 {
			return nil, false
		}
		p.required |= 1 << i
	}
	if len(p.props) > maxLinear {
		p.index = make(map[string]int, len(p.props))
		for i, pr := range p.props {
			p.index[pr.name] = i
		}
	}
	switch a := cs.AdditionalProperties.(type) {
	case nil:
		if _, ok := d["additionalProperties"]; ok {
			return nil, false
		}
	case bool:
		if !a {
			p.additional = &plan{never: true}
		}
	case *jsonschema.Schema:
		sp, ok := buildPlan(d["additionalProperties"], a, false)
		if !ok {
			return nil, false
		}
		p.additional = sp
	default:
		return nil, false
	}
	return p, true
}

// lookup returns the index of the property name in p.props, or -1.
func (p *plan) lookup(name string) int {
	if p.index != nil {
		if i, ok := p.index[name]; ok {
			return i
		}
		return -1
	}
	for i := range p.props {
		if p.props[i].name == name {
			return i
		}
	}
	return -1
}

// lookupBytes is lookup for a raw key without escapes, not allocating.
func (p *plan) lookupBytes(name []byte) int {
	if p.index != nil {
		if i, ok := p.index[string(name)]; ok {
			return i
		}
		return -1
	}
	for i := range p.props {
		if p.props[i].name == string(name) {
			return i
		}
	}
	return -1
}

// newLiteral converts an enum or const value from the compiled schema.
func newLiteral(v any) (literal, bool) {
	switch t := v.(type) {
	case nil:
		return literal{kind: 'z'}, true
	case bool:
		return literal{kind: 'b', b: t}, true
	case string:
		return literal{kind: 's', s: t}, true
	case json.Number:
		n, ok := parseDecimal([]byte(t))
		return literal{kind: 'n', n: n}, ok
	case []any, map[string]any:
		return literal{kind: 'x'}, true
	}
	return literal{}, false
}

// ratDecimal converts a bound from the compiled schema (a number written
// in JSON, so a finite decimal) to a decimal.
func ratDecimal(r *big.Rat) (decimal, bool) {
	prec := r.Denom().BitLen() // 2^a·5^b ≤ denominator: enough digits
	if prec > 4000 || r.Num().BitLen() > 4000 {
		return decimal{}, false
	}
	s := r.FloatString(prec)
	if back, ok := new(big.Rat).SetString(s); !ok || back.Cmp(r) != 0 {
		return decimal{}, false
	}
	return parseDecimal([]byte(s))
}

// validator walks one instance along a plan.
type validator struct {
	s    *Schema
	cost float64 // estimated evaluations so far, as instanceCost counts them
}

// fastValid reports whether the fast path can accept instance against the
// plan. False means invalid or undecided: the slow path decides.
func (s *Schema) fastValid(instance []byte) bool {
	if !jsonscan.Valid(instance) {
		return false
	}
	v := validator{s: s}
	_, ok := v.value(instance, jsonscan.SkipSpace(instance, 0), s.plan, 0)
	return ok && v.cost <= float64(s.opts.MaxCost)
}

// value checks the value at data[i] (valid JSON, no leading space) at
// instance depth k against p (nil: any value), and returns the index just
// past it.
func (v *validator) value(data []byte, i int, p *plan, k int) (int, bool) {
	if k < len(v.s.costs) {
		v.cost += v.s.costs[k]
	}
	if p == nil {
		p = &anyPlan
	}
	if p.never {
		return 0, false
	}
	switch c := data[i]; {
	case c == '{':
		if p.types != 0 && p.types&tObject == 0 || p.hasEnum || p.cnst != nil {
			return 0, false
		}
		return v.object(data, i, p, k)
	case c == '[':
		if p.types != 0 && p.types&tArray == 0 || p.hasEnum || p.cnst != nil {
			return 0, false
		}
		return v.array(data, i, p, k)
	case c == '"':
		end := jsonscan.StringEnd(data, i)
		return end, p.str(data[i+1 : end-1])
	case c == 't' || c == 'f':
		b := c == 't'
		end := i + 5
		if b {
			end = i + 4
		}
		if p.types != 0 && p.types&tBoolean == 0 {
			return 0, false
		}
		return end, p.matches(literal{kind: 'b', b: b})
	case c == 'n':
		if p.types != 0 && p.types&tNull == 0 {
			return 0, false
		}
		return i + 4, p.matches(literal{kind: 'z'})
	default:
		end := jsonscan.NumberEnd(data, i)
		return end, p.number(data[i:end])
	}
}

// anyPlan accepts every value.
var anyPlan plan

// object checks the object at data[i] == '{'.
func (v *validator) object(data []byte, i int, p *plan, k int) (int, bool) {
	if k+1 > v.s.maxDepth {
		return 0, false
	}
	var seen uint64
	i = jsonscan.SkipSpace(data, i+1)
	for data[i] != '}' {
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
		end := jsonscan.StringEnd(data, i)
		key := data[i+1 : end-1]
		i = jsonscan.SkipSpace(data, end)
		i = jsonscan.SkipSpace(data, i+1) // ':'
		sub := p.additional
		if len(p.props) > 0 {
			if hasBackslash(key) {
				return 0, false // the slow path decodes the key
			}
			if j := p.lookupBytes(key); j >= 0 {
				seen |= 1 << j
				if p.props[j].plan != nil {
					sub = p.props[j].plan
				}
			}
		}
		var ok bool
		if i, ok = v.value(data, i, sub, k+1); !ok {
			return 0, false
		}
		i = jsonscan.SkipSpace(data, i)
	}
	return i + 1, seen&p.required == p.required
}

// array checks the array at data[i] == '['.
func (v *validator) array(data []byte, i int, p *plan, k int) (int, bool) {
	if k+1 > v.s.maxDepth {
		return 0, false
	}
	n := 0
	i = jsonscan.SkipSpace(data, i+1)
	for data[i] != ']' {
		if data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
		var ok bool
		if i, ok = v.value(data, i, p.items, k+1); !ok {
			return 0, false
		}
		n++
		i = jsonscan.SkipSpace(data, i)
	}
	if p.minItems != nil && n < *p.minItems || p.maxItems != nil && n > *p.maxItems {
		return 0, false
	}
	return i + 1, true
}

// str checks a string given by the raw bytes between its quotes.
func (p *plan) str(body []byte) bool {
	if p.types != 0 && p.types&tString == 0 {
		return false
	}
	esc := hasBackslash(body)
	if p.minLen != nil || p.maxLen != nil {
		n := runeCount(body)
		if p.minLen != nil && n < *p.minLen || p.maxLen != nil && n > *p.maxLen {
			return false
		}
	}
	if p.pattern == nil && !p.hasEnum && p.cnst == nil {
		return true
	}
	if esc {
		s, ok := jsonscan.String(append(append([]byte{'"'}, body...), '"'))
		if !ok {
			return false
		}
		if p.pattern != nil && !p.pattern.MatchString(s) {
			return false
		}
		return p.matches(literal{kind: 's', s: s})
	}
	if p.pattern != nil && !p.pattern.Match(body) {
		return false
	}
	return p.matchesRaw(body)
}

// matchesRaw is matches for a string without escapes, not allocating.
func (p *plan) matchesRaw(body []byte) bool {
	if p.cnst != nil && (p.cnst.kind != 's' || p.cnst.s != string(body)) {
		return false
	}
	if !p.hasEnum {
		return true
	}
	for i := range p.enum {
		if p.enum[i].kind == 's' && p.enum[i].s == string(body) {
			return true
		}
	}
	return false
}

// matches reports whether the scalar x satisfies p's const and enum.
func (p *plan) matches(x literal) bool {
	if p.cnst != nil && !x.equal(p.cnst) {
		return false
	}
	if !p.hasEnum {
		return true
	}
	for i := range p.enum {
		if x.equal(&p.enum[i]) {
			return true
		}
	}
	return false
}

// equal compares two literals as JSON values (numbers by value).
func (x *literal) equal(y *literal) bool {
	if x.kind != y.kind {
		return false
	}
	switch x.kind {
	case 'z':
		return true
	case 'b':
		return x.b == y.b
	case 's':
		return x.s == y.s
	case 'n':
		return compareDecimal(&x.n, &y.n) == 0
	}
	return false
}

// number checks a number given by its JSON text.
func (p *plan) number(text []byte) bool {
	n, ok := parseDecimal(text)
	if !ok {
		return false
	}
	if p.types != 0 && p.types&tNumber == 0 && (p.types&tInteger == 0 || !n.isInt()) {
		return false
	}
	if p.min != nil && compareDecimal(&n, p.min) < 0 ||
		p.max != nil && compareDecimal(&n, p.max) > 0 ||
		p.exMin != nil && compareDecimal(&n, p.exMin) <= 0 ||
		p.exMax != nil && compareDecimal(&n, p.exMax) >= 0 {
		return false
	}
	if p.hasEnum || p.cnst != nil {
		return p.matches(literal{kind: 'n', n: n})
	}
	return true
}

// decimal is an exact decimal number: ±0.d₁d₂…dₖ × 10^point, where the
// digits d are digits[lead:lead+k] of the concatenation of intPart and
// fracPart (no leading or trailing zeros). k == 0 is zero.
type decimal struct {
	neg               bool
	intPart, fracPart []byte
	lead, k, point    int
}

// maxExponent bounds the exponents the fast path handles; numbers beyond
// it go to the slow path.
const maxExponent = 1000

// parseDecimal parses a JSON number (already validated). It fails on
// exponents over maxExponent.
func parseDecimal(t []byte) (decimal, bool) {
	var n decimal
	i := 0
	if i < len(t) && t[i] == '-' {
		n.neg = true
		i++
	}
	start := i
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n.intPart = t[start:i]
	if i < len(t) && t[i] == '.' {
		i++
		start = i
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		n.fracPart = t[start:i]
	}
	exp := 0
	if i < len(t) && (t[i] == 'e' || t[i] == 'E') {
		i++
		neg := false
		if i < len(t) && (t[i] == '+' || t[i] == '-') {
			neg = t[i] == '-'
			i++
		}
		for ; i < len(t); i++ {
			if t[i] < '0' || t[i] > '9' {
				return decimal{}, false
			}
			exp = exp*10 + int(t[i]-'0')
			if exp > maxExponent {
				return decimal{}, false
			}
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(t) || len(n.intPart) == 0 {
		return decimal{}, false
	}
	total := len(n.intPart) + len(n.fracPart)
	for n.lead < total && n.digit(n.lead) == '0' {
		n.lead++
	}
	end := total
	for end > n.lead && n.digit(end-1) == '0' {
		end--
	}
	n.k = end - n.lead
	n.point = len(n.intPart) - n.lead + exp
	return n, true
}

// digit returns the j-th digit of intPart followed by fracPart.
func (n *decimal) digit(j int) byte {
	if j < len(n.intPart) {
		return n.intPart[j]
	}
	return n.fracPart[j-len(n.intPart)]
}

// isInt reports whether n has no fractional part.
func (n *decimal) isInt() bool { return n.k <= n.point || n.k == 0 }

// compareDecimal returns -1, 0 or +1 as x <, ==, > y.
func compareDecimal(x, y *decimal) int {
	sx, sy := x.sign(), y.sign()
	if sx != sy {
		if sx < sy {
			return -1
		}
		return 1
	}
	if sx == 0 {
		return 0
	}
	m := 0
	switch {
	case x.point != y.point:
		m = 1
		if x.point < y.point {
			m = -1
		}
	default:
		for j := 0; j < x.k && j < y.k; j++ {
			a, b := x.digit(x.lead+j), y.digit(y.lead+j)
			if a != b {
				m = 1
				if a < b {
					m = -1
				}
				break
			}
		}
		if m == 0 && x.k != y.k {
			m = 1
			if x.k < y.k {
				m = -1
			}
		}
	}
	return sx * m
}

// sign returns -1, 0 or +1.
func (n *decimal) sign() int {
	switch {
	case n.k == 0:
		return 0
	case n.neg:
		return -1
	}
	return 1
}

// runeCount returns the number of code points of the decoded string whose
// raw body (between the quotes, valid JSON) is b, decoding escapes as
// encoding/json does: a \u escape is one code point, except a valid
// surrogate pair, which is one for both; invalid surrogates become U+FFFD.
func runeCount(b []byte) int {
	n := 0
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\' && b[i+1] == 'u':
			r := hex4(b[i+2 : i+6])
			i += 6
			if r >= 0xD800 && r < 0xDC00 && i+6 <= len(b) && b[i] == '\\' && b[i+1] == 'u' {
				if r2 := hex4(b[i+2 : i+6]); r2 >= 0xDC00 && r2 < 0xE000 {
					i += 6
				}
			}
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			_, size := utf8.DecodeRune(b[i:])
			i += size
		}
		n++
	}
	return n
}

// hex4 decodes four hex digits (valid JSON escape).
func hex4(h []byte) rune {
	var r rune
	for _, c := range h {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		default:
			r |= rune(c - 'A' + 10)
		}
	}
	return r
}

// hasBackslash reports whether a raw string body has escapes.
func hasBackslash(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}
