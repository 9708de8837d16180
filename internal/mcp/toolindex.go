package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// The tool index: what the engine needs to know of a tool before it calls
// it (its execution.taskSupport, the arguments it annotates with
// x-mcp-header), read from the Provider's tool list as the caller would
// see it, and cached.

// paramHeader is one tool argument annotated with x-mcp-header.
type paramHeader struct {
	prop   string // argument name
	header string // canonical header name, Mcp-Param-{Name}
}

// toolIndex caches the annotated arguments of the tools, by name. An entry
// is trusted while the Provider's list still holds the same tool
// definition at the same position (same bytes), so a lookup costs one
// comparison of that tool, not a pass over the list; the index is rebuilt
// otherwise, and dropped on NotifyListChanged("tools").
type toolIndex struct {
	n      int
	byName map[string]toolEntry
}

type toolEntry struct {
	i           int
	raw         []byte
	headers     []paramHeader
	taskSupport string // execution.taskSupport ("" when absent)
}

func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0] || bytes.Equal(a, b))
}

func (ti *toolIndex) lookup(items []json.RawMessage, tool string) (toolEntry, bool) {
	e, ok := ti.byName[tool]
	if !ok {
		return toolEntry{}, len(items) == ti.n // unknown tool, same list size: trust it
	}
	if e.i < len(items) && sameBytes(items[e.i], e.raw) {
		return e, true
	}
	return toolEntry{}, false
}

// toolTaskSupport returns the execution.taskSupport of tool as the caller
// of cl sees the list ("" for none, or an unknown tool).
func (s *Server) toolTaskSupport(cl *call, tool string) string {
	e, err := s.toolEntry(cl.ctx, cl.req.Client, cl.req.SessionID, tool)
	if err != nil {
		return ""
	}
	return e.taskSupport
}

// listRequests recycles the tools/list Requests that toolEntry makes of
// its own, one per tools/call of some clients (the Provider keeps no
// Request past its return).
var listRequests = sync.Pool{New: func() any { return new(Request) }}

// toolEntry returns what the index knows of tool, from the Provider's
// tool list as a tools/list of client c in session sid ("" for none)
// would see it.
func (s *Server) toolEntry(ctx context.Context, c mcpreq.Client, sid, tool string) (toolEntry, error) {
	req := listRequests.Get().(*Request) // only these four fields are ever set
	req.Method, req.Params, req.Client, req.SessionID = methodToolsList, emptyObject, c, sid
	items, err := s.p.Tools(ctx, req)
	req.Client, req.SessionID = mcpreq.Client{}, ""
	listRequests.Put(req)
	if err != nil {
		return toolEntry{}, err
	}
	if ti := s.tools.Load(); ti != nil {
		if e, ok := ti.lookup(items, tool); ok {
			return e, nil
		}
	}
	ti := buildToolIndex(items)
	s.tools.Store(ti)
	return ti.byName[tool], nil
}

func buildToolIndex(items []json.RawMessage) *toolIndex {
	ti := &toolIndex{n: len(items), byName: make(map[string]toolEntry, len(items))}
	for i, it := range items {
		if !jsonscan.Valid(it) {
			continue
		}
		name, ok := stringParam(it, "name")
		if !ok {
			continue
		}
		e := toolEntry{i: i, raw: it}
		exec, _ := jsonscan.Member(it, "execution")
		e.taskSupport, _ = stringParam(exec, "taskSupport")
		schema, _ := jsonscan.Member(it, "inputSchema")
		props, _ := jsonscan.Member(schema, "properties")
		if pit, ok := jsonscan.NewObjectIter(props); ok {
			for {
				k, v, more := pit.Next()
				if !more {
					break
				}
				hn, ok := stringParam(v, "x-mcp-header")
				if !ok || hn == "" {
					continue
				}
				prop, ok := jsonscan.String(append(append([]byte{'"'}, k...), '"'))
				if !ok {
					continue
				}
				e.headers = append(e.headers, paramHeader{prop: prop, header: http.CanonicalHeaderKey("Mcp-Param-" + hn)})
			}
		}
		ti.byName[name] = e
	}
	return ti
}
