package wasmcp

import (
	"bytes"
	"encoding/json"
)

// marshal is json.Marshal without HTML escaping: results are read by
// models and clients, not embedded in HTML, and "\u003c" for "<" in a
// text block's JSON would reach the model as is.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
