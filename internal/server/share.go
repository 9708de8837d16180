package server

import (
	"encoding/json"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/plugins"
)

// Each plugin's calls share the server's run slots ([limits]
// plugin_concurrent): the engine asks SlotShare which plugin a call goes
// to before it takes a slot. Tools, prompts (and their completions) and
// static resources are found by name, other resources by the registry's
// own template lookup.

// shareIndex maps the names a client calls to the plugin serving them,
// for one set of loaded plugins.
type shareIndex struct {
	plugins []*plugins.Plugin
	names   map[string]string // "t name", "p name", "r uri" -> plugin name
}

// SlotShare implements mcp.SlotSharer: the name of the plugin the call
// goes to, or "". The engine has parsed the params (Request.Parsed).
func (p *provider) SlotShare(r *mcp.Request) string {
	var kind byte
	var name string
	switch r.Method {
	case "tools/call":
		kind, name = 't', r.Parsed.Name
	case "prompts/get":
		kind, name = 'p', r.Parsed.Name
	case "resources/read":
		kind, name = 'r', r.Parsed.URI
	case "completion/complete":
		if r.Parsed.Ref.Type != "ref/prompt" {
			return ""
		}
		kind, name = 'p', r.Parsed.Ref.Name
	default:
		return ""
	}
	ix := p.shareIndex()
	// The key ("t name" and so on) is built on the stack: a lookup by
	// string(bytes) does not allocate.
	var buf [64]byte
	key := append(append(buf[:0], kind, ' '), name...)
	if plugin, ok := ix.names[string(key)]; ok || kind != 'r' {
		return plugin
	}
	// A template: the registry's lookup, which the read itself reuses
	// (a URI is matched against the templates once per request).
	return p.reg.ResourceOwner(name)
}

func member(obj json.RawMessage, name string) string {
	v, ok := jsonscan.Member(obj, name)
	if !ok {
		return ""
	}
	s, _ := jsonscan.String(v)
	return s
}

// shareIndex returns the index of the plugins loaded now, built again
// after a reload.
func (p *provider) shareIndex() *shareIndex {
	if ix := p.shares.Load(); ix != nil && p.reg.Loaded(ix.plugins) {
		return ix
	}
	ps := p.reg.Plugins()
	ix := &shareIndex{plugins: ps, names: map[string]string{}}
	add := func(key, plugin string) {
		if _, ok := ix.names[key]; !ok { // the first plugin wins, as in the catalog
			ix.names[key] = plugin
		}
	}
	for _, pl := range ps {
		m, prefix := pl.Manifest(), pl.Spec().Prefix
		if m == nil {
			continue
		}
		for _, name := range pl.ToolNames() { // as exposed: prefixed, overridden, hidden ones left out
			add("t "+name, pl.Name())
		}
		for _, pr := range m.Prompts {
			add("p "+prefix+member(pr, "name"), pl.Name())
		}
		for _, res := range m.Resources {
			add("r "+member(res, "uri"), pl.Name())
		}
	}
	p.shares.Store(ix)
	return ix
}

var _ mcp.SlotSharer = (*provider)(nil)

type shareCache = atomic.Pointer[shareIndex]
