package wasmcp

import (
	"encoding/json"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// This file writes tool results without reflection, byte for byte as
// marshal (encoding/json without HTML escaping) writes them. Anything
// beyond text blocks and raw structured content goes through marshal, and
// any error sends the whole result back to marshal, for its message.

// appendResult appends r as marshal would; ok is false if marshal must be
// used instead.
func appendResult(dst []byte, r *Result) (out []byte, ok bool) {
	dst = append(dst, `{"content":[`...)
	for i := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if dst, ok = appendContent(dst, &r.Content[i]); !ok {
			return nil, false
		}
	}
	dst = append(dst, ']')
	if r.StructuredContent != nil {
		dst = append(dst, `,"structuredContent":`...)
		if dst, ok = appendAny(dst, r.StructuredContent); !ok {
			return nil, false
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if len(r.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		if dst, ok = appendAny(dst, r.Meta); !ok {
			return nil, false
		}
	}
	return append(dst, '}'), true
}

// appendContent appends one content block.
func appendContent(dst []byte, c *Content) ([]byte, bool) {
	if c.Type == TypeText && c.Annotations == nil && c.Meta == nil {
		dst = append(dst, `{"type":"text","text":`...)
		dst = jsonscan.AppendString(dst, c.Text)
		return append(dst, '}'), true
	}
	b, err := c.MarshalJSON()
	if err != nil {
		return nil, false
	}
	return append(dst, b...), true
}

// appendAny appends v: a json.RawMessage compacted, anything else with
// marshal.
func appendAny(dst []byte, v any) ([]byte, bool) {
	if raw, ok := v.(json.RawMessage); ok && raw != nil {
		if !jsonscan.Valid(raw) {
			return nil, false
		}
		return appendCompact(dst, raw), true
	}
	b, err := marshal(v)
	if err != nil {
		return nil, false
	}
	return append(dst, b...), true
}

// appendCompact appends the valid JSON src without insignificant space.
func appendCompact(dst, src []byte) []byte {
	start, inString := 0, false
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, src[start:i]...)
			start = i + 1
		}
	}
	return append(dst, src[start:]...)
}
