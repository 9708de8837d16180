package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

type listKind int

const (
	listTools listKind = iota
	listResources
	listTemplates
	listPrompts
	listSkills
	listDirectory
)

// lists are, for each listKind, the member of its result and the Provider
// method that gives its items.
var lists = [...]struct {
	key   string
	items func(Provider, context.Context, *Request) ([]json.RawMessage, error)
}{
	listTools:     {"tools", Provider.Tools},
	listResources: {"resources", Provider.Resources},
	listTemplates: {"resourceTemplates", Provider.ResourceTemplates},
	listPrompts:   {"prompts", Provider.Prompts},
	listSkills:    {"skills", skillsOf},
	listDirectory: {"resources", directoryOf},
}

// directoryOf is the items of resources/directory/read (ext-skills): the
// direct children of the directory resource params.uri, -32602 when it
// names none. serveFeature routes the method here only for a
// DirectoryReader.
func directoryOf(p Provider, ctx context.Context, r *Request) ([]json.RawMessage, error) {
	uri, ok := stringParam(r.Params, "uri")
	if !ok || uri == "" {
		return nil, invalidParams(methodDirRead + ": uri must be a non-empty string")
	}
	dr, ok := p.(DirectoryReader)
	if !ok {
		return nil, methodNotFound(methodDirRead)
	}
	items, found, err := dr.ReadDirectory(ctx, r, uri)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, invalidParams(uri + " is not a directory resource")
	}
	return items, nil
}

// skillsOf is the items of skills/list: serveFeature routes the method
// here only for a SkillProvider.
func skillsOf(p Provider, ctx context.Context, r *Request) ([]json.RawMessage, error) {
	sp, ok := p.(SkillProvider)
	if !ok {
		return nil, nil
	}
	return sp.Skills(ctx, r)
}

// getSkill answers skills/get: the entry whose uri is params.uri, else
// -32602 (ext-skills: the code resources/read uses for unknown
// resources).
func (s *Server) getSkill(cl *call) ([]byte, error) {
	uri, ok := stringParam(cl.req.Params, "uri")
	if !ok || uri == "" {
		return nil, invalidParams(methodSkillsGet + ": uri must be a non-empty string")
	}
	items, err := skillsOf(s.p, cl.ctx, &cl.req)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		if u, _ := stringParam(it, "uri"); u == uri && jsonscan.Valid(it) {
			b := append([]byte(`{"skill":`), appendCompact(nil, it)...)
			if cl.req.Stateless {
				b = append(b, `,"resultType":"complete"`...)
				b = appendTTL(b, s.opts.ListTTL, &cl.req)
			}
			return append(b, '}'), nil
		}
	}
	return nil, invalidParams(methodSkillsGet + ": no skill has the uri " + strconv.Quote(uri))
}

// list answers one of the four list methods, one page at a time. Items
// that are not valid JSON objects are dropped (and logged) so one broken
// item cannot corrupt the stream.
func (s *Server) list(cl *call, kind listKind) ([]byte, error) {
	offset, err := parseCursor(cl.req.Params)
	if err != nil {
		return nil, err
	}
	r := &cl.req
	key := lists[kind].key
	items, err := lists[kind].items(s.p, cl.ctx, r)
	if err != nil {
		return nil, err
	}
	if offset > len(items) {
		offset = len(items)
	}
	end := min(offset+s.opts.PageSize, len(items))
	size := 64
	for _, it := range items[offset:end] {
		size += len(it) + 1
	}
	b := make([]byte, 0, size)
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":[`...)
	first := true
	for _, it := range items[offset:end] {
		if !jsonscan.Valid(it) || jsonscan.Kind(it) != 'o' {
			s.log.Error("provider list item is not a JSON object; dropped", "list", key)
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendCompact(b, it)
	}
	b = append(b, ']')
	if end < len(items) {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, makeCursor(end)...)
		b = append(b, '"')
	}
	if r.Stateless {
		b = append(b, `,"resultType":"complete"`...)
		b = appendTTL(b, s.opts.ListTTL, r)
	}
	return append(b, '}'), nil
}

// parseCursor reads params.cursor: absent, null or "" is the first page.
func parseCursor(params []byte) (int, error) {
	v, ok := jsonscan.Member(params, "cursor")
	if !ok || jsonscan.Kind(v) == 'z' {
		return 0, nil
	}
	c, ok := jsonscan.String(v)
	if !ok {
		return 0, invalidParams("invalid cursor: not a string")
	}
	if c == "" {
		return 0, nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(raw) < 2 || raw[0] != 'o' {
		return 0, invalidParams("invalid cursor")
	}
	n, err := strconv.Atoi(string(raw[1:]))
	if err != nil || n < 0 || strconv.Itoa(n) != string(raw[1:]) {
		return 0, invalidParams("invalid cursor")
	}
	return n, nil
}

func makeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString(strconv.AppendInt([]byte{'o'}, int64(offset), 10))
}
