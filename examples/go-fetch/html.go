package main

import (
	"html"
	"net/url"
	"strings"
)

// link is a hyperlink of a page.
type link struct {
	URL  string `json:"url"`
	Text string `json:"text"`
}

// document is what extract finds in a page.
type document struct {
	title string
	text  string
	links []link
}

// Elements whose content is never text, and elements that start a new
// block of text.
var (
	skipped = map[string]bool{"script": true, "style": true, "noscript": true, "template": true, "svg": true,
		"canvas": true, "iframe": true, "object": true, "select": true, "button": true}
	blocks = map[string]bool{"p": true, "div": true, "br": true, "li": true, "tr": true, "table": true, "ul": true,
		"ol": true, "section": true, "article": true, "header": true, "footer": true, "nav": true, "aside": true,
		"main": true, "blockquote": true, "pre": true, "hr": true, "h1": true, "h2": true, "h3": true, "h4": true,
		"h5": true, "h6": true, "dt": true, "dd": true, "figure": true, "figcaption": true, "form": true, "address": true}
	headings = map[string]string{"h1": "# ", "h2": "## ", "h3": "### ", "h4": "#### ", "h5": "##### ", "h6": "###### "}
)

// extract reduces an HTML page to its title, readable text and links,
// without a full HTML parser: good enough for reading, not for fidelity.
// base resolves relative links.
func extract(src, base string) document {
	baseURL, _ := url.Parse(base)
	var doc document
	var text strings.Builder
	var linkText strings.Builder
	var href string
	inLink := false
	seen := map[string]bool{}
	h1 := ""
	var h1Text strings.Builder
	inH1 := false

	emit := func(s string) {
		text.WriteString(s)
		if inLink {
			linkText.WriteString(s)
		}
		if inH1 {
			h1Text.WriteString(s)
		}
	}
	for i := 0; i < len(src); {
		if src[i] != '<' {
			j := strings.IndexByte(src[i:], '<')
			if j < 0 {
				j = len(src) - i
			}
			emit(html.UnescapeString(src[i : i+j]))
			i += j
			continue
		}
		switch {
		case strings.HasPrefix(src[i:], "<!--"):
			end := strings.Index(src[i+4:], "-->")
			if end < 0 {
				i = len(src)
			} else {
				i += 4 + end + 3
			}
			continue
		case strings.HasPrefix(src[i:], "<!") || strings.HasPrefix(src[i:], "<?"):
			end := strings.IndexByte(src[i:], '>')
			if end < 0 {
				i = len(src)
			} else {
				i += end + 1
			}
			continue
		}
		name, attrs, closing, next := readTag(src, i)
		if name == "" {
			emit("<")
			i++
			continue
		}
		i = next
		switch {
		case name == "title" && !closing:
			end := indexFold(src[i:], "</title")
			if end < 0 {
				end = len(src) - i
			}
			if doc.title == "" {
				doc.title = collapse(html.UnescapeString(src[i : i+end]))
			}
			i += end
		case skipped[name] && !closing:
			// Skip to the matching close tag (no nesting for these).
			end := indexFold(src[i:], "</"+name)
			if end < 0 {
				i = len(src)
			} else {
				i += end
			}
		case name == "a":
			if !closing {
				href, inLink = attrs["href"], true
				linkText.Reset()
				continue
			}
			if inLink {
				addLink(&doc, baseURL, href, linkText.String(), seen)
			}
			inLink = false
		case name == "li":
			if !closing {
				emit("\n- ")
			}
		case headings[name] != "":
			if !closing {
				emit("\n\n" + headings[name])
				if name == "h1" && h1 == "" {
					inH1 = true
					h1Text.Reset()
				}
			} else {
				emit("\n\n")
				if inH1 {
					h1, inH1 = collapse(h1Text.String()), false
				}
			}
		case name == "img" && attrs["alt"] != "":
			emit(" " + attrs["alt"] + " ")
		case name == "p" || name == "blockquote" || name == "pre" || name == "table":
			emit("\n\n")
		case blocks[name]:
			emit("\n")
		case name == "td" || name == "th":
			emit(" ")
		}
	}
	if doc.title == "" {
		doc.title = h1
	}
	doc.text = tidy(text.String())
	if doc.links == nil {
		doc.links = []link{}
	}
	return doc
}

// readTag parses the tag starting at src[i] == '<'. It returns the
// lower-case name ("" when this is not a tag), the attributes, whether it
// is a closing tag, and the index after it.
func readTag(src string, i int) (name string, attrs map[string]string, closing bool, next int) {
	j := i + 1
	if j < len(src) && src[j] == '/' {
		closing = true
		j++
	}
	start := j
	for j < len(src) && (isAlnum(src[j]) || src[j] == '-' || src[j] == ':') {
		j++
	}
	if j == start || !isAlpha(src[start]) {
		return "", nil, false, i
	}
	name = strings.ToLower(src[start:j])
	attrs = map[string]string{}
	for j < len(src) && src[j] != '>' {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r' || src[j] == '/') {
			j++
		}
		as := j
		for j < len(src) && !strings.ContainsRune(" \t\r\n=>/", rune(src[j])) {
			j++
		}
		key := strings.ToLower(src[as:j])
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j++
		}
		val := ""
		if j < len(src) && src[j] == '=' {
			j++
			for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
				j++
			}
			if j < len(src) && (src[j] == '"' || src[j] == '\'') {
				q := src[j]
				end := strings.IndexByte(src[j+1:], q)
				if end < 0 {
					return name, attrs, closing, len(src)
				}
				val = src[j+1 : j+1+end]
				j += end + 2
			} else {
				vs := j
				for j < len(src) && !strings.ContainsRune(" \t\r\n>", rune(src[j])) {
					j++
				}
				val = src[vs:j]
			}
		}
		if key != "" {
			attrs[key] = html.UnescapeString(val)
		} else if j == as && j < len(src) && src[j] != '>' {
			j++ // stray character: skip it
		}
	}
	return name, attrs, closing, min(j+1, len(src))
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool { return isAlpha(c) || c >= '0' && c <= '9' }

// indexFold is strings.Index ignoring ASCII case of s (sub is lower case).
func indexFold(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return i
		}
	}
	return -1
}

func addLink(doc *document, base *url.URL, href, text string, seen map[string]bool) {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || len(doc.links) >= maxLinks {
		return
	}
	u, err := url.Parse(href)
	if err != nil {
		return
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return
	}
	u.Fragment = ""
	abs := u.String()
	if seen[abs] {
		return
	}
	seen[abs] = true
	doc.links = append(doc.links, link{URL: abs, Text: collapse(text)})
}

// collapse joins the fields of s with single spaces.
func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// tidy collapses spaces within lines and runs of blank lines.
func tidy(s string) string {
	var out []string
	blank := true
	for _, line := range strings.Split(s, "\n") {
		line = collapse(line)
		if line == "" || line == "-" {
			if !blank {
				out = append(out, "")
			}
			blank = true
			continue
		}
		out = append(out, line)
		blank = false
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
