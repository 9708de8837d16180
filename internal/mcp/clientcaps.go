package mcp

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// What the server keeps of a client: a legacy session keeps its client's
// capabilities and clientInfo for its whole life (in the session store
// too, read back on every request of a shared session), and a task keeps
// those of the request that started it. A client may send megabytes of
// either, so the server keeps only the members it, or a plugin through
// Request.ClientCapabilities, may use, in bounded form: a few hundred
// bytes, whatever the client sent.
const (
	// maxInitializeBytes bounds the params of initialize (a real client
	// sends well under 2 KiB): past it initialize fails with -32602.
	maxInitializeBytes = 64 << 10
	// maxClientExtensions bounds the extensions kept of a client's
	// capabilities.extensions (the first ones, in the client's order),
	// maxExtensionID the length of an extension id kept, and
	// maxExtensionSettings the settings object kept with it (a longer one
	// is kept as {}).
	maxClientExtensions  = 16
	maxExtensionID       = 128
	maxExtensionSettings = 256
	// maxClientInfoString bounds each string member kept of clientInfo
	// (a longer one is cut at a character boundary).
	maxClientInfoString = 256
)

// capShape is the shape of the capabilities kept: each member named is
// kept when the client sent it, an object member with its own members
// filtered by its shape, a leaf (nil shape) as {} (an object: its
// settings are not read) or as a boolean.
type capShape []capMember

type capMember struct {
	name  string
	shape capShape
}

// clientCapsShape is the ClientCapabilities the server and the plugins'
// contexts read (MCP 2025-11-25 schema): roots (listChanged), sampling
// (context, tools), elicitation (form, url), tasks (list, cancel and
// the task-augmented requests), and extensions (kept apart, see
// appendKeptExtensions). experimental and unknown members are dropped.
var clientCapsShape = capShape{
	{"roots", capShape{{"listChanged", nil}}},
	{"sampling", capShape{{"context", nil}, {"tools", nil}}},
	{"elicitation", capShape{{"form", nil}, {"url", nil}}},
	{"tasks", capShape{{"list", nil}, {"cancel", nil}, {"requests", capShape{
		{"sampling", capShape{{"createMessage", nil}}},
		{"elicitation", capShape{{"create", nil}}},
	}}}},
}

// keptCapabilities returns the bounded form of the client capabilities
// object caps: what clientCapsShape names, and the first
// maxClientExtensions extensions. Anything but an object gives {}.
func keptCapabilities(caps []byte) []byte {
	if jsonscan.Kind(caps) != 'o' {
		return []byte("{}")
	}
	b := appendShape(make([]byte, 0, 64), caps, clientCapsShape)
	if ext, ok := jsonscan.Member(caps, "extensions"); ok && jsonscan.Kind(ext) == 'o' {
		if b = b[:len(b)-1]; len(b) > 1 { // drop the '}'
			b = append(b, ',')
		}
		b = append(b, `"extensions":`...)
		b = appendKeptExtensions(b, ext)
		b = append(b, '}')
	}
	return b
}

// appendShape appends the object obj reduced to shape.
func appendShape(b, obj []byte, shape capShape) []byte {
	b = append(b, '{')
	n := 0
	for _, m := range shape {
		v, ok := jsonscan.Member(obj, m.name)
		if !ok {
			continue
		}
		kind := jsonscan.Kind(v)
		var val []byte
		switch {
		case kind == 'o' && m.shape != nil:
			val = appendShape(nil, v, m.shape)
		case kind == 'o':
			val = []byte("{}")
		case kind == 'b' && v[0] == 't':
			val = []byte("true")
		case kind == 'b':
			val = []byte("false")
		default:
			continue // null or a value of the wrong kind: not declared
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = jsonscan.AppendString(b, m.name)
		b = append(b, ':')
		b = append(b, val...)
	}
	return append(b, '}')
}

// appendKeptExtensions appends the first maxClientExtensions members of
// the extensions object ext whose id is at most maxExtensionID bytes, each
// with its settings (an object of at most maxExtensionSettings bytes,
// else {}). A repeated id is kept once.
func appendKeptExtensions(b, ext []byte) []byte {
	b = append(b, '{')
	it, _ := jsonscan.NewObjectIter(ext)
	var ids []string
	for len(ids) < maxClientExtensions {
		k, v, more := it.Next()
		if !more {
			break
		}
		if len(k) > 6*maxExtensionID {
			continue
		}
		id, ok := jsonscan.String(append(append([]byte{'"'}, k...), '"'))
		if !ok || id == "" || len(id) > maxExtensionID || !utf8.ValidString(id) || jsonscan.Kind(v) == 'z' || contains(ids, id) {
			continue
		}
		if len(ids) > 0 {
			b = append(b, ',')
		}
		ids = append(ids, id)
		b = jsonscan.AppendString(b, id)
		b = append(b, ':')
		if jsonscan.Kind(v) == 'o' && len(v) <= maxExtensionSettings {
			b = appendCompact(b, v)
		} else {
			b = append(b, "{}"...)
		}
	}
	return append(b, '}')
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// clientInfoMembers are the members kept of a clientInfo (Implementation)
// object: its strings; icons and unknown members are dropped.
var clientInfoMembers = []string{"name", "title", "version", "description", "websiteUrl"}

// keptClientInfo returns the bounded form of the clientInfo object info:
// its string members of clientInfoMembers, each at most
// maxClientInfoString bytes. nil when info is not an object.
func keptClientInfo(info []byte) []byte {
	if jsonscan.Kind(info) != 'o' {
		return nil
	}
	b := append(make([]byte, 0, 64), '{')
	for _, name := range clientInfoMembers {
		v, ok := jsonscan.Member(info, name)
		if !ok {
			continue
		}
		s, ok := jsonscan.String(v)
		if !ok {
			continue
		}
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = jsonscan.AppendString(b, name)
		b = append(b, ':')
		b = jsonscan.AppendString(b, cutString(s, maxClientInfoString))
	}
	return append(b, '}')
}

// cutString returns s cut to at most n bytes at a character boundary,
// with invalid UTF-8 replaced.
func cutString(s string, n int) string {
	if len(s) > n {
		i := n
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		s = s[:i]
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// initializeTooLarge is the -32602 error of an initialize whose params
// are past maxInitializeBytes.
func initializeTooLarge(n int) *jsonrpc.Error {
	return invalidParams("initialize: params of " + strconv.Itoa(n) + " bytes; at most " + strconv.Itoa(maxInitializeBytes))
}
