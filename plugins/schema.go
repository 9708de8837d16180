package plugins

import (
	"encoding/json"

	"github.com/wasmcp/wasmcp/internal/schema"
)

// validator is a compiled schema that names the validated value in its
// error messages.
type validator = schema.Schema

func compileSchema(raw json.RawMessage, root string) (*validator, error) {
	return schema.Compile(raw, &schema.Options{Root: root})
}
