// Package slug turns text into URL slugs: the slugify tool of
// examples/go-text and the note ids of examples/go-notes.
package slug

import (
	"strings"
	"unicode/utf8"
)

// fold maps common accented Latin letters to ASCII.
var fold = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'ą': "a", 'æ': "ae",
	'ç': "c", 'ć': "c", 'č': "c", 'ď': "d", 'đ': "d", 'ð': "d",
	'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e", 'ę': "e", 'ě': "e",
	'ğ': "g", 'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ī': "i", 'ı': "i",
	'ł': "l", 'ľ': "l", 'ñ': "n", 'ń': "n", 'ň': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'ō': "o", 'ő': "o", 'œ': "oe",
	'ř': "r", 'ś': "s", 'š': "s", 'ş': "s", 'ß': "ss", 'ť': "t", 'ţ': "t", 'þ': "th",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ū': "u", 'ů': "u", 'ű': "u",
	'ý': "y", 'ÿ': "y", 'ź': "z", 'ż': "z", 'ž': "z",
}

// Make returns text as a slug: its lower-case ASCII letters and digits
// (the accented Latin letters of fold folded to ASCII, apostrophes
// dropped: "don't" is "dont"), a word between each run of anything else,
// the words joined by sep, at most maxLen bytes: cut at a word boundary,
// or a first word longer than maxLen cut at maxLen. It is "" when text has
// no letters or digits; maxLen must be at least 1.
func Make(text, sep string, maxLen int) string {
	var ws []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			ws = append(ws, cur.String())
			cur.Reset()
		}
	}
	for _, r := range strings.ToLower(text) {
		switch {
		case r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9'):
			cur.WriteRune(r)
		case fold[r] != "":
			cur.WriteString(fold[r])
		case r == '\'' || r == '’':
			// "don't" -> "dont"
		default:
			flush()
		}
	}
	flush()
	slug := ""
	for _, w := range ws {
		next := w
		if slug != "" {
			next = slug + sep + w
		}
		if len(next) > maxLen {
			if slug == "" {
				slug = w[:maxLen] // a single word longer than the limit
			}
			break
		}
		slug = next
	}
	return slug
}
