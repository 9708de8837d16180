// Command go-text is a wasmcp plugin with text utilities: statistics, case
// conversion, slugs, regular-expression extraction and word wrapping.
// Every tool returns structured content described by an outputSchema.
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o examples/go-text/go-text.wasm ./examples/go-text
package main

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

var plugin = wasmcp.New(wasmcp.Info{
	Name:        "text",
	Version:     "1.0.0",
	Description: "Text utilities: statistics, case conversion, slugs, regex extraction, word wrap.",
})

func init() {
	readOnly := &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false), IdempotentHint: ptr(true)}
	textProp := wasmcp.Required("text", wasmcp.String("The text to work on.").With("maxLength", maxText))

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "text_stats",
		Title:       "Text statistics",
		Description: "Counts characters, words, sentences, lines and paragraphs of a text, estimates its reading time and lists its most frequent words.",
		InputSchema: wasmcp.Object(textProp, wasmcp.Optional("top", wasmcp.Integer("How many frequent words to list (default 5).").With("minimum", 0).With("maximum", 50))),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("characters", wasmcp.Integer("Unicode characters.")),
			wasmcp.Required("characters_no_spaces", wasmcp.Integer("Characters other than white space.")),
			wasmcp.Required("words", wasmcp.Integer("")),
			wasmcp.Required("unique_words", wasmcp.Integer("Distinct words, ignoring case.")),
			wasmcp.Required("sentences", wasmcp.Integer("")),
			wasmcp.Required("lines", wasmcp.Integer("")),
			wasmcp.Required("paragraphs", wasmcp.Integer("")),
			wasmcp.Required("average_word_length", wasmcp.Number("In characters.")),
			wasmcp.Required("reading_time_seconds", wasmcp.Integer("At 230 words a minute.")),
			wasmcp.Required("top_words", wasmcp.Array(wasmcp.Object(
				wasmcp.Required("word", wasmcp.String("")), wasmcp.Required("count", wasmcp.Integer("")),
			), "Most frequent words, most frequent first.")),
		),
		Annotations: readOnly,
	}, textStats)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:         "convert_case",
		Title:        "Convert case",
		Description:  "Converts text to another letter case or identifier style (snake_case, kebab-case, camelCase, ...).",
		InputSchema:  wasmcp.Object(textProp, wasmcp.Required("to", wasmcp.Enum("The target case.", caseNames...))),
		OutputSchema: wasmcp.Object(wasmcp.Required("result", wasmcp.String(""))),
		Annotations:  readOnly,
	}, convertCase)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "slugify",
		Title:       "Slugify",
		Description: "Turns text into a URL slug: lower-case ASCII letters and digits joined by a separator, accents removed.",
		InputSchema: wasmcp.Object(textProp,
			wasmcp.Optional("max_length", wasmcp.Integer("Longest slug (default 80); cut at a word boundary.").With("minimum", 1).With("maximum", 1000)),
			wasmcp.Optional("separator", wasmcp.Enum("Word separator (default \"-\").", "-", "_", ".")),
		),
		OutputSchema: wasmcp.Object(wasmcp.Required("slug", wasmcp.String(""))),
		Annotations:  readOnly,
	}, slugify)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:  "regex_extract",
		Title: "Extract with a regular expression",
		Description: "Finds every match of a regular expression (RE2 syntax, as in Go) in a text and returns each match " +
			"with its position and capture groups. Named groups (?P<name>...) are returned by name.",
		InputSchema: wasmcp.Object(textProp,
			wasmcp.Required("pattern", wasmcp.String("RE2 regular expression.").With("maxLength", maxPattern)),
			wasmcp.Optional("ignore_case", wasmcp.Boolean("Match case-insensitively.")),
			wasmcp.Optional("max_matches", wasmcp.Integer("Most matches to return (default 100).").With("minimum", 1).With("maximum", 1000)),
		),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("count", wasmcp.Integer("Matches returned.")),
			wasmcp.Required("truncated", wasmcp.Boolean("True when more matches exist than were returned.")),
			wasmcp.Required("matches", wasmcp.Array(wasmcp.Object(
				wasmcp.Required("match", wasmcp.String("")),
				wasmcp.Required("start", wasmcp.Integer("Byte offset.")),
				wasmcp.Required("end", wasmcp.Integer("Byte offset after the match.")),
				wasmcp.Required("groups", wasmcp.Array(wasmcp.String(""), "Capture groups in order; empty when a group did not take part.")),
				wasmcp.Optional("named", Schema{"type": "object", "additionalProperties": Schema{"type": "string"}}),
			), "")),
		),
		Annotations: readOnly,
	}, regexExtract)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "wrap_text",
		Title:       "Wrap text",
		Description: "Re-flows each paragraph of a text so that no line is longer than a width (words longer than the width stay whole).",
		InputSchema: wasmcp.Object(textProp, wasmcp.Optional("width", wasmcp.Integer("Maximum line length in characters (default 80).").With("minimum", 10).With("maximum", 1000))),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("text", wasmcp.String("")),
			wasmcp.Required("lines", wasmcp.Integer("")),
		),
		Annotations: readOnly,
	}, wrapText)

	wasmcp.Serve(plugin)
}

// Schema is a short name for schemas written by hand.
type Schema = wasmcp.Schema

func ptr[T any](v T) *T { return &v }

func main() {} // required by Go; a reactor never runs it
