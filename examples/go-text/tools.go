package main

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/examples/internal/slug"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

const (
	maxText    = 1 << 20 // characters
	maxPattern = 1000
)

type statsIn struct {
	Text string `json:"text"`
	Top  *int   `json:"top"`
}

type wordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

type statsOut struct {
	Characters         int         `json:"characters"`
	CharactersNoSpaces int         `json:"characters_no_spaces"`
	Words              int         `json:"words"`
	UniqueWords        int         `json:"unique_words"`
	Sentences          int         `json:"sentences"`
	Lines              int         `json:"lines"`
	Paragraphs         int         `json:"paragraphs"`
	AverageWordLength  float64     `json:"average_word_length"`
	ReadingTimeSeconds int         `json:"reading_time_seconds"`
	TopWords           []wordCount `json:"top_words"`
}

// words splits text into words: runs of letters and digits, with inner
// apostrophes and hyphens ("don't", "well-known"). The words are slices of
// text, so a large text costs no per-word allocation.
func words(text string) []string {
	var out []string
	start := -1
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		inner := false
		if (r == '\'' || r == '’' || r == '-') && start >= 0 && i+size < len(text) {
			next, _ := utf8.DecodeRuneInString(text[i+size:])
			inner = isWord(next)
		}
		switch {
		case isWord(r) || inner:
			if start < 0 {
				start = i
			}
		case start >= 0:
			out = append(out, text[start:i])
			start = -1
		}
		i += size
	}
	if start >= 0 {
		out = append(out, text[start:])
	}
	return out
}

func textStats(c *wasmcp.Context, in statsIn) (statsOut, error) {
	top := 5
	if in.Top != nil {
		top = *in.Top
	}
	if top < 0 || top > 50 {
		return statsOut{}, fmt.Errorf("top must be between 0 and 50, got %d", top)
	}
	text := in.Text
	out := statsOut{Characters: utf8.RuneCountInString(text), TopWords: []wordCount{}}
	for _, r := range text {
		if !unicode.IsSpace(r) {
			out.CharactersNoSpaces++
		}
	}
	ws := words(text)
	out.Words = len(ws)
	counts := map[string]int{}
	letters := 0
	for _, w := range ws {
		counts[strings.ToLower(w)]++
		letters += utf8.RuneCountInString(w)
	}
	out.UniqueWords = len(counts)
	if len(ws) > 0 {
		out.AverageWordLength = float64(int(float64(letters)/float64(len(ws))*100+0.5)) / 100
		out.ReadingTimeSeconds = (len(ws)*60 + 229) / 230
	}
	if strings.TrimSpace(text) != "" {
		out.Lines = strings.Count(strings.TrimRight(text, "\n"), "\n") + 1
		for _, p := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n\n") {
			if strings.TrimSpace(p) != "" {
				out.Paragraphs++
			}
		}
		out.Sentences = countSentences(text)
	}
	for w, n := range counts {
		out.TopWords = append(out.TopWords, wordCount{w, n})
	}
	sort.Slice(out.TopWords, func(i, j int) bool {
		a, b := out.TopWords[i], out.TopWords[j]
		return a.Count > b.Count || a.Count == b.Count && a.Word < b.Word
	})
	if len(out.TopWords) > top {
		out.TopWords = out.TopWords[:top]
	}
	return out, nil
}

// countSentences counts runs of text ended by ., ! or ? (or the end of the
// text) that contain a letter or digit.
func countSentences(text string) int {
	n, content := 0, false
	for _, r := range text {
		switch {
		case r == '.' || r == '!' || r == '?' || r == '…':
			if content {
				n++
				content = false
			}
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			content = true
		}
	}
	if content {
		n++
	}
	return n
}

var caseNames = []string{"upper", "lower", "title", "sentence", "snake", "kebab", "camel", "pascal", "constant"}

type caseIn struct {
	Text string `json:"text"`
	To   string `json:"to"`
}

type caseOut struct {
	Result string `json:"result"`
}

func convertCase(c *wasmcp.Context, in caseIn) (caseOut, error) {
	capital := func(w string) string {
		r, size := utf8.DecodeRuneInString(w)
		return string(unicode.ToTitle(r)) + strings.ToLower(w[size:])
	}
	join := func(sep string, f func(i int, w string) string) string {
		ws := identifierWords(in.Text)
		for i, w := range ws {
			ws[i] = f(i, w)
		}
		return strings.Join(ws, sep)
	}
	var s string
	switch in.To {
	case "upper":
		s = strings.ToUpper(in.Text)
	case "lower":
		s = strings.ToLower(in.Text)
	case "title":
		s = mapWords(in.Text, capital)
	case "sentence":
		s = sentenceCase(in.Text)
	case "snake":
		s = join("_", func(_ int, w string) string { return strings.ToLower(w) })
	case "kebab":
		s = join("-", func(_ int, w string) string { return strings.ToLower(w) })
	case "constant":
		s = join("_", func(_ int, w string) string { return strings.ToUpper(w) })
	case "camel":
		s = join("", func(i int, w string) string {
			if i == 0 {
				return strings.ToLower(w)
			}
			return capital(w)
		})
	case "pascal":
		s = join("", func(_ int, w string) string { return capital(w) })
	default:
		return caseOut{}, fmt.Errorf("unknown case %q: use one of %s", in.To, strings.Join(caseNames, ", "))
	}
	return caseOut{Result: s}, nil
}

// mapWords applies f to each run of letters and digits, keeping the rest.
func mapWords(text string, f func(string) string) string {
	var b, w strings.Builder
	flush := func() {
		if w.Len() > 0 {
			b.WriteString(f(w.String()))
			w.Reset()
		}
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' {
			w.WriteRune(r)
			continue
		}
		flush()
		b.WriteRune(r)
	}
	flush()
	return b.String()
}

func sentenceCase(text string) string {
	var b strings.Builder
	start := true
	for _, r := range strings.ToLower(text) {
		if start && unicode.IsLetter(r) {
			r = unicode.ToUpper(r)
			start = false
		}
		if r == '.' || r == '!' || r == '?' {
			start = true
		}
		b.WriteRune(r)
	}
	return b.String()
}

// identifierWords splits text into words for identifier styles, also at
// case changes ("parseHTTPRequest" -> parse, HTTP, Request).
func identifierWords(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = nil
		}
	}
	runes := []rune(text)
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if len(cur) > 0 && unicode.IsUpper(r) {
			prev := cur[len(cur)-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return out
}

type slugIn struct {
	Text      string  `json:"text"`
	MaxLength *int    `json:"max_length"`
	Separator *string `json:"separator"`
}

type slugOut struct {
	Slug string `json:"slug"`
}

func slugify(c *wasmcp.Context, in slugIn) (slugOut, error) {
	maxLen, sep := 80, "-"
	if in.MaxLength != nil {
		maxLen = *in.MaxLength
	}
	if in.Separator != nil {
		sep = *in.Separator
	}
	if maxLen < 1 {
		return slugOut{}, fmt.Errorf("max_length must be at least 1, got %d", maxLen)
	}
	return slugOut{Slug: slug.Make(in.Text, sep, maxLen)}, nil
}

type regexIn struct {
	Text       string `json:"text"`
	Pattern    string `json:"pattern"`
	IgnoreCase bool   `json:"ignore_case"`
	MaxMatches *int   `json:"max_matches"`
}

type regexMatch struct {
	Match  string            `json:"match"`
	Start  int               `json:"start"`
	End    int               `json:"end"`
	Groups []string          `json:"groups"`
	Named  map[string]string `json:"named,omitempty"`
}

type regexOut struct {
	Count     int          `json:"count"`
	Truncated bool         `json:"truncated"`
	Matches   []regexMatch `json:"matches"`
}

func regexExtract(c *wasmcp.Context, in regexIn) (regexOut, error) {
	max := 100
	if in.MaxMatches != nil {
		max = *in.MaxMatches
	}
	switch {
	case max < 1 || max > 1000:
		return regexOut{}, fmt.Errorf("max_matches must be between 1 and 1000, got %d", max)
	case in.Pattern == "":
		return regexOut{}, fmt.Errorf("pattern is empty")
	case len(in.Pattern) > maxPattern:
		return regexOut{}, fmt.Errorf("pattern is %d bytes, over the limit of %d", len(in.Pattern), maxPattern)
	}
	pattern := in.Pattern
	if in.IgnoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return regexOut{}, fmt.Errorf("invalid pattern (RE2 syntax; lookarounds and backreferences are not supported): %v", err)
	}
	found := re.FindAllStringSubmatchIndex(in.Text, max+1)
	out := regexOut{Matches: []regexMatch{}}
	if len(found) > max {
		found, out.Truncated = found[:max], true
	}
	names := re.SubexpNames()
	for _, loc := range found {
		m := regexMatch{Match: in.Text[loc[0]:loc[1]], Start: loc[0], End: loc[1], Groups: []string{}}
		for g := 1; g < len(loc)/2; g++ {
			v := ""
			if loc[2*g] >= 0 {
				v = in.Text[loc[2*g]:loc[2*g+1]]
			}
			m.Groups = append(m.Groups, v)
			if names[g] != "" {
				if m.Named == nil {
					m.Named = map[string]string{}
				}
				m.Named[names[g]] = v
			}
		}
		out.Matches = append(out.Matches, m)
	}
	out.Count = len(out.Matches)
	return out, nil
}

type wrapIn struct {
	Text  string `json:"text"`
	Width *int   `json:"width"`
}

type wrapOut struct {
	Text  string `json:"text"`
	Lines int    `json:"lines"`
}

func wrapText(c *wasmcp.Context, in wrapIn) (wrapOut, error) {
	width := 80
	if in.Width != nil {
		width = *in.Width
	}
	if width < 10 {
		return wrapOut{}, fmt.Errorf("width must be at least 10, got %d", width)
	}
	var paragraphs []string
	for _, p := range strings.Split(strings.ReplaceAll(in.Text, "\r\n", "\n"), "\n\n") {
		ws := strings.Fields(p)
		if len(ws) == 0 {
			continue
		}
		var lines []string
		line := ws[0]
		for _, w := range ws[1:] {
			if utf8.RuneCountInString(line)+1+utf8.RuneCountInString(w) > width {
				lines = append(lines, line)
				line = w
				continue
			}
			line += " " + w
		}
		paragraphs = append(paragraphs, strings.Join(append(lines, line), "\n"))
	}
	text := strings.Join(paragraphs, "\n\n")
	lines := 0
	if text != "" {
		lines = strings.Count(text, "\n") + 1
	}
	return wrapOut{Text: text, Lines: lines}, nil
}
