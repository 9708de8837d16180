// Command go-notes is a wasmcp plugin: a small knowledge base of notes kept
// in the plugin's key-value store. It shows every kind of feature: tools
// (with structured output and resource links), a static resource, a
// resource template, resources listed at run time, prompts, completion,
// resource-updated and list-changed notifications, and an input_required
// confirmation.
//
// Build (from the repository root):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags="-s -w" -o examples/go-notes/go-notes.wasm ./examples/go-notes
//
// It needs the kv grant.
package main

import wasmcp "github.com/wasmcp/wasmcp/sdk/go"

var plugin = wasmcp.New(wasmcp.Info{
	Name:         "notes",
	Version:      "1.0.0",
	Description:  "A small knowledge base of notes, stored in the plugin's key-value store.",
	Capabilities: wasmcp.Capabilities{KV: true},
})

func init() {
	idProp := wasmcp.String("The note's id (see search_notes or the notes://index resource).")
	noteOut := wasmcp.Object(
		wasmcp.Required("id", wasmcp.String("")),
		wasmcp.Required("uri", wasmcp.String("The note's resource URI.")),
		wasmcp.Required("title", wasmcp.String("")),
		wasmcp.Required("tags", wasmcp.Array(wasmcp.String(""), "")),
		wasmcp.Required("updated", wasmcp.String("RFC 3339 time of the last change.")),
	)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "add_note",
		Title:       "Add a note",
		Description: "Saves a new note and returns its id and URI. The id is derived from the title.",
		InputSchema: wasmcp.Object(
			wasmcp.Required("title", wasmcp.String("A short title.").With("minLength", 1).With("maxLength", maxTitle)),
			wasmcp.Required("body", wasmcp.String("The note, in Markdown.").With("maxLength", maxBody)),
			wasmcp.Optional("tags", wasmcp.Array(wasmcp.String(""), "Tags, e.g. [\"work\", \"ideas\"].").With("maxItems", maxTags)),
		),
		OutputSchema: noteOut,
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
	}, addNote)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:        "update_note",
		Title:       "Update a note",
		Description: "Changes a note's title, body or tags, or appends text to its body. Fields left out stay as they are.",
		InputSchema: wasmcp.Object(
			wasmcp.Required("id", idProp),
			wasmcp.Optional("title", wasmcp.String("New title.").With("minLength", 1).With("maxLength", maxTitle)),
			wasmcp.Optional("body", wasmcp.String("New body, replacing the old one.").With("maxLength", maxBody)),
			wasmcp.Optional("append", wasmcp.String("Text to add at the end of the body, on a new line.").With("maxLength", maxBody)),
			wasmcp.Optional("tags", wasmcp.Array(wasmcp.String(""), "New tags, replacing the old ones.").With("maxItems", maxTags)),
		),
		OutputSchema: noteOut,
		Annotations:  &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(false), OpenWorldHint: ptr(false)},
	}, updateNote)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:  "delete_note",
		Title: "Delete a note",
		Description: "Deletes a note. Unless confirm is true, the user is asked to confirm first " +
			"(when the client supports elicitation; otherwise confirm: true is required).",
		InputSchema: wasmcp.Object(
			wasmcp.Required("id", idProp),
			wasmcp.Optional("confirm", wasmcp.Boolean("Skip the confirmation question.")),
		),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("id", wasmcp.String("")),
			wasmcp.Required("deleted", wasmcp.Boolean("False when the user declined.")),
		),
		Annotations: &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(false), DestructiveHint: ptr(true), IdempotentHint: ptr(true), OpenWorldHint: ptr(false)},
	}, deleteNote)

	wasmcp.AddTool(plugin, wasmcp.Tool{
		Name:  "search_notes",
		Title: "Search notes",
		Description: "Finds notes whose title, body or tags contain the query (ignoring case), title matches first. " +
			"An empty query lists every note. Results link to the notes' resources.",
		InputSchema: wasmcp.Object(
			wasmcp.Optional("query", wasmcp.String("Text to look for.")),
			wasmcp.Optional("tag", wasmcp.String("Only notes with this tag.")),
			wasmcp.Optional("limit", wasmcp.Integer("Most results (default 20).").With("minimum", 1).With("maximum", 100)),
		),
		OutputSchema: wasmcp.Object(
			wasmcp.Required("total", wasmcp.Integer("Matching notes, before the limit.")),
			wasmcp.Required("results", wasmcp.Array(wasmcp.Object(
				wasmcp.Required("id", wasmcp.String("")),
				wasmcp.Required("uri", wasmcp.String("")),
				wasmcp.Required("title", wasmcp.String("")),
				wasmcp.Required("tags", wasmcp.Array(wasmcp.String(""), "")),
				wasmcp.Required("snippet", wasmcp.String("Text around the first match.")),
			), "")),
		),
		Annotations: &wasmcp.ToolAnnotations{ReadOnlyHint: ptr(true), OpenWorldHint: ptr(false)},
	}, searchNotes)

	plugin.AddResource(wasmcp.Resource{
		URI: indexURI, Name: "index", Title: "Notes index",
		Description: "Every note's id, title, tags and last change, as JSON.", MIMEType: "application/json",
	}, readIndex)
	plugin.AddResourceTemplate(wasmcp.ResourceTemplate{
		URITemplate: noteTemplate, Name: "note", Title: "Note",
		Description: "One note as Markdown.", MIMEType: "text/markdown",
	}, readNote)
	plugin.AddResourceLister(listNotes)
	plugin.AddResourceCompletion(noteTemplate, completeNoteID)

	plugin.AddPrompt(wasmcp.Prompt{
		Name: "summarize_note", Title: "Summarize a note",
		Description: "Asks the model to summarize one note.",
		Arguments: []wasmcp.PromptArgument{
			{Name: "id", Description: "The note to summarize.", Required: true},
			{Name: "style", Description: "How: one sentence, bullet points, executive summary (default bullet points)."},
		},
	}, summarizePrompt)
	plugin.AddPrompt(wasmcp.Prompt{
		Name: "compare_notes", Title: "Compare two notes",
		Description: "Asks the model what two notes agree and disagree on.",
		Arguments: []wasmcp.PromptArgument{
			{Name: "first", Description: "A note id.", Required: true},
			{Name: "second", Description: "Another note id.", Required: true},
		},
	}, comparePrompt)
	plugin.AddPromptCompletion("summarize_note", completePromptArgs)
	plugin.AddPromptCompletion("compare_notes", completePromptArgs)

	wasmcp.Serve(plugin)
}

func ptr[T any](v T) *T { return &v }

func main() {} // required by Go; a reactor never runs it
