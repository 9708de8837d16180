package plugins

import "encoding/json"

// Item is one tool, prompt, resource or resource template as the
// registry serves it: the plugin that serves it and its definition (the
// MCP JSON clients list). Authorization reads the attributes of a
// target from it, never from the request.
type Item struct {
	Plugin *Plugin
	Def    json.RawMessage
	// Orig is the plugin's own name of a tool or prompt (before its
	// prefix and the operator's override).
	Orig string
	// Template is the URI template a resource URI matched ("" for a
	// static resource), or a template's own.
	Template string
}

// Tool returns the tool exposed as name.
func (r *Registry) Tool(name string) (Item, bool) {
	t := r.cat.Load().tools[name]
	if t == nil {
		return Item{}, false
	}
	return Item{Plugin: t.plugin, Def: t.raw, Orig: t.orig}, true
}

// Prompt returns the prompt exposed as name.
func (r *Registry) Prompt(name string) (Item, bool) {
	e := r.cat.Load().prompts[name]
	if e == nil {
		return Item{}, false
	}
	return Item{Plugin: e.plugin, Def: e.raw, Orig: e.orig}, true
}

// Resource returns what serves uri for the caller of req, as
// ReadResource routes it: the static resource, else the first matching
// template.
func (r *Registry) Resource(uri string, req *Request) (Item, bool) {
	return r.cat.Load().findResource(uri, req)
}

// Template returns the resource template written uriTemplate.
func (r *Registry) Template(uriTemplate string) (Item, bool) {
	for _, t := range r.cat.Load().templates {
		if t.tmpl.String() == uriTemplate {
			return Item{Plugin: t.plugin, Def: t.raw, Template: uriTemplate}, true
		}
	}
	return Item{}, false
}
