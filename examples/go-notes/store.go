package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/examples/internal/slug"
	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
)

const (
	keyPrefix    = "note:"
	indexURI     = "notes://index"
	noteTemplate = "notes://{id}"
	maxTitle     = 200
	maxBody      = 64 << 10
	maxTags      = 10
	maxIDLen     = 48
)

// now is the clock; tests replace it.
var now = time.Now

// Note is one stored note.
type Note struct {
	ID      string   `json:"id"`
	Title   string   `json:"title"`
	Body    string   `json:"body"`
	Tags    []string `json:"tags"`
	Created string   `json:"created"`
	Updated string   `json:"updated"`
}

func noteURI(id string) string { return "notes://" + id }

// storeError explains a key-value failure to the model (and the operator).
func storeError(err error) error {
	if errors.Is(err, wasmcp.ErrDenied) {
		return errors.New("the notes plugin has no storage: the server's operator must grant it the key-value store " +
			"(kv = true under [plugins.grants] for this plugin in wasmcp.toml)")
	}
	return fmt.Errorf("note storage: %w", err)
}

// load returns the note id, or nil if there is none.
func load(c *wasmcp.Context, id string) (*Note, error) {
	if !validID(id) {
		return nil, nil
	}
	v, ok, err := c.KVGet(keyPrefix + id)
	if err != nil {
		return nil, storeError(err)
	}
	if !ok {
		return nil, nil
	}
	var n Note
	if err := json.Unmarshal([]byte(v), &n); err != nil {
		return nil, fmt.Errorf("note %q is corrupt: %w", id, err)
	}
	return &n, nil
}

func save(c *wasmcp.Context, n *Note) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	if err := c.KVSet(keyPrefix+n.ID, string(b), 0); err != nil {
		return storeError(err)
	}
	return nil
}

// ids returns every note id, sorted.
func ids(c *wasmcp.Context) ([]string, error) {
	keys, err := c.KVListAll(keyPrefix)
	if err != nil {
		return nil, storeError(err)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, strings.TrimPrefix(k, keyPrefix))
	}
	sort.Strings(out)
	return out, nil
}

// all returns every note, sorted by id.
func all(c *wasmcp.Context) ([]*Note, error) {
	list, err := ids(c)
	if err != nil {
		return nil, err
	}
	var notes []*Note
	for _, id := range list {
		n, err := load(c, id)
		if err != nil {
			return nil, err
		}
		if n != nil {
			notes = append(notes, n)
		}
	}
	return notes, nil
}

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen+4 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// noteID derives an id from a title: its slug (slug.Make) with "-" of at
// most maxIDLen bytes; "note" when nothing is left.
func noteID(title string) string {
	if s := slug.Make(title, "-", maxIDLen); s != "" {
		return s
	}
	return "note"
}

// cleanTags trims, lower-cases and de-duplicates tags.
func cleanTags(tags []string) ([]string, error) {
	if len(tags) > maxTags {
		return nil, fmt.Errorf("at most %d tags, got %d", maxTags, len(tags))
	}
	out := []string{}
	seen := map[string]bool{}
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out, nil
}

func stamp() string { return now().UTC().Format(time.RFC3339) }

// markdown renders a note for its resource and prompts.
func markdown(n *Note) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", n.Title)
	if len(n.Tags) > 0 {
		fmt.Fprintf(&b, "Tags: %s\n", strings.Join(n.Tags, ", "))
	}
	fmt.Fprintf(&b, "Updated: %s\n\n%s\n", n.Updated, n.Body)
	return b.String()
}

// changed tells the host what a change touched: the note's resource, the
// index, and (when notes come or go) the resource list.
func changed(c *wasmcp.Context, id string, listChanged bool) {
	// Notifications are best effort: a failure must not fail the change.
	_ = c.NotifyResourceUpdated(noteURI(id))
	_ = c.NotifyResourceUpdated(indexURI)
	if listChanged {
		_ = c.NotifyListChanged(wasmcp.ListResources)
	}
}
