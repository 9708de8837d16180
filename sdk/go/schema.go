package wasmcp

// Schema is a JSON Schema object, built with [Object], [String],
// [Integer], [Number], [Boolean], [Array] and [Enum] and refined with
// [Schema.With]. It marshals as a plain JSON object. Any JSON Schema
// keyword can be set; the builder only saves typing.
//
//	wasmcp.Object(
//		wasmcp.Required("city", wasmcp.String("City name")),
//		wasmcp.Optional("days", wasmcp.Integer("Days ahead").With("minimum", 1).With("maximum", 16)),
//	)
type Schema map[string]any

// Property is one property of an [Object] schema: its name, its schema
// and whether it is required.
type Property struct {
	Name     string
	Schema   Schema
	Required bool
}

// Required returns a required object property.
func Required(name string, s Schema) Property { return Property{Name: name, Schema: s, Required: true} }

// Optional returns an optional object property.
func Optional(name string, s Schema) Property { return Property{Name: name, Schema: s} }

// Object returns an object schema with the given properties.
func Object(props ...Property) Schema {
	properties := map[string]any{}
	var required []string
	for _, p := range props {
		properties[p.Name] = p.Schema
		if p.Required {
			required = append(required, p.Name)
		}
	}
	s := Schema{"type": "object", "properties": properties}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

func typed(t, description string) Schema {
	s := Schema{"type": t}
	if description != "" {
		s["description"] = description
	}
	return s
}

// String returns a string schema with a description (may be empty).
func String(description string) Schema { return typed("string", description) }

// Integer returns an integer schema with a description (may be empty).
func Integer(description string) Schema { return typed("integer", description) }

// Number returns a number schema with a description (may be empty).
func Number(description string) Schema { return typed("number", description) }

// Boolean returns a boolean schema with a description (may be empty).
func Boolean(description string) Schema { return typed("boolean", description) }

// Array returns an array schema whose items match items.
func Array(items Schema, description string) Schema {
	s := typed("array", description)
	s["items"] = items
	return s
}

// Enum returns a string schema that only accepts the given values.
func Enum(description string, values ...string) Schema {
	s := typed("string", description)
	s["enum"] = values
	return s
}

// With sets keyword to value and returns s (the map is modified).
func (s Schema) With(keyword string, value any) Schema {
	s[keyword] = value
	return s
}
