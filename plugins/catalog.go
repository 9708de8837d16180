package plugins

import (
	"encoding/json"
	"fmt"
)

// catalog is an immutable index of everything the loaded plugins expose.
type catalog struct {
	plugins []*Plugin

	tools     map[string]*toolEntry
	prompts   map[string]*promptEntry
	resources map[string]*resourceEntry
	templates []*templateEntry

	toolsJSON     []json.RawMessage
	promptsJSON   []json.RawMessage
	resourcesJSON []json.RawMessage
	templatesJSON []json.RawMessage

	// The plugin of each item of the lists above, in the same order, and
	// whether any plugin is restricted to scopes.
	toolOwners, promptOwners, resourceOwners, templateOwners []*Plugin
	scoped                                                   bool
}

// Collision is two plugins exposing the same tool, prompt, resource URI or
// resource template. The loser is the later plugin in load order.
type Collision struct {
	Kind   string // "tool", "prompt", "resource", "resource template"
	Name   string
	winner *Plugin
	loser  *Plugin
}

// Error names both plugins.
func (c *Collision) Error() string {
	return fmt.Sprintf("%s %q is exposed by both plugin %q (%s) and plugin %q (%s)",
		c.Kind, c.Name, c.winner.name, c.winner.spec.Path, c.loser.name, c.loser.spec.Path)
}

// buildCatalog indexes plugins in order. A plugin with any collision is
// reported (once, for its first collision) and must be left out by the
// caller, who then builds again.
func buildCatalog(plugins []*Plugin) (*catalog, []*Collision) {
	c := &catalog{
		plugins:   plugins,
		tools:     map[string]*toolEntry{},
		prompts:   map[string]*promptEntry{},
		resources: map[string]*resourceEntry{},
	}
	templates := map[string]*templateEntry{}
	var collisions []*Collision
	for _, p := range plugins {
		var col *Collision
		for _, t := range p.tools {
			if w, ok := c.tools[t.name]; ok && col == nil {
				col = &Collision{Kind: "tool", Name: t.name, winner: w.plugin, loser: p}
			}
		}
		for _, e := range p.prompts {
			if w, ok := c.prompts[e.name]; ok && col == nil {
				col = &Collision{Kind: "prompt", Name: e.name, winner: w.plugin, loser: p}
			}
		}
		for _, e := range p.resources {
			if w, ok := c.resources[e.uri]; ok && col == nil {
				col = &Collision{Kind: "resource", Name: e.uri, winner: w.plugin, loser: p}
			}
		}
		for _, e := range p.templates {
			if w, ok := templates[e.tmpl.String()]; ok && col == nil {
				col = &Collision{Kind: "resource template", Name: e.tmpl.String(), winner: w.plugin, loser: p}
			}
		}
		if col != nil {
			collisions = append(collisions, col)
			continue
		}
		c.scoped = c.scoped || len(p.spec.Scopes) > 0
		for _, t := range p.tools {
			c.tools[t.name] = t
			c.toolsJSON = append(c.toolsJSON, t.raw)
			c.toolOwners = append(c.toolOwners, p)
		}
		for _, e := range p.prompts {
			c.prompts[e.name] = e
			c.promptsJSON = append(c.promptsJSON, e.raw)
			c.promptOwners = append(c.promptOwners, p)
		}
		for _, e := range p.resources {
			c.resources[e.uri] = e
			c.resourcesJSON = append(c.resourcesJSON, e.raw)
			c.resourceOwners = append(c.resourceOwners, p)
		}
		for _, e := range p.templates {
			templates[e.tmpl.String()] = e
			c.templates = append(c.templates, e)
			c.templatesJSON = append(c.templatesJSON, e.raw)
			c.templateOwners = append(c.templateOwners, p)
		}
	}
	return c, collisions
}

// findResource returns the plugin that serves uri for req: a static
// resource, else the first matching template, among the plugins req may
// see.
func (c *catalog) findResource(uri string, req *Request) (*Plugin, bool) {
	if e, ok := c.resources[uri]; ok && req.mayUse(e.plugin) {
		return e.plugin, true
	}
	for _, t := range c.templates {
		if _, ok := t.tmpl.Match(uri); ok && req.mayUse(t.plugin) {
			return t.plugin, true
		}
	}
	return nil, false
}
