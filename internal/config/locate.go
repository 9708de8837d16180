package config

import (
	"strings"
)

// keyLine is one key of a TOML document and the line it appears on.
type keyLine struct {
	key  []string
	line int
}

// locateKeys lists the keys of a TOML document in document order with
// their 1-based lines, using the same key paths as toml.MetaData.Keys:
// table headers, keys of key/value pairs (dotted keys in full) and keys
// inside inline tables, where an array of inline tables adds no index.
//
// BurntSushi/toml keeps no public key positions, so unknown-key errors
// use this small scanner. It is only run on documents the TOML decoder
// accepted; on anything it does not understand it skips to the next line,
// and it never fails.
func locateKeys(data []byte) []keyLine {
	s := &scanner{src: data, line: 1}
	var out []keyLine
	var table []string
	for s.pos < len(s.src) {
		start := s.pos
		s.skipSpaceNL()
		if s.pos >= len(s.src) {
			break
		}
		switch c := s.src[s.pos]; {
		case c == '[':
			s.pos++
			array := s.peek('[')
			if array {
				s.pos++
			}
			line := s.line
			key, ok := s.key()
			if ok {
				table = key
				out = append(out, keyLine{key: key, line: line})
			}
			s.skipLine()
		case isKeyStart(c):
			line := s.line
			key, ok := s.key()
			if !ok {
				s.skipLine()
				break
			}
			full := concat(table, key)
			out = append(out, keyLine{key: full, line: line})
			s.skipSpace()
			if !s.peek('=') {
				s.skipLine()
				break
			}
			s.pos++
			s.value(full, &out, 0)
		default:
			s.skipLine()
		}
		if s.pos == start {
			s.pos++ // always make progress
		}
	}
	return out
}

// lineOf returns the line of the first key equal to key at or after
// located[*cursor], moving the cursor past it, or 0 when there is none.
func lineOf(located []keyLine, cursor *int, key []string) int {
	for pass := 0; pass < 2; pass++ {
		from := *cursor
		if pass == 1 {
			from = 0
		}
		for i := from; i < len(located); i++ {
			if equalKeys(located[i].key, key) {
				*cursor = i + 1
				return located[i].line
			}
		}
	}
	return 0
}

func equalKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func concat(a, b []string) []string {
	out := make([]string, 0, len(a)+len(b))
	return append(append(out, a...), b...)
}

func isKeyStart(c byte) bool {
	return c == '"' || c == '\'' || isBare(c)
}

func isBare(c byte) bool {
	return c == '_' || c == '-' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
}

// scanner walks a TOML document just well enough to find its keys.
type scanner struct {
	src  []byte
	pos  int
	line int
}

func (s *scanner) peek(c byte) bool { return s.pos < len(s.src) && s.src[s.pos] == c }

func (s *scanner) hasPrefix(p string) bool {
	return strings.HasPrefix(string(s.src[s.pos:min(len(s.src), s.pos+len(p))]), p)
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.src) && (s.src[s.pos] == ' ' || s.src[s.pos] == '\t') {
		s.pos++
	}
}

// skipSpaceNL skips blanks, newlines and comments.
func (s *scanner) skipSpaceNL() {
	for s.pos < len(s.src) {
		switch s.src[s.pos] {
		case ' ', '\t', '\r':
			s.pos++
		case '\n':
			s.pos++
			s.line++
		case '#':
			for s.pos < len(s.src) && s.src[s.pos] != '\n' {
				s.pos++
			}
		default:
			return
		}
	}
}

func (s *scanner) skipLine() {
	for s.pos < len(s.src) && s.src[s.pos] != '\n' {
		s.pos++
	}
}

// key reads a possibly dotted key.
func (s *scanner) key() ([]string, bool) {
	var key []string
	for {
		s.skipSpace()
		if s.pos >= len(s.src) {
			return nil, false
		}
		var part string
		switch c := s.src[s.pos]; {
		case c == '"':
			p, ok := s.basicString()
			if !ok {
				return nil, false
			}
			part = p
		case c == '\'':
			s.pos++
			end := strings.IndexAny(string(s.src[s.pos:]), "'\n")
			if end < 0 || s.src[s.pos+end] != '\'' {
				return nil, false
			}
			part = string(s.src[s.pos : s.pos+end])
			s.pos += end + 1
		case isBare(c):
			start := s.pos
			for s.pos < len(s.src) && isBare(s.src[s.pos]) {
				s.pos++
			}
			part = string(s.src[start:s.pos])
		default:
			return nil, false
		}
		key = append(key, part)
		s.skipSpace()
		if !s.peek('.') {
			return key, true
		}
		s.pos++
	}
}

// basicString reads a one-line "..." string and returns its value with the
// common escapes decoded.
func (s *scanner) basicString() (string, bool) {
	s.pos++ // opening quote
	var b strings.Builder
	for s.pos < len(s.src) {
		c := s.src[s.pos]
		switch c {
		case '"':
			s.pos++
			return b.String(), true
		case '\n':
			return "", false
		case '\\':
			s.pos++
			if s.pos >= len(s.src) {
				return "", false
			}
			switch e := s.src[s.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(e) // \" \\ and, approximately, the rest
			}
			s.pos++
		default:
			b.WriteByte(c)
			s.pos++
		}
	}
	return "", false
}

// multiline skips a multi-line string; its opening triple quote is at pos.
func (s *scanner) multiline(delim string) {
	s.pos += 3
	for s.pos < len(s.src) {
		switch {
		case delim == `"""` && s.src[s.pos] == '\\':
			s.pos++
			if s.pos < len(s.src) && s.src[s.pos] == '\n' {
				s.line++
			}
			s.pos++
		case s.hasPrefix(delim):
			s.pos += 3
			for s.pos < len(s.src) && s.src[s.pos] == delim[0] { // up to two quotes may end the content
				s.pos++
			}
			return
		default:
			if s.src[s.pos] == '\n' {
				s.line++
			}
			s.pos++
		}
	}
}

// value skips one value; keys of inline tables in it are appended to out
// under ctx.
func (s *scanner) value(ctx []string, out *[]keyLine, depth int) {
	s.skipSpace()
	if s.pos >= len(s.src) || depth > 64 {
		return
	}
	switch c := s.src[s.pos]; {
	case s.hasPrefix(`"""`):
		s.multiline(`"""`)
	case s.hasPrefix(`'''`):
		s.multiline(`'''`)
	case c == '"':
		s.basicString()
	case c == '\'':
		s.pos++
		for s.pos < len(s.src) && s.src[s.pos] != '\'' && s.src[s.pos] != '\n' {
			s.pos++
		}
		if s.peek('\'') {
			s.pos++
		}
	case c == '[':
		s.items(']', func() bool {
			s.value(ctx, out, depth+1)
			return true
		})
	case c == '{':
		s.items('}', func() bool {
			line := s.line
			key, ok := s.key()
			if !ok {
				return false
			}
			full := concat(ctx, key)
			*out = append(*out, keyLine{key: full, line: line})
			s.skipSpace()
			if !s.peek('=') {
				return false
			}
			s.pos++
			s.value(full, out, depth+1)
			return true
		})
	default:
		for s.pos < len(s.src) && !strings.ContainsRune(",]}\n#", rune(s.src[s.pos])) {
			s.pos++
		}
	}
}

// items skips an array or inline table from its opening byte past its
// closing byte end: item skips one element and reports whether the scan
// may go on. A scan that stops making progress ends.
func (s *scanner) items(end byte, item func() bool) {
	s.pos++
	for s.pos < len(s.src) {
		s.skipSpaceNL()
		if s.peek(end) {
			s.pos++
			return
		}
		start := s.pos
		if !item() {
			return
		}
		s.skipSpaceNL()
		if s.peek(',') {
			s.pos++
		} else if !s.peek(end) && s.pos == start {
			return
		}
	}
}
