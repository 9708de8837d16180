package jsonscan

import "unicode/utf8"

// maxDepth is the deepest nesting Valid accepts, as in encoding/json.
const maxDepth = 10000

// Valid reports whether data is exactly one well-formed JSON value (RFC
// 8259), surrounded only by whitespace, in valid UTF-8, nested at most
// 10000 levels deep. It makes one pass, does not allocate for nesting up to
// 64 levels and never recurses.
func Valid(data []byte) bool {
	var small [64]byte
	stack := small[:0] // '{' or '[' per open container
	n := len(data)
	i := skipSpace(data, 0)
	for {
		// A value starts at i.
		if i >= n {
			return false
		}
		switch c := data[i]; {
		case c == '{' || c == '[':
			if len(stack) >= maxDepth {
				return false
			}
			i = skipSpace(data, i+1)
			if i < n && data[i] == closing(c) {
				i++
				break
			}
			stack = append(stack, c)
			if c == '{' {
				if i = validKey(data, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = validString(data, i); i < 0 {
				return false
			}
		case c == 't':
			if n-i < 4 || string(data[i:i+4]) != "true" {
				return false
			}
			i += 4
		case c == 'f':
			if n-i < 5 || string(data[i:i+5]) != "false" {
				return false
			}
			i += 5
		case c == 'n':
			if n-i < 4 || string(data[i:i+4]) != "null" {
				return false
			}
			i += 4
		case c == '-' || (c >= '0' && c <= '9'):
			if i = validNumber(data, i); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: close containers, or move to the next element.
		for {
			i = skipSpace(data, i)
			if len(stack) == 0 {
				return i == n
			}
			if i >= n {
				return false
			}
			top := stack[len(stack)-1]
			c := data[i]
			if c == ',' {
				i = skipSpace(data, i+1)
				if top == '{' {
					if i = validKey(data, i); i < 0 {
						return false
					}
				}
				break
			}
			if c == closing(top) {
				stack = stack[:len(stack)-1]
				i++
				continue
			}
			return false
		}
	}
}

// closing returns the byte that closes the container opened by open ('{'
// or '['): in ASCII, '}' and ']' are two after their openers.
func closing(open byte) byte { return open + 2 }

// validKey checks `"key" :` at i and returns the index after the colon
// and its following space, or -1.
func validKey(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	if i = validString(data, i); i < 0 {
		return -1
	}
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != ':' {
		return -1
	}
	return skipSpace(data, i+1)
}

// validString checks the string literal at data[i] == '"' and returns the
// index after its closing quote, or -1.
func validString(data []byte, i int) int {
	n := len(data)
	i++
	for i < n {
		c := data[i]
		switch {
		case c == '"':
			return i + 1
		case c == '\\':
			if i+1 >= n {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > n {
					return -1
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		case c < 0x20:
			return -1
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && size == 1 {
				return -1
			}
			i += size
		}
	}
	return -1
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// validNumber checks the number at i and returns the index after it, or -1.
func validNumber(data []byte, i int) int {
	n := len(data)
	if data[i] == '-' {
		i++
	}
	if i >= n {
		return -1
	}
	switch {
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i < n && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n || data[i] < '0' || data[i] > '9' {
			return -1
		}
		for i < n && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || data[i] < '0' || data[i] > '9' {
			return -1
		}
		for i < n && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	}
	return i
}
