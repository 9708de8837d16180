package plugins

import (
	"encoding/json"
	"slices"
)

// mayUse reports whether the caller of req may see plugin p: always when
// the caller is unrestricted or p has no scopes, else when the caller has
// one of p's scopes.
func (req *Request) mayUse(p *Plugin) bool {
	if req == nil || !req.Restricted || len(p.spec.Scopes) == 0 {
		return true
	}
	for _, s := range p.spec.Scopes {
		if slices.Contains(req.Scopes, s) {
			return true
		}
	}
	return false
}

// visible filters items (owned by owners, same order) to those req may
// see; the common case (nothing scoped, or an unrestricted caller) returns
// items itself.
func visible(c *catalog, items []json.RawMessage, owners []*Plugin, req *Request) []json.RawMessage {
	if !c.scoped || req == nil || !req.Restricted {
		return items
	}
	out := make([]json.RawMessage, 0, len(items))
	for i, it := range items {
		if req.mayUse(owners[i]) {
			out = append(out, it)
		}
	}
	return out
}

// ToolsFor returns the tools the caller of req may see, as MCP JSON in a
// stable order.
//
// App-only tools (apps.go) are left out for a client without the MCP Apps
// extension: no app of its can call them.
func (r *Registry) ToolsFor(req *Request) []json.RawMessage {
	c := r.cat.Load()
	items := visible(c, c.toolsJSON, c.toolOwners, req)
	if !c.anyAppOnly || req.appClient() {
		return items
	}
	all := c.toolsJSON
	if len(items) != len(all) {
		// visible filtered: recompute with both rules.
		out := make([]json.RawMessage, 0, len(all))
		for i, it := range all {
			if !c.appOnly[i] && req.mayUse(c.toolOwners[i]) {
				out = append(out, it)
			}
		}
		return out
	}
	out := make([]json.RawMessage, 0, len(items))
	for i, it := range items {
		if !c.appOnly[i] {
			out = append(out, it)
		}
	}
	return out
}

// appClient reports whether the client of req has the MCP Apps
// extension.
func (req *Request) appClient() bool {
	return req != nil && req.Client != nil && hasUIExtension(req.ClientCapabilities)
}

// PromptsFor returns the prompts the caller of req may see.
func (r *Registry) PromptsFor(req *Request) []json.RawMessage {
	c := r.cat.Load()
	return visible(c, c.promptsJSON, c.promptOwners, req)
}

// ResourcesFor returns the resources the caller of req may see.
func (r *Registry) ResourcesFor(req *Request) []json.RawMessage {
	c := r.cat.Load()
	return visible(c, c.resourcesJSON, c.resourceOwners, req)
}

// ResourceTemplatesFor returns the resource templates the caller of req
// may see.
func (r *Registry) ResourceTemplatesFor(req *Request) []json.RawMessage {
	c := r.cat.Load()
	return visible(c, c.templatesJSON, c.templateOwners, req)
}
