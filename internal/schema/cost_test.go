package schema

import (
	"encoding/json"
	"slices"
	"testing"
)

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
