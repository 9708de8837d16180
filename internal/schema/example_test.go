package schema_test

import (
	"fmt"

	"github.com/wasmcp/wasmcp/internal/schema"
)

func Example() {
	s, err := schema.Compile([]byte(`{
		"type": "object",
		"properties": {
			"city": {"type": "string"},
			"days": {"type": "integer", "maximum": 16}
		},
		"required": ["city"]
	}`), &schema.Options{Root: "arguments"})
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Validate([]byte(`{"city": "Oslo", "days": 3}`)))
	fmt.Println(s.Validate([]byte(`{"days": 30}`)))
	// Output:
	// <nil>
	// arguments.city: missing required property; arguments.days: must be <= 16
}

func ExampleCompile_externalRef() {
	_, err := schema.Compile([]byte(`{"$ref": "https://example.com/address.json"}`), nil)
	fmt.Println(err)
	// Output:
	// schema: reference to "https://example.com/address.json": external references are not allowed (only references inside the schema, like "#/$defs/x", resolve)
}
