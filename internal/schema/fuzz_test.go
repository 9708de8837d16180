package schema

import "testing"

// FuzzValidate compiles arbitrary schemas and validates arbitrary
// instances against them: neither step may panic, and a failure must
// always have a message.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(weather), []byte(`{"city":"x","days":20}`))
	f.Add([]byte(`{"anyOf":[{"type":"string"},{"minimum":1}]}`), []byte(`0`))
	f.Add([]byte(`{"$defs":{"t":{"type":"array","items":{"$ref":"#/$defs/t"}}},"$ref":"#/$defs/t"}`), []byte(`[[[1]]]`))
	f.Add([]byte(`{"$ref":"http://x/y"}`), []byte(`null`))
	f.Add([]byte(`{"properties":{"a b":{"const":1}},"patternProperties":{"^x":false}}`), []byte(`{"a b":2,"xy":1}`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","dependencies":{"a":["b"]}}`), []byte(`{"a":1}`))
	f.Fuzz(func(t *testing.T, schemaJSON, instance []byte) {
		s, err := Compile(schemaJSON, &Options{MaxNodes: 2000})
		if err != nil {
			return
		}
		if err := s.Validate(instance); err != nil && err.Error() == "" {
			t.Fatal("validation error with an empty message")
		}
	})
}
