package plugins

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
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
	// appOnly marks the tools (same order as toolsJSON) that only an
	// app may call; anyAppOnly says whether there is one.
	appOnly    []bool
	anyAppOnly bool

	// matched remembers, for the URIs read lately, the first template
	// that matched: a resources/read looks its URI up twice (the run slot
	// share, then the call), and matching is the costly part.
	matched templateMemo
}

// templateMemo maps a URI to the index of the first template that
// matched it (-1: none), for at most maxMemo URIs (then it starts over).
type templateMemo struct {
	mu sync.Mutex
	m  map[string]int
}

const (
	maxMemo    = 128
	maxMemoURI = 8 << 10 // the engine's default max_uri
)

// firstTemplate returns the index of the first template matching uri, or
// -1.
func (c *catalog) firstTemplate(uri string) int {
	c.matched.mu.Lock()
	i, ok := c.matched.m[uri]
	c.matched.mu.Unlock()
	if ok {
		return i
	}
	i = c.nextTemplate(uri, 0)
	if len(uri) > maxMemoURI {
		return i
	}
	c.matched.mu.Lock()
	if c.matched.m == nil || len(c.matched.m) >= maxMemo {
		c.matched.m = make(map[string]int, maxMemo)
	}
	c.matched.m[uri] = i
	c.matched.mu.Unlock()
	return i
}

// nextTemplate returns the index of the first template from from on that
// matches uri, or -1.
func (c *catalog) nextTemplate(uri string, from int) int {
	for i := from; i < len(c.templates); i++ {
		if c.templates[i].tmpl.Matches(uri) {
			return i
		}
	}
	return -1
}

// Collision is two plugins exposing the same tool, prompt, resource URI or
// resource template. The winner is the plugin already serving (see
// buildCatalog); between two newcomers, the earlier in load order.
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

// buildCatalog indexes plugins, in their order. Names are claimed in
// order of rank (lower first; nil ranks all alike), then of position, so
// that a plugin already serving keeps its names against a newcomer
// whatever the file names. A plugin with any collision is left out and
// reported (once, for its first collision).
func buildCatalog(plugins []*Plugin, rank func(*Plugin) int) (*catalog, []*Collision) {
	order := make([]int, len(plugins))
	for i := range order {
		order[i] = i
	}
	if rank != nil {
		sort.SliceStable(order, func(a, b int) bool { return rank(plugins[order[a]]) < rank(plugins[order[b]]) })
	}
	tools := map[string]*Plugin{}
	prompts := map[string]*Plugin{}
	resources := map[string]*Plugin{}
	templates := map[string]*Plugin{}
	var collisions []*Collision
	lost := map[*Plugin]bool{}
	for _, i := range order {
		p := plugins[i]
		var col *Collision
		check := func(claimed map[string]*Plugin, kind, name string) {
			if w, ok := claimed[name]; ok && col == nil {
				col = &Collision{Kind: kind, Name: name, winner: w, loser: p}
			}
		}
		for _, t := range p.tools {
			check(tools, "tool", t.name)
		}
		for _, e := range p.prompts {
			check(prompts, "prompt", e.name)
		}
		for _, e := range p.resources {
			check(resources, "resource", e.uri)
		}
		for _, e := range p.templates {
			check(templates, "resource template", e.tmpl.String())
		}
		if col != nil {
			collisions = append(collisions, col)
			lost[p] = true
			continue
		}
		for _, t := range p.tools {
			tools[t.name] = p
		}
		for _, e := range p.prompts {
			prompts[e.name] = p
		}
		for _, e := range p.resources {
			resources[e.uri] = p
		}
		for _, e := range p.templates {
			templates[e.tmpl.String()] = p
		}
	}
	c := &catalog{
		tools:     map[string]*toolEntry{},
		prompts:   map[string]*promptEntry{},
		resources: map[string]*resourceEntry{},
	}
	for _, p := range plugins {
		if lost[p] {
			continue
		}
		c.plugins = append(c.plugins, p)
		c.scoped = c.scoped || len(p.spec.Scopes) > 0
		for _, t := range p.tools {
			c.tools[t.name] = t
			c.toolsJSON = append(c.toolsJSON, t.raw)
			c.toolOwners = append(c.toolOwners, p)
			c.appOnly = append(c.appOnly, t.appOnly)
			c.anyAppOnly = c.anyAppOnly || t.appOnly
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
			c.templates = append(c.templates, e)
			c.templatesJSON = append(c.templatesJSON, e.raw)
			c.templateOwners = append(c.templateOwners, p)
		}
	}
	return c, collisions
}

// owner returns the plugin that serves uri for resources/read (a static
// resource, else the first matching template), whatever the caller's
// scopes, or nil.
func (c *catalog) owner(uri string) *Plugin {
	if e, ok := c.resources[uri]; ok {
		return e.plugin
	}
	if i := c.firstTemplate(uri); i >= 0 {
		return c.templates[i].plugin
	}
	return nil
}

// ResourceOwner returns the name of the plugin that serves uri for
// resources/read (catalog.owner), or "": what the run slot share of a
// read needs, from the lookup the read itself reuses.
func (r *Registry) ResourceOwner(uri string) string {
	if p := r.cat.Load().owner(uri); p != nil {
		return p.name
	}
	return ""
}

// findResource returns what serves uri for req: a static resource,
// else the first matching template, among the plugins req may see.
func (c *catalog) findResource(uri string, req *Request) (Item, bool) {
	if e, ok := c.resources[uri]; ok && req.mayUse(e.plugin) {
		return Item{Plugin: e.plugin, Def: e.raw}, true
	}
	for i := c.firstTemplate(uri); i >= 0; i = c.nextTemplate(uri, i+1) {
		if t := c.templates[i]; req.mayUse(t.plugin) {
			return Item{Plugin: t.plugin, Def: t.raw, Template: t.tmpl.String()}, true
		}
	}
	return Item{}, false
}
