package jsonscan

import (
	"encoding/json"
)

// This file holds small scanners over JSON that has already been validated
// (by Valid or Parse). They never allocate on the common path and never
// recurse, so deeply nested input cannot exhaust the stack.

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func trimSpace(data []byte) []byte {
	i := skipSpace(data, 0)
	j := len(data)
	for j > i && isSpace(data[j-1]) {
		j--
	}
	return data[i:j]
}

// skipString returns the index just past the string literal at data[i].
func skipString(data []byte, i int) int {
	i++ // opening quote
	for i < len(data) {
		switch data[i] {
		case '\\':
			i += 2
		case '"':
			return i + 1
		default:
			i++
		}
	}
	return len(data)
}

// skipNumber returns the index just past the number literal at data[i].
func skipNumber(data []byte, i int) int {
	for i < len(data) {
		switch c := data[i]; {
		case c >= '0' && c <= '9', c == '-', c == '+', c == '.', c == 'e', c == 'E':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index just past the value that starts at data[i]
// (no leading space).
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return i
	}
	switch c := data[i]; c {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	case 't':
		return i + 4
	case 'f':
		return i + 5
	case 'n':
		return i + 4
	default:
		return skipNumber(data, i)
	}
}

// cursor is an iterator's position inside a JSON container.
type cursor struct {
	data []byte
	i    int
}

// openCursor returns a cursor just inside the container that data starts
// with (after space), and whether that container opens with the byte open.
func openCursor(data []byte, open byte) (cursor, bool) {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != open {
		return cursor{}, false
	}
	return cursor{data: data, i: i + 1}, true
}

// start returns the index where the next item begins: past space and
// the comma that separates it from the previous one.
func (c *cursor) start() int {
	d := c.data
	i := skipSpace(d, c.i)
	if i < len(d) && d[i] == ',' {
		i = skipSpace(d, i+1)
	}
	return i
}

// ObjectIter walks the members of a JSON object. The object must be valid
// JSON (see Valid); the iterator does not validate.
type ObjectIter struct{ c cursor }

// NewObjectIter returns an iterator over the members of obj and whether
// obj is a JSON object at all.
func NewObjectIter(obj []byte) (ObjectIter, bool) {
	c, ok := openCursor(obj, '{')
	return ObjectIter{c}, ok
}

// Next returns the next member: its key as the raw bytes between the
// quotes (escapes not decoded, see KeyIs) and its value as raw JSON.
func (it *ObjectIter) Next() (key, value []byte, ok bool) {
	d, i := it.c.data, it.c.start()
	if i >= len(d) || d[i] != '"' {
		it.c.i = len(d)
		return nil, nil, false
	}
	end := skipString(d, i)
	key = d[i+1 : end-1]
	i = skipSpace(d, end)
	if i < len(d) && d[i] == ':' {
		i = skipSpace(d, i+1)
	}
	vend := skipValue(d, i)
	value = d[i:vend]
	it.c.i = vend
	return key, value, true
}

// KeyIs reports whether a raw key from ObjectIter.Next equals name,
// decoding escapes if the key has any. Comparison is case-sensitive.
func KeyIs(rawKey []byte, name string) bool {
	if !hasEscapeBody(rawKey) {
		return string(rawKey) == name
	}
	s, ok := unquoteBody(rawKey)
	return ok && s == name
}

// Member returns the value of the member name of the JSON object obj
// (valid JSON), or false if obj is not an object or has no such member.
// With duplicate keys the last one wins, as in encoding/json.
func Member(obj []byte, name string) (value []byte, ok bool) {
	it, isObj := NewObjectIter(obj)
	if !isObj {
		return nil, false
	}
	for {
		k, v, more := it.Next()
		if !more {
			return value, ok
		}
		if KeyIs(k, name) {
			value, ok = v, true
		}
	}
}

// ArrayIter walks the elements of a JSON array (valid JSON, not validated).
type ArrayIter struct{ c cursor }

// NewArrayIter returns an iterator over the elements of arr and whether
// arr is a JSON array at all.
func NewArrayIter(arr []byte) (ArrayIter, bool) {
	c, ok := openCursor(arr, '[')
	return ArrayIter{c}, ok
}

// Next returns the next element as raw JSON.
func (it *ArrayIter) Next() (value []byte, ok bool) {
	d, i := it.c.data, it.c.start()
	if i >= len(d) || d[i] == ']' {
		it.c.i = len(d)
		return nil, false
	}
	end := skipValue(d, i)
	it.c.i = end
	return d[i:end], true
}

// String decodes the JSON string literal v (valid JSON). ok is false when v
// is not a string.
func String(v []byte) (s string, ok bool) {
	v = trimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	if !hasEscape(v) {
		return string(v[1 : len(v)-1]), true
	}
	return unquote(v)
}

// StringIs reports whether the JSON value v is the string s, without
// allocating when v has no escapes.
func StringIs(v []byte, s string) bool {
	v = trimSpace(v)
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	if !hasEscape(v) {
		return string(v[1:len(v)-1]) == s
	}
	u, ok := unquote(v)
	return ok && u == s
}

// Kind returns the JSON type of the raw value v: one of 'o' (object),
// 'a' (array), 's' (string), 'n' (number), 'b' (boolean), 'z' (null), or 0
// when v is empty.
func Kind(v []byte) byte {
	i := skipSpace(v, 0)
	if i >= len(v) {
		return 0
	}
	switch c := v[i]; {
	case c == '{':
		return 'o'
	case c == '[':
		return 'a'
	case c == '"':
		return 's'
	case c == 't' || c == 'f':
		return 'b'
	case c == 'n':
		return 'z'
	default:
		return 'n'
	}
}

func hasEscape(lit []byte) bool { return hasEscapeBody(lit) }

func hasEscapeBody(b []byte) bool {
	for _, c := range b {
		if c == '\\' {
			return true
		}
	}
	return false
}

// unquote decodes a full string literal including its quotes.
func unquote(lit []byte) (string, bool) {
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", false
	}
	return s, true
}

// unquoteBody decodes the bytes between the quotes of a string literal.
func unquoteBody(body []byte) (string, bool) {
	lit := make([]byte, 0, len(body)+2)
	lit = append(lit, '"')
	lit = append(lit, body...)
	lit = append(lit, '"')
	return unquote(lit)
}

// SkipSpace returns the index of the first byte from data[i] that is not
// JSON whitespace, or len(data).
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// StringEnd returns the index just past the JSON string literal that
// starts at data[i] (its opening quote), or len(data) if it does not end.
func StringEnd(data []byte, i int) int { return skipString(data, i) }

// NumberEnd returns the index just past the JSON number literal that
// starts at data[i].
func NumberEnd(data []byte, i int) int { return skipNumber(data, i) }
