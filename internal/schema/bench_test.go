package schema

import "testing"

// toolSchema is a typical tool inputSchema: an object with a few typed
// properties, some constrained, some required.
const toolSchema = `{
  "type": "object",
  "properties": {
    "city": {"type": "string", "description": "City name", "minLength": 1},
    "days": {"type": "integer", "description": "Forecast length", "minimum": 1, "maximum": 16},
    "units": {"type": "string", "enum": ["metric", "imperial"]},
    "hourly": {"type": "boolean"}
  },
  "required": ["city"],
  "additionalProperties": false
}`

// toolArgs is a valid instance of toolSchema.
const toolArgs = `{"city":"Paris","days":3,"units":"metric","hourly":false}`

// BenchmarkValidate measures validating valid tool arguments against a
// typical tool schema, the work every tools/call does.
func BenchmarkValidate(b *testing.B) {
	s, err := Compile([]byte(toolSchema), &Options{Root: "arguments"})
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(toolArgs)
	b.ReportAllocs()
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if err := s.Validate(args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateInvalid measures invalid arguments against the same
// schema: the path that produces an error message.
func BenchmarkValidateInvalid(b *testing.B) {
	s, err := Compile([]byte(toolSchema), &Options{Root: "arguments"})
	if err != nil {
		b.Fatal(err)
	}
	args := []byte(`{"city":"Paris","days":30,"units":"metric","hourly":false}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(args)))
	for b.Loop() {
		if err := s.Validate(args); err == nil {
			b.Fatal("valid")
		}
	}
}
