package schema

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

const weather = `{
  "type": "object",
  "properties": {
    "city": {"type": "string", "minLength": 1, "x-mcp-header": "City"},
    "days": {"type": "integer", "minimum": 1, "maximum": 16},
    "units": {"enum": ["metric", "imperial"]},
    "tags": {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}, "maxItems": 3},
    "when": {"type": "object", "properties": {"from": {"type": "string"}}, "required": ["from"], "additionalProperties": false}
  },
  "required": ["city"],
  "x-unknown-keyword": {"anything": true}
}`

func TestValidate(t *testing.T) {
	s, err := Compile([]byte(weather), &Options{Root: "arguments"})
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	tests := []struct {
		name     string
		instance string
		want     string // "" means valid
	}{
		{name: "valid", instance: `{"city":"Paris","days":3,"units":"metric","tags":["a"],"when":{"from":"now"}}`},
		{name: "big integer exact", instance: `{"city":"x","days":16.0}`},
		{name: "missing and range", instance: `{"days": 17}`,
			want: "arguments.city: missing required property; arguments.days: must be <= 16"},
		{name: "type", instance: `{"city": 3, "days": 1.5}`,
			want: "arguments.city: must be a string, got number; arguments.days: must be an integer, got number"},
		{name: "enum", instance: `{"city":"x","units":"kelvin"}`,
			want: `arguments.units: must be one of "metric", "imperial"`},
		{name: "array items and size", instance: `{"city":"x","tags":["ok","Bad","c","d"]}`,
			want: `arguments.tags: must have at most 3 items, got 4; arguments.tags[1]: must match the pattern "^[a-z]+$"`},
		{name: "nested object", instance: `{"city":"x","when":{"to":"y"}}`,
			want: "arguments.when.from: missing required property; arguments.when.to: unknown property, not allowed by the schema"},
		{name: "root type", instance: `"Paris"`, want: "arguments: must be an object, got string"},
		{name: "min length", instance: `{"city":""}`, want: "arguments.city: must be at least 1 characters long, got 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Validate([]byte(tt.instance))
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate(%s) = %v, want nil", tt.instance, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("Validate(%s) = %v (%T), want *ValidationError", tt.instance, err, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Validate(%s)\n got %s\nwant %s", tt.instance, got, tt.want)
			}
		})
	}
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		instance string
		want     string
	}{
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer","minimum":5}]}`, `3`,
			"value: does not match any of the allowed alternatives (must be a string, got number | must be >= 5)"},
		{"oneOf many", `{"oneOf":[{"type":"integer"},{"minimum":0}]}`, `3`,
			"value: matches 2 of the alternatives (oneOf), must match exactly one"},
		{"const", `{"const":"yes"}`, `"no"`, `value: must be "yes"`},
		{"exclusive", `{"exclusiveMinimum":0,"exclusiveMaximum":1.5}`, `2`, "value: must be < 1.5"},
		{"multipleOf", `{"multipleOf":0.5}`, `0.3`, "value: must be a multiple of 0.5"},
		{"false property", `{"properties":{"x":false}}`, `{"x":1}`, "value.x: is not allowed here"},
		{"not", `{"not":{"type":"null"}}`, `null`, `value: must not match the schema under "not"`},
		{"odd keys", `{"properties":{"a b":{"type":"string"}}}`, `{"a b":1}`, `value["a b"]: must be a string, got number`},
		{"draft-07", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","required":["a"],"additionalProperties":false}`, `{"b":1}`,
			"value.a: missing required property; value.b: unknown property, not allowed by the schema"},
		{"draft-07 format asserted", `{"$schema":"http://json-schema.org/draft-07/schema#","format":"email"}`, `"nope"`,
			"value: must be a valid email"},
		{"local ref", `{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, `{"a":"x"}`,
			"value.a: must be an integer, got string"},
		{"min/max properties", `{"minProperties":2}`, `{}`, "value: must have at least 2 properties, got 0"},
		{"dependentRequired", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, `value.b: missing property, required when "a" is present`},
		{"draft-07 dependencies", `{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}`, `{"a":1}`, `value.b: missing property, required when "a" is present`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Compile([]byte(tt.schema), nil)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			err = s.Validate([]byte(tt.instance))
			if err == nil || err.Error() != tt.want {
				t.Errorf("Validate(%s)\n got %v\nwant %s", tt.instance, err, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		opts   *Options
		want   string
	}{
		{"not json", `{"type":`, nil, "schema: invalid JSON"},
		{"trailing", `{} {}`, nil, "schema: invalid JSON: data after the top-level value"},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, nil, `schema: reference to "https://example.com/s.json": external references are not allowed`},
		{"relative ref", `{"properties":{"a":{"$ref":"other.json#/x"}}}`, nil, "external references are not allowed"},
		{"file ref", `{"$ref":"file:///etc/passwd"}`, nil, "external references are not allowed"},
		{"unknown meta-schema", `{"$schema":"https://example.com/meta"}`, nil, `schema: unsupported $schema "https://example.com/meta"`},
		{"missing local ref", `{"$ref":"#/$defs/nope"}`, nil, "schema:"},
		{"invalid keyword value", `{"type":"strng"}`, nil, "schema: not a valid JSON Schema"},
		{"bad regex", `{"pattern":"("}`, nil, "schema:"},
		{"too big", `{"description":"` + strings.Repeat("x", 100) + `"}`, &Options{MaxSchemaBytes: 50}, "bytes is over the limit of 50"},
		{"too deep", strings.Repeat(`{"items":`, 10) + `{}` + strings.Repeat(`}`, 10), &Options{MaxDepth: 5}, "nested 11 levels deep"},
		{"too many nodes", `{"enum":[1,2,3,4,5,6,7,8,9,10]}`, &Options{MaxNodes: 5}, "values, over the limit of 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile([]byte(tt.schema), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compile(%s) = %v, want an error containing %q", tt.schema, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("Compile error spans lines: %q", err)
			}
		})
	}
}

func TestCompileAcceptsMCPSchemas(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","additionalProperties":false}`,
		`{"type":"object"}`,
		`true`,
		`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"$defs":{"a":{"type":"string"}}}`,
		`{"$id":"https://example.com/root.json","$defs":{"a":{"$id":"a.json","type":"string"}},"properties":{"x":{"$ref":"a.json"}}}`,
	} {
		if _, err := Compile([]byte(s), nil); err != nil {
			t.Errorf("Compile(%s) = %v", s, err)
		}
	}
}

func TestLimits(t *testing.T) {
	s, err := Compile([]byte(`{}`), &Options{MaxDepth: 3, MaxProblems: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte(`[[[[1]]]]`)); err == nil || !strings.Contains(err.Error(), "nested 4 levels deep") {
		t.Errorf("deep instance: %v", err)
	}
	if err := s.Validate([]byte(`{`)); err == nil || !strings.Contains(err.Error(), "value: invalid JSON") {
		t.Errorf("bad instance: %v", err)
	}
	s, err = Compile([]byte(`{"required":["a","b","c","d"]}`), &Options{MaxProblems: 2})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate([]byte(`{}`))
	want := "value.a: missing required property; value.b: missing required property; and 2 more"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestConcurrent(t *testing.T) {
	s, err := Compile([]byte(weather), nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				err := s.Validate([]byte(fmt.Sprintf(`{"city":"c","days":%d}`, i+j)))
				if (i+j >= 1 && i+j <= 16) != (err == nil) {
					t.Errorf("days=%d: %v", i+j, err)
				}
			}
		}(i)
	}
	wg.Wait()
}

func TestCostBounds(t *testing.T) {
	// Two recursive branches per level: the cost doubles with depth.
	s, err := Compile([]byte(`{"$defs":{"n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/n"},"minItems":5},{"type":"array","items":{"$ref":"#/$defs/n"}}]}},"$ref":"#/$defs/n"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	shallow := strings.Repeat("[", 5) + "1" + strings.Repeat("]", 5)
	if err := s.Validate([]byte(shallow)); err == nil || len(err.Error()) > 400 {
		t.Errorf("shallow instance: %v", err)
	}
	deep := strings.Repeat("[", 30) + "1" + strings.Repeat("]", 30)
	if err := s.Validate([]byte(deep)); err == nil || !strings.Contains(err.Error(), "cost grows too fast") {
		t.Errorf("deep instance: %v, want a refusal", err)
	}

	// A diamond of references: 2^30 evaluations at one level.
	var defs []string
	for i := 0; i < 30; i++ {
		defs = append(defs, fmt.Sprintf(`"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]}`, i, i+1, i+1))
	}
	defs = append(defs, `"d30":{"type":"string"}`)
	if _, err := Compile([]byte(`{"$defs":{`+strings.Join(defs, ",")+`},"$ref":"#/$defs/d0"}`), nil); err == nil || !strings.Contains(err.Error(), "too expensive") {
		t.Errorf("diamond schema: %v, want a refusal", err)
	}

	// A linear recursive schema (a tree) is fine at any allowed depth.
	tree, err := Compile([]byte(`{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	inst := strings.Repeat(`{"kids":[`, 20) + strings.Repeat(`]}`, 20)
	if err := tree.Validate([]byte(inst)); err != nil {
		t.Errorf("tree: %v", err)
	}

	// Total cost: many values times the per-value cost.
	s, err = Compile([]byte(`{"type":"array","items":{"type":"integer"}}`), &Options{MaxCost: 100})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate([]byte("[" + strings.Repeat("1,", 200) + "1]")); err == nil || !strings.Contains(err.Error(), "too large to validate") {
		t.Errorf("large instance: %v, want a refusal", err)
	}
}

// TestLevelCosts pins the cost model's graph: for each family of keywords
// (same value or children; one schema, an array or a map of them; $defs
// walked without an edge) the estimated evaluations per depth.
func TestLevelCosts(t *testing.T) {
	tests := []struct {
		name, schema string
		want         []float64
	}{
		{"leaf", `{"type":"string"}`, []float64{1, 0, 0, 0, 0}},
		{"same single", `{"not":{"type":"string"},"if":{},"then":{},"else":{}}`, []float64{5, 0, 0, 0, 0}},
		{"same single array value", `{"not":[{},{}]}`, []float64{2, 0, 0, 0, 0}},
		{"same array", `{"allOf":[{},{}],"anyOf":[{}],"oneOf":[{},{},{}]}`, []float64{7, 0, 0, 0, 0}},
		{"same array map value", `{"anyOf":{"a":{}}}`, []float64{1, 0, 0, 0, 0}},
		{"same map objects only", `{"dependentSchemas":{"a":{},"b":true},"dependencies":{"c":["d"],"e":{}}}`, []float64{3, 0, 0, 0, 0}},
		{"kid single", `{"additionalProperties":{},"propertyNames":{},"items":{},"contains":{}}`, []float64{1, 4, 0, 0, 0}},
		{"kid single array value", `{"additionalProperties":[{},{}]}`, []float64{1, 0, 0, 0, 0}},
		{"kid array", `{"prefixItems":[{},{}],"items":[{},{},{}]}`, []float64{1, 5, 0, 0, 0}},
		{"kid map all values", `{"properties":{"a":{},"b":true},"patternProperties":{"x":{"items":{}}}}`, []float64{1, 3, 1, 0, 0}},
		{"defs walked, no edge", `{"$defs":{"a":{"allOf":[{},{}]}}}`, []float64{1, 0, 0, 0, 0}},
		{"ref into defs", `{"$defs":{"a":{"allOf":[{},{}]}},"items":{"$ref":"#/$defs/a"}}`, []float64{1, 4, 0, 0, 0}},
		{"anchor and id", `{"$defs":{"a":{"$anchor":"x","items":{}},"b":{"$id":"urn:b","anyOf":[{},{}]}},"$ref":"#x","items":{"$ref":"urn:b"}}`, []float64{2, 5, 0, 0, 0}},
		{"recursive", `{"anyOf":[{"items":{"$ref":"#"}},{"items":{"$ref":"#"}}]}`, []float64{3, 8, 16, 32, 64}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var doc any
			if err := json.Unmarshal([]byte(tc.schema), &doc); err != nil {
				t.Fatal(err)
			}
			got := levelCosts(doc, 4, 1e6)
			if !slices.Equal(got, tc.want) {
				t.Errorf("levelCosts = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMeasure: the nesting depth and value count the size limits use.
func TestMeasure(t *testing.T) {
	tests := []struct {
		json          string
		depth, values int
	}{
		{`1`, 0, 1},
		{`{}`, 1, 1},
		{`[]`, 1, 1},
		{`[1,2,3]`, 1, 4},
		{`{"a":1,"b":[true,{"c":null}]}`, 3, 6},
		{`[[[[]]],{"x":[1]}]`, 4, 7},
	}
	for _, tc := range tests {
		var v any
		if err := json.Unmarshal([]byte(tc.json), &v); err != nil {
			t.Fatal(err)
		}
		if d, n := measure(v); d != tc.depth || n != tc.values {
			t.Errorf("measure(%s) = %d, %d; want %d, %d", tc.json, d, n, tc.depth, tc.values)
		}
	}
}

// TestAnyObjectFastPath: schemas that accept every object skip the
// validator but answer exactly as it would on objects and non-objects.
func TestAnyObjectFastPath(t *testing.T) {
	tests := []struct {
		schema    string
		anyObject bool
	}{
		{`{"type":"object"}`, true},
		{`{"type":"object","additionalProperties":true,"properties":{},"title":"x","x-foo":1}`, true},
		{`{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","required":[]}`, true},
		{`{"type":"object","additionalProperties":false}`, false},
		{`{"type":"object","properties":{"a":{"type":"string"}}}`, false},
		{`{"type":"object","minProperties":1}`, false},
		{`{}`, false},
	}
	for _, tc := range tests {
		s, err := Compile([]byte(tc.schema), &Options{Root: "arguments"})
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		if s.anyObject != tc.anyObject {
			t.Errorf("%s: anyObject = %v, want %v", tc.schema, s.anyObject, tc.anyObject)
		}
		for _, inst := range []string{`{}`, `{"a":1}`, ` {"b":[1,2]} `, `[]`, `"x"`, `1`, `null`, `{`} {
			fast := s.Validate([]byte(inst))
			if inst == `{` {
				if fast == nil {
					t.Errorf("%s: invalid JSON accepted", tc.schema)
				}
				continue
			}
			slow := s.ValidateValue(mustDecode(inst))
			if (fast == nil) != (slow == nil) {
				t.Errorf("%s on %s: Validate %v, ValidateValue %v", tc.schema, inst, fast, slow)
			}
		}
	}
}

func mustDecode(s string) any {
	v, err := decode([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}
