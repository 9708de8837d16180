package schema

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
)

// fastSchemas are schemas the fast path must have a plan for; the
// differential tests and FuzzFastValidate run instances against them.
var fastSchemas = []string{
	toolSchema,
	weather,
	`{"type":"object","properties":{
		"a":{"type":"number","exclusiveMinimum":-1.5,"maximum":1e3},
		"b":{"type":["integer","null"],"minimum":-10,"exclusiveMaximum":10},
		"c":{"enum":[1,2.5,"x",null,true,[1],{"a":1}]},
		"d":{"const":0},
		"e":{"type":"integer","minimum":0.5,"maximum":12345678901234567890123}},
	  "additionalProperties":{"type":"string","maxLength":3}}`,
	`{"properties":{
		"s":{"type":"string","minLength":2,"maxLength":4,"pattern":"^[a-zé\\n]+$"},
		"e":{"enum":["a\"b","é","\u00e9x","😀"]},
		"f":{"format":"email","type":"string","title":"F","default":"x","examples":["a@b"]}},
	  "required":["s","zz"],"$comment":"c"}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{
		"n":{"type":"integer","exclusiveMaximum":5},
		"l":{"type":"array","items":{"type":"number"},"maxItems":2,"minItems":1}},
	  "additionalProperties":false}`,
	`{"$schema":"http://json-schema.org/draft-04/schema#","properties":{"n":{"type":"number","maximum":5,"exclusiveMaximum":true}}}`,
	`{"type":["string","number"],"minLength":1,"minimum":0}`,
	`{"properties":{"a":true,"b":false,"o":{"type":"object"},"r":{"type":"array"}},"additionalProperties":false}`,
	`{"type":"object","required":["p0","p13"],"properties":{` + manyProps(14) + `}}`,
	// From examples/rust-dates and examples/go-text.
	`{"type":"object","properties":{"timestamp":{"type":"number"},"unit":{"enum":["s","ms"],"default":"s"},"offset":{"type":"string"}},"required":["timestamp"]}`,
	`{"type":"object","properties":{"named":{"type":"object","additionalProperties":{"type":"string"}}}}`,
	`{"$schema":"https://json-schema.org/draft/2020-12/schema","$id":"https://example.com/t","$defs":{"x":{"type":"string"}},
	  "type":"object","properties":{"k":{"const":"v"},"t":{"type":"array","items":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}}}`,
}

func manyProps(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"type":"integer","maximum":%d}`, i, i)
	}
	return b.String()
}

// slowSchemas are schemas the fast path leaves to jsonschema.
var slowSchemas = []string{
	`{"type":"object"}`, // the anyObject fast path instead
	`{"anyOf":[{"type":"string"},{"type":"integer"}]}`,
	`{"properties":{"a":{"$ref":"#/$defs/a"}},"$defs":{"a":{"type":"string"}}}`,
	`{"properties":{"a":{"type":"number","multipleOf":0.5}}}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"a":{"type":"string","format":"email"}}}`,
	`{"patternProperties":{"^x":{"type":"string"}}}`,
	`{"properties":{"a":{"type":"string","nullable":true}}}`,
	`{"type":"object","minProperties":1}`,
	`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}]}`,
	`{"type":"array","uniqueItems":true}`,
	`{"properties":{"a":{"not":{"type":"null"}}}}`,
	`{"type":"object","properties":{"a":{"type":"string"}},"dependentRequired":{"a":["b"]}}`,
	`{"properties":{"a":{"properties":{"b":{"$schema":"https://json-schema.org/draft/2020-12/schema"}}}}}`,
	`{"type":"object","unevaluatedProperties":false}`,
	`{"contentMediaType":"application/json"}`,
}

func TestFastPlan(t *testing.T) {
	for _, src := range fastSchemas {
		if s := mustCompile(t, src); s.plan == nil {
			t.Errorf("no fast plan for %s", src)
		}
	}
	for _, src := range slowSchemas {
		if s := mustCompile(t, src); s.plan != nil {
			t.Errorf("fast plan for %s", src)
		}
	}
}

func mustCompile(t testing.TB, src string) *Schema {
	t.Helper()
	s, err := Compile([]byte(src), &Options{Root: "arguments"})
	if err != nil {
		t.Fatalf("Compile(%s): %v", src, err)
	}
	return s
}

// checkFast fails when the fast path accepts an instance the slow path
// rejects, and reports whether the fast path accepted it.
func checkFast(t testing.TB, s *Schema, src string, inst []byte) bool {
	t.Helper()
	if s.plan == nil || !s.fastValid(inst) {
		return false
	}
	v, err := decode(inst)
	if err == nil {
		err = s.ValidateValue(v)
	}
	if err != nil {
		t.Fatalf("fast path accepts %q against %s; slow path: %v", inst, src, err)
	}
	return true
}

func TestFastValidate(t *testing.T) {
	tests := []struct {
		schema int // index in fastSchemas
		inst   string
		fast   bool // the fast path accepts it (else the slow path decides)
	}{
		{0, toolArgs, true},
		{0, ` { "city" : "P" } `, true},
		{0, `{"city":"","days":3}`, false},          // minLength
		{0, `{"city":"x","days":17}`, false},        // maximum
		{0, `{"city":"x","days":16.0}`, true},       // 16.0 is an integer
		{0, `{"city":"x","days":1.6e1}`, true},      // so is 1.6e1
		{0, `{"city":"x","days":1.5}`, false},       // not an integer
		{0, `{"city":"x","days":0.16e2}`, true},     // and 0.16e2
		{0, `{"city":"x","days":1e10000}`, false},   // huge exponent: slow path
		{0, `{"city":"x","units":"kelvin"}`, false}, // enum
		{0, `{"city":"x","other":1}`, false},        // additionalProperties false
		{0, `{"city":"x","\u0064ays":3}`, false},    // escaped key: slow path
		{0, `{"days":3}`, false},                    // required
		{0, `{"city":"x","city":3}`, false},         // duplicate, one invalid
		{0, `{"city":3,"city":"x"}`, false},         // slow path: last wins, valid
		{0, `{"city":"x"} x`, false},                // invalid JSON
		{0, "{\"city\":\"\xff\"}", false},           // invalid UTF-8
		{0, `[]`, false},                            // not an object
		{1, `{"city":"Paris","days":3,"units":"metric","tags":["a"],"when":{"from":"now"}}`, true},
		{1, `{"city":"x","tags":["ok","Bad"]}`, false}, // pattern
		{1, `{"city":"x","when":{"from":"a","to":1}}`, false},
		{1, `{"city":"x","extra":{"deep":[[[1]]]}}`, true},
		{2, `{"a":-1.4999,"b":null,"c":2.50,"d":-0,"e":1.0,"z":"abc"}`, true},
		{2, `{"a":-1.5}`, false},
		{2, `{"a":1000.0000}`, true},
		{2, `{"a":1e3}`, true},
		{2, `{"a":1000.0001}`, false},
		{2, `{"b":10}`, false},
		{2, `{"b":9.00}`, true},
		{2, `{"b":-10}`, true},
		{2, `{"c":[1]}`, false}, // composite enum member: slow path (valid)
		{2, `{"c":"x"}`, true},
		{2, `{"c":false}`, false},
		{2, `{"d":0.0e5}`, true},
		{2, `{"e":12345678901234567890123}`, true},
		{2, `{"e":12345678901234567890124}`, false},
		{2, `{"e":0}`, false},
		{2, `{"z":"abcd"}`, false},
		{2, `{"z":"a\u00e9\n"}`, true},
		{2, `{"z":"\ud83d\ude00xy"}`, true},  // a pair is one code point
		{2, `{"z":"\ud83dxyz"}`, false},      // a lone surrogate is one too
		{2, `{"z":"\ud83d\ud83dxy"}`, false}, // two lone surrogates
		{3, `{"s":"ab","zz":1}`, true},
		{3, `{"s":"ab"}`, false},
		{3, `{"s":"é\n","zz":1}`, true},
		{3, `{"s":"\u00e9\n","zz":1}`, true},
		{3, `{"s":"abcde","zz":1}`, false},
		{3, `{"s":"AB","zz":1}`, false},
		{3, `{"s":"ab","zz":1,"e":"a\"b"}`, true},
		{3, `{"s":"ab","zz":1,"e":"\u00e9x"}`, true},
		{3, `{"s":"ab","zz":1,"e":"\ud83d\ude00"}`, true},
		{3, `{"s":"ab","zz":1,"e":"ab"}`, false},
		{3, `{"s":"ab","zz":1,"f":"not an email"}`, true}, // format is an annotation
		{3, `"anything"`, true},
		{4, `{"n":4,"l":[1,2.5]}`, true},
		{4, `{"n":5}`, false},
		{4, `{"l":[]}`, false},
		{4, `{"l":[1,2,3]}`, false},
		{4, `{"l":["x"]}`, false},
		{5, `{"n":4.9}`, true},
		{5, `{"n":5}`, false},
		{6, `"x"`, true},
		{6, `""`, false},
		{6, `0`, true},
		{6, `-0.1`, false},
		{6, `null`, false},
		{7, `{"a":[{}],"o":{"x":[]},"r":[1,{"y":2}]}`, true},
		{7, `{"b":1}`, false},
		{7, `{"o":[]}`, false},
		{8, `{"p0":0,"p13":13,"p7":7}`, true},
		{8, `{"p0":0,"p13":14}`, false},
		{8, `{"p0":0}`, false},
		{9, `{"timestamp":1.7e9,"unit":"ms"}`, true},
		{9, `{"unit":"ms"}`, false},
		{10, `{"named":{"a":"x","b":"y"}}`, true},
		{10, `{"named":{"a":1}}`, false},
		{11, `{"k":"v","t":[{"x":1},{"x":2,"y":"z"}]}`, true},
		{11, `{"k":"w"}`, false},
		{11, `{"t":[{"y":1}]}`, false},
	}
	compiled := make([]*Schema, len(fastSchemas))
	for i, src := range fastSchemas {
		compiled[i] = mustCompile(t, src)
	}
	for _, tt := range tests {
		s := compiled[tt.schema]
		inst := []byte(tt.inst)
		if got := checkFast(t, s, fastSchemas[tt.schema], inst); got != tt.fast {
			t.Errorf("schema %d, %s: fast path accepts = %v, want %v", tt.schema, tt.inst, got, tt.fast)
		}
		// Validate answers as the slow path does, errors included.
		want := "<nil>"
		if v, err := decode(inst); err != nil {
			want = "invalid JSON"
		} else if err := s.ValidateValue(v); err != nil {
			want = err.Error()
		}
		got := fmt.Sprint(s.Validate(inst))
		if got != want && !(want == "invalid JSON" && strings.Contains(got, want)) {
			t.Errorf("schema %d, %s: Validate = %s, slow path %s", tt.schema, tt.inst, got, want)
		}
	}
}

// TestFastLimits: the fast path keeps the depth and cost limits.
func TestFastLimits(t *testing.T) {
	s, err := Compile([]byte(`{"properties":{"a":{"type":"array"}}}`), &Options{MaxDepth: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.plan == nil {
		t.Fatal("no plan")
	}
	if err := s.Validate([]byte(`{"a":[[1]]}`)); err != nil {
		t.Errorf("depth 3: %v", err)
	}
	if err := s.Validate([]byte(`{"a":[[[1]]]}`)); err == nil || !strings.Contains(err.Error(), "nested 4 levels deep") {
		t.Errorf("depth 4: %v", err)
	}
	s, err = Compile([]byte(`{"type":"array","items":{"type":"integer"}}`), &Options{MaxCost: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte("[" + strings.Repeat("1,", 98) + "1]")); err != nil {
		t.Errorf("99 items: %v", err)
	}
	if err := s.Validate([]byte("[" + strings.Repeat("1,", 200) + "1]")); err == nil || !strings.Contains(err.Error(), "too large to validate") {
		t.Errorf("large instance: %v, want a refusal", err)
	}
}

// TestDecimal compares decimals with big.Rat.
func TestDecimal(t *testing.T) {
	nums := []string{"0", "-0", "0.0", "1", "-1", "1.0", "10", "1e1", "0.1e2", "100e-1", "-1.5", "-1.50",
		"1.5e-3", "0.0015", "15e-4", "123456789012345678901234567890", "1e-1000", "-1e1000", "9.99", "10.001",
		"0.000", "1E+2", "1e+0", "2.5", "25e-1", "3"}
	for _, a := range nums {
		x, ok := parseDecimal([]byte(a))
		if !ok {
			t.Fatalf("parseDecimal(%s) failed", a)
		}
		ra, _ := new(big.Rat).SetString(a)
		if x.isInt() != ra.IsInt() {
			t.Errorf("isInt(%s) = %v", a, x.isInt())
		}
		for _, b := range nums {
			y, _ := parseDecimal([]byte(b))
			rb, _ := new(big.Rat).SetString(b)
			if got, want := compareDecimal(&x, &y), ra.Cmp(rb); got != want {
				t.Errorf("compare(%s, %s) = %d, want %d", a, b, got, want)
			}
		}
		if r, ok := ratDecimal(ra); !ok || compareDecimal(&r, &x) != 0 {
			t.Errorf("ratDecimal(%s) = %v %v", a, r, ok)
		}
	}
	if _, ok := parseDecimal([]byte("1e1001")); ok {
		t.Error("huge exponent accepted")
	}
}

func TestRuneCount(t *testing.T) {
	for _, s := range []string{``, `abc`, `é😀`, `\n\t\"\\\/`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`,
		`\ud83d\u0041`, `\ud83d\ud83d\ude00`, `x\ud83d\ude00y`} {
		var want string
		if err := jsonUnmarshalString(`"`+s+`"`, &want); err != nil {
			t.Fatal(err)
		}
		if got := runeCount([]byte(s)); got != len([]rune(want)) {
			t.Errorf("runeCount(%s) = %d, want %d", s, got, len([]rune(want)))
		}
	}
}

func jsonUnmarshalString(lit string, s *string) error {
	v, err := decode([]byte(lit))
	if err != nil {
		return err
	}
	*s = v.(string)
	return nil
}

// FuzzFastValidate is a differential test: whenever the fast path accepts
// an instance, the decoder and jsonschema accept it too.
func FuzzFastValidate(f *testing.F) {
	seeds := []string{toolArgs, `{"city":"x","days":16.0}`, `{"a":1e3,"b":null,"c":2.5,"z":"\ud83d\ude00"}`,
		`{"s":"é\n","zz":1,"e":"a\"b"}`, `{"n":4,"l":[1,2.5]}`, `{"n":4.9}`, `"x"`, `{"a":[{}],"o":{"x":[]}}`,
		`{"p0":0,"p13":13}`, `{"k":"v","t":[{"x":1}]}`, `{"city":3,"city":"x"}`, `{"e":12345678901234567890123}`}
	for i, inst := range seeds {
		f.Add(uint8(i), []byte(inst))
	}
	schemas := make([]*Schema, len(fastSchemas))
	for i, src := range fastSchemas {
		schemas[i] = mustCompile(f, src)
	}
	f.Fuzz(func(t *testing.T, which uint8, inst []byte) {
		i := int(which) % len(schemas)
		checkFast(t, schemas[i], fastSchemas[i], inst)
	})
}

// FuzzFastPlan fuzzes schemas too: whenever a schema gets a plan and the
// fast path accepts an instance, jsonschema accepts it too.
func FuzzFastPlan(f *testing.F) {
	for i, src := range fastSchemas {
		f.Add([]byte(src), []byte(toolArgs))
		f.Add([]byte(src), []byte(`{"a":1,"b":"x","c":[1],"d":{}}`))
		f.Add([]byte(src), []byte(fmt.Sprintf(`{"n":%d,"s":"ab","zz":null}`, i)))
	}
	f.Add([]byte(`{"properties":{"a":{"const":1.0}}}`), []byte(`{"a":1}`))
	f.Add([]byte(`{"items":{"enum":[0,"",null]},"minItems":1}`), []byte(`[0,"",null]`))
	f.Fuzz(func(t *testing.T, src, inst []byte) {
		s, err := Compile(src, &Options{MaxNodes: 2000})
		if err != nil || s.plan == nil {
			return
		}
		checkFast(t, s, string(src), inst)
	})
}

// gen builds schemas the fast path has plans for, and instances for them,
// from fuzzer bytes, mixing in numbers and strings near the edges.
type gen struct {
	data []byte
	b    strings.Builder
}

var (
	genNumbers = []string{"0", "-0", "1", "1.0", "1.5", "-1.5", "1e2", "100", "1E-2", "0.01", "16", "16.0", "1.6e1",
		"12345678901234567890", "1e300", "-1e-300", "2.5", "0.5", "3", "-3", "99.999", "1e-1"}
	genStrings = []string{``, `a`, `ab`, `abc`, `é`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `a\nb`, `A`, `a b`, `😀x`,
		`\"`, `1`, `\u0061`, `ab\u0000`}
	genNames    = []string{`a`, `b`, `é`, `a b`}
	genPatterns = []string{`^a`, `^[a-z]*$`, `é`, `^.{2}$`, `\\d`, `^$`, `\\n`, `^\\p{L}+$`}
	genTypes    = []string{"null", "boolean", "number", "integer", "string", "array", "object"}
	genDrafts   = []string{"", "http://json-schema.org/draft-07/schema#", "http://json-schema.org/draft-04/schema#",
		"https://json-schema.org/draft/2019-09/schema", "https://json-schema.org/draft/2020-12/schema"}
)

// next returns the next fuzzer byte, 0 once they run out.
func (g *gen) next() int {
	if len(g.data) == 0 {
		return 0
	}
	c := g.data[0]
	g.data = g.data[1:]
	return int(c)
}

func (g *gen) pick(list []string) string { return list[g.next()%len(list)] }

// schema writes a subschema; draft is the root's $schema ("" for none).
func (g *gen) schema(depth int, draft string) {
	flags := g.next() | g.next()<<8
	if flags&3 == 3 {
		g.b.WriteString([]string{"true", "false"}[flags>>2&1])
		return
	}
	g.b.WriteString(`{"title":"t"`)
	if draft != "" {
		g.b.WriteString(`,"$schema":"` + draft + `"`)
	}
	kw := func(bit int, name string, val func()) {
		if flags&(1<<bit) != 0 {
			g.b.WriteString(`,"` + name + `":`)
			val()
		}
	}
	kw(2, "type", func() {
		if g.next()%3 == 0 {
			g.b.WriteString(`["` + g.pick(genTypes) + `","` + g.pick(genTypes) + `"]`)
		} else {
			g.b.WriteString(`"` + g.pick(genTypes) + `"`)
		}
	})
	kw(3, "enum", func() {
		g.b.WriteString("[")
		for i, n := 0, 1+g.next()%3; i < n; i++ {
			if i > 0 {
				g.b.WriteString(",")
			}
			g.value(1)
		}
		g.b.WriteString("]")
	})
	kw(4, "const", func() { g.value(1) })
	bound := func() { g.b.WriteString(g.pick(genNumbers)) }
	kw(5, "minimum", bound)
	kw(6, "maximum", bound)
	if !strings.Contains(draft, "draft-04") {
		kw(7, "exclusiveMinimum", bound)
		kw(8, "exclusiveMaximum", bound)
	}
	length := func() { g.b.WriteString(fmt.Sprint(g.next() % 4)) }
	kw(9, "minLength", length)
	kw(10, "maxLength", length)
	kw(11, "pattern", func() { g.b.WriteString(`"` + g.pick(genPatterns) + `"`) })
	if depth < 2 {
		kw(12, "items", func() { g.schema(depth+1, "") })
		kw(13, "properties", func() {
			g.b.WriteString("{")
			for i, n := 0, g.next()%4; i < n; i++ {
				if i > 0 {
					g.b.WriteString(",")
				}
				g.b.WriteString(`"` + genNames[i] + `":`)
				g.schema(depth+1, "")
			}
			g.b.WriteString("}")
		})
		kw(14, "additionalProperties", func() { g.schema(depth+1, "") })
	}
	kw(15, "required", func() {
		g.b.WriteString(`["` + g.pick(genNames) + `"]`)
	})
	if g.next()%4 == 0 {
		g.b.WriteString(`,"minItems":1,"maxItems":2,"format":"date"`)
	}
	g.b.WriteString("}")
}

// value writes a JSON value.
func (g *gen) value(depth int) {
	switch c := g.next() % 10; {
	case c < 3:
		g.b.WriteString(g.pick(genNumbers))
	case c < 6:
		g.b.WriteString(`"` + g.pick(genStrings) + `"`)
	case c == 6:
		g.b.WriteString(g.pick([]string{"true", "false", "null"}))
	case c == 7 && depth < 3:
		g.b.WriteString("[")
		for i, n := 0, g.next()%3; i < n; i++ {
			if i > 0 {
				g.b.WriteString(",")
			}
			g.value(depth + 1)
		}
		g.b.WriteString("]")
	default:
		if depth >= 3 {
			g.b.WriteString("{}")
			return
		}
		g.b.WriteString("{")
		for i, n := 0, g.next()%4; i < n; i++ {
			if i > 0 {
				g.b.WriteString(",")
			}
			g.b.WriteString(`"` + g.pick(append(genNames, `\u0061`)) + `":`)
			g.value(depth + 1)
		}
		g.b.WriteString("}")
	}
}

// FuzzFastGenerated is the differential test on generated schemas and
// instances, which nearly always get a plan and are often valid.
func FuzzFastGenerated(f *testing.F) {
	f.Add([]byte{0, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{8, 2, 7, 1, 3})
	f.Add([]byte("schema bytes"), []byte("instance bytes"))
	f.Fuzz(func(t *testing.T, schemaBytes, instBytes []byte) {
		g := &gen{data: schemaBytes}
		g.schema(0, g.pick(genDrafts))
		src := g.b.String()
		s, err := Compile([]byte(src), nil)
		if err != nil || s.plan == nil {
			return
		}
		g = &gen{data: instBytes}
		g.value(0)
		checkFast(t, s, src, []byte(g.b.String()))
	})
}
