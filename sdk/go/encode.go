package wasmcp

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
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
		dst = appendString(dst, c.Text)
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
		if !jsonrpc.Valid(raw) {
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

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string exactly as encoding/json does
// without HTML escaping: \b \f \n \r \t and \u00XX for the other control
// characters, \ufffd for invalid UTF-8, \u2028 and \u2029 escaped.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
