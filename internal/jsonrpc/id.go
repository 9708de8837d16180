package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// ID is a JSON-RPC request id: a string or a number, kept as its JSON
// literal so that a string id stays a string and a number id keeps every
// digit (no float64 rounding of large ids). String ids are held in one
// canonical encoding, so two spellings of the same string ("ab" and
// "a\u0062") are the same ID. The zero ID means "absent" (or null in an
// error response).
//
// ID is comparable and may be used as a map key.
type ID struct {
	raw string // canonical JSON literal: a quoted string or a number
}

// StringID returns the ID for the string s.
func StringID(s string) ID { return ID{raw: string(jsonscan.AppendString(nil, s))} }

// IntID returns the ID for the integer n.
func IntID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsZero reports whether id is absent.
func (id ID) IsZero() bool { return id.raw == "" }

// IsString reports whether id is a string id.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Raw returns the JSON literal of id ("null" when absent).
func (id ID) Raw() string {
	if id.raw == "" {
		return "null"
	}
	return id.raw
}

// String returns the JSON literal of id, for logs.
func (id ID) String() string { return id.Raw() }

// AppendJSON appends the JSON literal of id to dst (null when absent).
func (id ID) AppendJSON(dst []byte) []byte {
	if id.raw == "" {
		return append(dst, "null"...)
	}
	return append(dst, id.raw...)
}

// MarshalJSON encodes id as its literal, or null when absent.
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON decodes a string or number id; null gives the zero ID.
// Objects, arrays and booleans are refused.
func (id *ID) UnmarshalJSON(b []byte) error {
	if !jsonscan.Valid(b) {
		return errors.New("jsonrpc: invalid id")
	}
	v, ok := parseID(b[jsonscan.SkipSpace(b, 0):])
	if !ok {
		// b is valid JSON, so only JSON whitespace can surround the value.
		if string(bytes.TrimSpace(b)) == "null" {
			*id = ID{}
			return nil
		}
		return errors.New("jsonrpc: id must be a string or a number")
	}
	*id = v
	return nil
}

// parseID reads an id from the start of a valid JSON value.
func parseID(v []byte) (ID, bool) {
	if len(v) == 0 {
		return ID{}, false
	}
	switch c := v[0]; {
	case c == '"':
		end := jsonscan.StringEnd(v, 0)
		lit := v[:end]
		if bytes.IndexByte(lit, '\\') < 0 {
			return ID{raw: string(lit)}, true
		}
		s, ok := jsonscan.String(lit)
		if !ok {
			return ID{}, false
		}
		return StringID(s), true
	case c == '-' || (c >= '0' && c <= '9'):
		end := jsonscan.NumberEnd(v, 0)
		return ID{raw: string(v[:end])}, true
	}
	return ID{}, false
}

var _ json.Marshaler = ID{}
var _ json.Unmarshaler = (*ID)(nil)
