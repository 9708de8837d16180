package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

type noteOut struct {
	ID      string   `json:"id"`
	URI     string   `json:"uri"`
	Title   string   `json:"title"`
	Tags    []string `json:"tags"`
	Updated string   `json:"updated"`
}

// noteResult is a tool result for a note: structured content plus a link
// to the note's resource.
func noteResult(n *Note) (*wasmcp.Result, error) {
	r, err := wasmcp.StructuredResult(noteOut{ID: n.ID, URI: noteURI(n.ID), Title: n.Title, Tags: n.Tags, Updated: n.Updated})
	if err != nil {
		return nil, err
	}
	r.Content = append(r.Content, wasmcp.ResourceLink(wasmcp.Resource{URI: noteURI(n.ID), Name: n.ID, Title: n.Title, MIMEType: "text/markdown"}))
	return r, nil
}

func notFound(id string) error {
	return fmt.Errorf("no note with id %q; search_notes lists the ids", id)
}

type addIn struct {
	Title string   `json:"title"`
	Body  string   `json:"body"`
	Tags  []string `json:"tags"`
}

func addNote(c *wasmcp.Context, in addIn) (*wasmcp.Result, error) {
	title := strings.TrimSpace(in.Title)
	switch {
	case title == "":
		return nil, errors.New("title must not be empty")
	case len(title) > maxTitle:
		return nil, fmt.Errorf("title is %d bytes, over the limit of %d", len(title), maxTitle)
	case len(in.Body) > maxBody:
		return nil, fmt.Errorf("body is %d bytes, over the limit of %d", len(in.Body), maxBody)
	}
	tags, err := cleanTags(in.Tags)
	if err != nil {
		return nil, err
	}
	base := noteID(title)
	id := base
	for i := 2; ; i++ {
		existing, err := load(c, id)
		if err != nil {
			return nil, err
		}
		if existing == nil {
			break
		}
		if i > 1000 {
			return nil, fmt.Errorf("too many notes titled like %q", title)
		}
		id = base + "-" + strconv.Itoa(i)
	}
	t := stamp()
	n := &Note{ID: id, Title: title, Body: in.Body, Tags: tags, Created: t, Updated: t}
	if err := save(c, n); err != nil {
		return nil, err
	}
	changed(c, id, true)
	c.Logf(wasmcp.LevelInfo, "added note %s", id)
	return noteResult(n)
}

type updateIn struct {
	ID     string    `json:"id"`
	Title  *string   `json:"title"`
	Body   *string   `json:"body"`
	Append *string   `json:"append"`
	Tags   *[]string `json:"tags"`
}

func updateNote(c *wasmcp.Context, in updateIn) (*wasmcp.Result, error) {
	n, err := load(c, in.ID)
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, notFound(in.ID)
	}
	if in.Title != nil {
		t := strings.TrimSpace(*in.Title)
		if t == "" || len(t) > maxTitle {
			return nil, fmt.Errorf("title must have 1 to %d bytes", maxTitle)
		}
		n.Title = t
	}
	if in.Body != nil {
		n.Body = *in.Body
	}
	if in.Append != nil {
		if n.Body != "" && !strings.HasSuffix(n.Body, "\n") {
			n.Body += "\n"
		}
		n.Body += *in.Append
	}
	if len(n.Body) > maxBody {
		return nil, fmt.Errorf("body would be %d bytes, over the limit of %d", len(n.Body), maxBody)
	}
	if in.Tags != nil {
		if n.Tags, err = cleanTags(*in.Tags); err != nil {
			return nil, err
		}
	}
	n.Updated = stamp()
	if err := save(c, n); err != nil {
		return nil, err
	}
	// The id does not change, but the title shown in resource lists may.
	changed(c, n.ID, in.Title != nil)
	return noteResult(n)
}

type deleteIn struct {
	ID      string `json:"id"`
	Confirm bool   `json:"confirm"`
}

type deleteOut struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// confirmKey is the input request key of the delete confirmation.
const confirmKey = "confirm_delete"

func deleteNote(c *wasmcp.Context, in deleteIn) (deleteOut, error) {
	n, err := load(c, in.ID)
	if err != nil {
		return deleteOut{}, err
	}
	if n == nil {
		return deleteOut{}, notFound(in.ID)
	}
	if !in.Confirm {
		answer, err := c.ElicitResponse(confirmKey)
		if err == nil && c.RequestState != "delete:"+n.ID {
			err = wasmcp.ErrNoInputResponse // an answer about another note: ask again
		}
		switch {
		case errors.Is(err, wasmcp.ErrNoInputResponse):
			if !c.HasClientCapability("elicitation") {
				return deleteOut{}, fmt.Errorf("this client cannot ask the user to confirm; call delete_note again with confirm: true if the user agreed to delete %q", n.Title)
			}
			return deleteOut{}, &wasmcp.InputRequired{
				Requests: map[string]wasmcp.InputRequest{
					confirmKey: wasmcp.NewElicitRequest(
						fmt.Sprintf("Delete the note %q? This cannot be undone.", n.Title),
						wasmcp.Object(wasmcp.Required("confirm", wasmcp.Boolean("Delete the note"))),
					),
				},
				State: "delete:" + n.ID,
			}
		case err != nil:
			return deleteOut{}, err
		}
		var form struct {
			Confirm bool `json:"confirm"`
		}
		if !answer.Accepted() || answer.Decode(&form) != nil || !form.Confirm {
			return deleteOut{ID: n.ID, Deleted: false}, nil
		}
	}
	if err := c.KVDelete(keyPrefix + n.ID); err != nil {
		return deleteOut{}, storeError(err)
	}
	changed(c, n.ID, true)
	c.Logf(wasmcp.LevelInfo, "deleted note %s", n.ID)
	return deleteOut{ID: n.ID, Deleted: true}, nil
}

type searchIn struct {
	Query string `json:"query"`
	Tag   string `json:"tag"`
	Limit *int   `json:"limit"`
}

type searchHit struct {
	ID      string   `json:"id"`
	URI     string   `json:"uri"`
	Title   string   `json:"title"`
	Tags    []string `json:"tags"`
	Snippet string   `json:"snippet"`
}

type searchOut struct {
	Total   int         `json:"total"`
	Results []searchHit `json:"results"`
}

func searchNotes(c *wasmcp.Context, in searchIn) (*wasmcp.Result, error) {
	limit := 20
	if in.Limit != nil {
		limit = *in.Limit
	}
	if limit < 1 || limit > 100 {
		return nil, fmt.Errorf("limit must be between 1 and 100, got %d", limit)
	}
	notes, err := all(c)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(strings.TrimSpace(in.Query))
	tag := strings.ToLower(strings.TrimSpace(in.Tag))
	type scored struct {
		n     *Note
		score int
	}
	var hits []scored
	for _, n := range notes {
		if tag != "" && !slices.Contains(n.Tags, tag) {
			continue
		}
		score := 0
		switch {
		case q == "":
			score = 1
		case strings.Contains(strings.ToLower(n.Title), q):
			score = 3
		case slices.Contains(n.Tags, q):
			score = 2
		case strings.Contains(strings.ToLower(n.Body), q):
			score = 1
		}
		if score > 0 {
			hits = append(hits, scored{n, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].score > hits[j].score })
	out := searchOut{Total: len(hits), Results: []searchHit{}}
	var links []wasmcp.Content
	for i, h := range hits {
		if i == limit {
			break
		}
		out.Results = append(out.Results, searchHit{ID: h.n.ID, URI: noteURI(h.n.ID), Title: h.n.Title, Tags: h.n.Tags, Snippet: snippet(h.n.Body, q)})
		links = append(links, wasmcp.ResourceLink(wasmcp.Resource{URI: noteURI(h.n.ID), Name: h.n.ID, Title: h.n.Title, MIMEType: "text/markdown"}))
	}
	r, err := wasmcp.StructuredResult(out)
	if err != nil {
		return nil, err
	}
	r.Content = append(r.Content, links...)
	return r, nil
}

// snippet returns up to about 100 characters of body around the first
// match of q (or its start), on one line.
func snippet(body, q string) string {
	runes := []rune(strings.Join(strings.Fields(body), " "))
	start := 0
	if q != "" {
		lower, qr := []rune(strings.ToLower(string(runes))), []rune(q)
		if len(lower) == len(runes) {
			for i := 0; i+len(qr) <= len(lower); i++ {
				if string(lower[i:i+len(qr)]) == q {
					start = max(0, i-40)
					break
				}
			}
		}
	}
	end := min(len(runes), start+100)
	s := string(runes[start:end])
	if start > 0 {
		s = "…" + s
	}
	if end < len(runes) {
		s += "…"
	}
	return s
}

func readNote(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
	n, err := load(c, r.Vars["id"])
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, wasmcp.ErrResourceNotFound
	}
	return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "text/markdown", markdown(n))}, nil
}

func readIndex(c *wasmcp.Context, r *wasmcp.ResourceRequest) ([]wasmcp.ResourceContents, error) {
	notes, err := all(c)
	if err != nil {
		return nil, err
	}
	index := []noteOut{}
	for _, n := range notes {
		index = append(index, noteOut{ID: n.ID, URI: noteURI(n.ID), Title: n.Title, Tags: n.Tags, Updated: n.Updated})
	}
	b, err := json.MarshalIndent(map[string]any{"notes": index}, "", "  ")
	if err != nil {
		return nil, err
	}
	return []wasmcp.ResourceContents{wasmcp.TextContents(r.URI, "application/json", string(b))}, nil
}

func listNotes(c *wasmcp.Context) ([]wasmcp.Resource, error) {
	notes, err := all(c)
	if err != nil {
		return nil, err
	}
	var out []wasmcp.Resource
	for _, n := range notes {
		out = append(out, wasmcp.Resource{URI: noteURI(n.ID), Name: n.ID, Title: n.Title, MIMEType: "text/markdown", Size: int64(len(markdown(n)))})
	}
	return out, nil
}

func summarizePrompt(c *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
	n, err := load(c, args["id"])
	if err != nil {
		return nil, err
	}
	if n == nil {
		return nil, wasmcp.NewRPCError(wasmcp.CodeInvalidParams, notFound(args["id"]).Error(), nil)
	}
	style := args["style"]
	if style == "" {
		style = "bullet points"
	}
	return &wasmcp.PromptResult{
		Description: "Summarize the note " + n.Title,
		Messages: []wasmcp.PromptMessage{
			wasmcp.UserMessage(wasmcp.EmbeddedResource(wasmcp.TextContents(noteURI(n.ID), "text/markdown", markdown(n)))),
			wasmcp.UserMessage(wasmcp.Text(fmt.Sprintf("Summarize the note above as %s. Keep its facts; do not add new ones.", style))),
		},
	}, nil
}

func comparePrompt(c *wasmcp.Context, args map[string]string) (*wasmcp.PromptResult, error) {
	var msgs []wasmcp.PromptMessage
	for _, id := range []string{args["first"], args["second"]} {
		n, err := load(c, id)
		if err != nil {
			return nil, err
		}
		if n == nil {
			return nil, wasmcp.NewRPCError(wasmcp.CodeInvalidParams, notFound(id).Error(), nil)
		}
		msgs = append(msgs, wasmcp.UserMessage(wasmcp.EmbeddedResource(wasmcp.TextContents(noteURI(n.ID), "text/markdown", markdown(n)))))
	}
	msgs = append(msgs, wasmcp.UserMessage(wasmcp.Text("Compare the two notes above: what do they agree on, where do they differ, and what does one say that the other leaves out?")))
	return &wasmcp.PromptResult{Description: "Compare two notes", Messages: msgs}, nil
}

var styles = []string{"bullet points", "executive summary", "one sentence", "questions and answers", "tweet"}

func completePromptArgs(c *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
	if r.Argument == "style" {
		return wasmcp.CompleteFrom(styles, r.Value), nil
	}
	return completeNoteID(c, r)
}

func completeNoteID(c *wasmcp.Context, r *wasmcp.CompleteRequest) (*wasmcp.Completion, error) {
	list, err := ids(c)
	if err != nil {
		return nil, err
	}
	return wasmcp.CompleteFrom(list, r.Value), nil
}
