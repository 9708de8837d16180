package mcp

import (
	"encoding/json"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Extension negotiation, in one place (docs/extensions/overview.mdx of
// the MCP specification): the server lists the extensions it supports
// in capabilities.extensions — of the initialize result on legacy
// versions, of server/discover on 2026-07-28 — and a client lists its own
// in its capabilities: the initialize capabilities of a legacy session,
// or each 2026-07-28 request's
// _meta["io.modelcontextprotocol/clientCapabilities"]. Request.
// ClientCapabilities holds whichever applies, so HasExtension answers for
// both eras.
const (
	// ExtTasks is the tasks extension (2026-07-28; 2025-11-25 has tasks
	// in its core capabilities instead).
	ExtTasks = "io.modelcontextprotocol/tasks"
	// ExtUI is MCP Apps (modelcontextprotocol/ext-apps, 2026-01-26).
	ExtUI = "io.modelcontextprotocol/ui"
	// ExtSkills is Skills (modelcontextprotocol/ext-skills).
	ExtSkills = "io.modelcontextprotocol/skills"

	// UIMimeType is the MIME type of an MCP Apps HTML resource.
	UIMimeType = "text/html;profile=mcp-app"
)

const extTasks = ExtTasks

// hasExtension reports whether client capabilities caps declare the
// extension id (any value but null).
func hasExtension(caps []byte, id string) bool {
	ext, ok := jsonscan.Member(caps, "extensions")
	if !ok {
		return false
	}
	v, ok := jsonscan.Member(ext, id)
	return ok && jsonscan.Kind(v) != 'z'
}

// HasExtension reports whether the client of r declared the extension id
// in its capabilities (see the const block above for where they come
// from).
func (r *Request) HasExtension(id string) bool {
	return hasExtension(r.ClientCapabilities, id)
}

// hasTasksExtension reports whether client capabilities caps declare the
// tasks extension.
func hasTasksExtension(caps []byte) bool { return hasExtension(caps, extTasks) }

// missingExtension is the -32021 error for a request that needs the
// client extension id.
func missingExtension(id string) *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeMissingClientCapability,
		Message: "Missing required client capability: the " + id + " extension",
		Data:    json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + id + `":{}}}}`),
	}
}

var errNeedTasksExtension = missingExtension(extTasks)

// appendExtensions appends the ,"extensions":{...} member of the server
// capabilities for f as version has it, or nothing when there are none.
// Tasks is an extension only on 2026-07-28 (2025-11-25 has the core
// tasks capability); UI and Skills are advertised on every version, as
// their specifications put them in capabilities.extensions of initialize
// as well.
func appendExtensions(b []byte, f Features, version string) []byte {
	n := 0
	add := func(id, settings string) {
		if n == 0 {
			b = append(b, `,"extensions":{`...)
		} else {
			b = append(b, ',')
		}
		n++
		b = append(b, '"')
		b = append(b, id...)
		b = append(b, `":`...)
		b = append(b, settings...)
	}
	if f.Tools && version == version20260728 {
		add(ExtTasks, "{}")
	}
	if f.UI {
		add(ExtUI, `{"mimeTypes":["`+UIMimeType+`"]}`)
	}
	if f.Skills && f.Resources {
		if f.DirectoryRead {
			add(ExtSkills, `{"directoryRead":true}`)
		} else {
			add(ExtSkills, "{}")
		}
	}
	if n > 0 {
		b = append(b, '}')
	}
	return b
}
