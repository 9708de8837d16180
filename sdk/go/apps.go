package wasmcp

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// MCP Apps (io.modelcontextprotocol/ui) and Skills
// (io.modelcontextprotocol/skills) from a plugin. An app is a ui://
// resource holding one HTML document that a client with the extension
// renders in a sandboxed iframe when a tool that points at it returns;
// the app talks to the client over postMessage and may call the plugin's
// tools back. A skill is a set of files (a SKILL.md and its supporting
// files) that the host serves as skill:// resources; it is data, never
// run. docs/apps-and-skills.md says how the host serves both.

// AppMIMEType is the MIME type of an MCP Apps HTML resource.
const AppMIMEType = "text/html;profile=mcp-app"

// Tool visibilities (_meta.ui.visibility): who may call a tool that is
// linked to an app.
const (
	// VisibleToModel lists the tool to the model.
	VisibleToModel = "model"
	// VisibleToApp lets the app call the tool. A tool visible only to the
	// app is app-only: the host hides it from clients without the
	// extension.
	VisibleToApp = "app"
)

// AppCSP is the content security policy an app asks for
// (_meta.ui.csp): the origins it may reach. Empty lists ask for nothing.
// The host keeps only the origins that the plugin's http grants cover.
type AppCSP struct {
	// ConnectDomains are origins for fetch, XHR and WebSocket
	// (connect-src).
	ConnectDomains []string `json:"connectDomains,omitempty"`
	// ResourceDomains are origins for scripts, images, styles, fonts
	// and media.
	ResourceDomains []string `json:"resourceDomains,omitempty"`
	// FrameDomains are origins for nested iframes (frame-src).
	FrameDomains []string `json:"frameDomains,omitempty"`
	// BaseURIDomains are the allowed base URIs (base-uri).
	BaseURIDomains []string `json:"baseUriDomains,omitempty"`
}

// AppPermissions are the browser features an app asks for
// (_meta.ui.permissions); the client may grant them.
type AppPermissions struct {
	Camera         bool
	Microphone     bool
	Geolocation    bool
	ClipboardWrite bool
}

// App describes an app: a ui:// resource and its _meta.ui.
type App struct {
	// URI is the app's ui:// URI, e.g. "ui://dashboard/view". The host
	// puts the plugin's prefix in front of its authority when the plugin
	// has one.
	URI string
	// Name and Title name the resource; Description says what it shows.
	Name        string
	Title       string
	Description string
	// HTML is the app: one HTML5 document, scripts and styles inline (or
	// from ResourceDomains).
	HTML string
	// CSP is what the app asks to reach; nil asks for nothing.
	CSP *AppCSP
	// Permissions are the browser features it asks for.
	Permissions AppPermissions
	// Domain is the dedicated sandbox origin it asks for (host-specific;
	// usually empty).
	Domain string
	// PrefersBorder asks the client for a border and background (nil:
	// the client decides).
	PrefersBorder *bool
}

// meta is the app's _meta object ({"ui": {...}}).
func (a App) meta() map[string]any {
	ui := map[string]any{}
	if a.CSP != nil {
		ui["csp"] = a.CSP
	}
	perms := map[string]any{}
	for name, on := range map[string]bool{"camera": a.Permissions.Camera, "microphone": a.Permissions.Microphone,
		"geolocation": a.Permissions.Geolocation, "clipboardWrite": a.Permissions.ClipboardWrite} {
		if on {
			perms[name] = map[string]any{}
		}
	}
	if len(perms) > 0 {
		ui["permissions"] = perms
	}
	if a.Domain != "" {
		ui["domain"] = a.Domain
	}
	if a.PrefersBorder != nil {
		ui["prefersBorder"] = *a.PrefersBorder
	}
	return map[string]any{"ui": ui}
}

// AddApp registers the app as a resource of type [AppMIMEType] whose
// listing and reads carry its _meta.ui. It panics on a URI that is not
// ui://, on an empty document and on a duplicate URI.
func (p *Plugin) AddApp(a App) {
	if !strings.HasPrefix(a.URI, "ui://") || len(a.URI) == len("ui://") {
		panic(fmt.Sprintf("wasmcp: app %q: the URI must be ui://...", a.URI))
	}
	if strings.TrimSpace(a.HTML) == "" {
		panic(fmt.Sprintf("wasmcp: app %q: no HTML", a.URI))
	}
	meta := a.meta()
	p.AddResource(Resource{URI: a.URI, Name: a.Name, Title: a.Title, Description: a.Description,
		MIMEType: AppMIMEType, Size: int64(len(a.HTML)), Meta: meta},
		func(c *Context, r *ResourceRequest) ([]ResourceContents, error) {
			return []ResourceContents{{URI: r.URI, MIMEType: AppMIMEType, Text: a.HTML, Meta: meta}}, nil
		})
}

// UIMeta returns the _meta object that links a tool to the app at
// resourceURI, visible to whom visibility says (none: the model and the
// app). Use it as Tool.Meta, or merge its "ui" key into one:
//
//	Meta: wasmcp.UIMeta("ui://dashboard/view")                      // the model calls it, the app shows the result
//	Meta: wasmcp.UIMeta("ui://dashboard/view", wasmcp.VisibleToApp) // app-only: the app calls it back
//
// A tool linked to an app still returns text content: clients without
// the extension show only that.
func UIMeta(resourceURI string, visibility ...string) map[string]any {
	ui := map[string]any{"resourceUri": resourceURI}
	if len(visibility) > 0 {
		for _, v := range visibility {
			if v != VisibleToModel && v != VisibleToApp {
				panic(fmt.Sprintf("wasmcp: visibility %q: want %q or %q", v, VisibleToModel, VisibleToApp))
			}
		}
		ui["visibility"] = slices.Clone(visibility)
	}
	return map[string]any{"ui": ui}
}

// Skill is an Agent Skill embedded in the plugin: its files by path
// inside the skill ("/"-separated), with a SKILL.md whose YAML front
// matter has name and description. The host serves it as
// skill://<plugin>/<name>/<path> resources, with sha256 digests, through
// skills/list and skills/get.
type Skill struct {
	Files map[string]string `json:"files"`
}

// AddSkill registers a skill (see [Skill]). It panics when the files lack
// SKILL.md; the host checks the rest (front matter, names, limits) when
// it loads the plugin and logs what it refuses.
func (p *Plugin) AddSkill(s Skill) {
	if _, ok := s.Files["SKILL.md"]; !ok {
		panic("wasmcp: skill without SKILL.md")
	}
	p.skills = append(p.skills, Skill{Files: maps.Clone(s.Files)})
}
