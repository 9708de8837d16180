package wasmcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Plugin holds a plugin's identity and registrations. Create it with
// [New], register features in init, and make it the one the module serves
// with [Serve]. Registration is not safe for concurrent use; handling is
// (one request at a time per instance, as the host guarantees).
type Plugin struct {
	info      Info
	tools     []*toolEntry
	resources []*resourceEntry
	templates []*templateEntry
	prompts   []*promptEntry
	listers   []ResourceLister
	filter    ListFilter
	skills    []Skill

	promptCompletions   map[string]CompletionHandler
	resourceCompletions map[string]CompletionHandler
}

// ToolHandler handles a tools/call with the raw arguments object ("{}" when
// the client sent none). See the package documentation for how results
// and errors are answered.
type ToolHandler func(c *Context, arguments json.RawMessage) (*Result, error)

// ResourceRequest is a resources/read request.
type ResourceRequest struct {
	// URI is the requested URI.
	URI string
	// Vars are the template variables extracted from URI (nil for a
	// static resource), percent-decoded.
	Vars map[string]string
}

// ResourceHandler handles a resources/read. Return [ErrResourceNotFound]
// when the URI names nothing (e.g. a template variable names no record).
type ResourceHandler func(c *Context, r *ResourceRequest) ([]ResourceContents, error)

// ResourceLister lists resources that are only known at run time (stored
// in kv, for instance). It is called for every wasmcp/describe, after
// which the host serves the list; call [Context.NotifyListChanged] with
// [ListResources] when it changes. Listed resources are read through the
// plugin's static resources and templates.
type ResourceLister func(c *Context) ([]Resource, error)

// ListFilter decides, at every wasmcp/describe, whether the registered tool
// (kind [ListTools]) or prompt (kind [ListPrompts]) called name is listed.
// It lets a plugin change its lists at run time from state that every
// instance shares, such as kv (each pooled instance has its own memory): a
// handler changes the state and calls [Context.NotifyListChanged], and
// the host describes the plugin again. The host routes calls only to
// listed names. A filter that panics lists the item.
type ListFilter func(c *Context, kind ListKind, name string) bool

// PromptHandler handles a prompts/get. args holds the client's arguments;
// required ones are present.
type PromptHandler func(c *Context, args map[string]string) (*PromptResult, error)

// CompleteRequest is a completion/complete request.
type CompleteRequest struct {
	// Ref is the prompt name or the resource template being completed.
	Ref string
	// Argument is the name of the argument (or template variable) being
	// completed, and Value what the user typed so far.
	Argument string
	Value    string
	// Arguments are the values of the other, already resolved arguments.
	Arguments map[string]string
}

// CompletionHandler suggests values for a prompt argument or template
// variable. [CompleteFrom] filters a list of candidates.
type CompletionHandler func(c *Context, r *CompleteRequest) (*Completion, error)

type toolEntry struct {
	tool    toolJSON
	handler ToolHandler
}

type resourceEntry struct {
	res     Resource
	handler ResourceHandler
}

type templateEntry struct {
	tmpl    ResourceTemplate
	parsed  *uriTemplate
	handler ResourceHandler
}

type promptEntry struct {
	prompt  Prompt
	handler PromptHandler
}

// validName reports whether name matches ^[A-Za-z0-9_-]{1,64}$, the rule
// for names exposed to clients.
func validName(name string) bool { return len(name) <= 64 && wordBytes(name, '-') }

// wordBytes reports whether s is one or more ASCII letters, digits, '_'
// and extra.
func wordBytes(s string, extra byte) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c == extra || c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
			return false
		}
	}
	return true
}

// New returns a plugin with the given identity and nothing registered.
// It panics if info.Name is set but not a valid name.
func New(info Info) *Plugin {
	if info.Name != "" && !validName(info.Name) {
		panic(fmt.Sprintf("wasmcp: plugin name %q must match ^[A-Za-z0-9_-]{1,64}$", info.Name))
	}
	return &Plugin{
		info:                info,
		promptCompletions:   map[string]CompletionHandler{},
		resourceCompletions: map[string]CompletionHandler{},
	}
}

// Info returns the plugin's identity.
func (p *Plugin) Info() Info { return p.info }

// AddTool registers a tool whose arguments decode into In (with
// encoding/json; a decoding failure answers a tool error naming the field)
// and whose handler returns Out. If Out is *Result, it is the result as
// is; otherwise the value becomes structuredContent, with its JSON also in
// a text block. The schemas are not inferred from the types: give them in
// t (see [Tool]). AddTool panics on an invalid or duplicate tool.
func AddTool[In, Out any](p *Plugin, t Tool, h func(c *Context, in In) (Out, error)) {
	if h == nil {
		panic(fmt.Sprintf("wasmcp: tool %q: nil handler", t.Name))
	}
	plan := newArgPlan(reflect.TypeFor[In]())
	p.AddRawTool(t, func(c *Context, args json.RawMessage) (*Result, error) {
		var in In
		if plan == nil || !c.validArgs || !plan.decode(args, reflect.ValueOf(&in).Elem()) {
			var zero In
			in = zero
			if err := decodeArguments(args, &in); err != nil {
				return ErrorResult(err.Error()), nil
			}
		}
		out, err := h(c, in)
		if err != nil {
			return nil, err
		}
		if r, ok := any(out).(*Result); ok {
			if r == nil {
				r = &Result{}
			}
			return r, nil
		}
		r, err := StructuredResult(out)
		if err != nil {
			return nil, err
		}
		return r, nil
	})
}

// AddRawTool registers a tool with an untyped handler. It panics on an
// invalid or duplicate tool.
func (p *Plugin) AddRawTool(t Tool, h ToolHandler) {
	where := fmt.Sprintf("wasmcp: tool %q", t.Name)
	mustRegister(where, !validName(t.Name), h == nil, p.tool(t.Name) != nil)
	in, err := schemaJSON(t.InputSchema)
	if err != nil {
		panic(fmt.Sprintf("%s: inputSchema: %v", where, err))
	}
	if in == nil {
		in = json.RawMessage(`{"type":"object"}`)
	}
	out, err := schemaJSON(t.OutputSchema)
	if err != nil {
		panic(fmt.Sprintf("%s: outputSchema: %v", where, err))
	}
	var exec *toolExecution
	switch t.TaskSupport {
	case "", TaskForbidden:
	case TaskOptional, TaskRequired:
		exec = &toolExecution{TaskSupport: t.TaskSupport}
	default:
		panic(fmt.Sprintf("%s: TaskSupport %q: want TaskForbidden, TaskOptional or TaskRequired", where, t.TaskSupport))
	}
	p.tools = append(p.tools, &toolEntry{
		tool: toolJSON{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in,
			OutputSchema: out, Annotations: t.Annotations, Icons: t.Icons, Meta: t.Meta, Execution: exec, Extra: t.Extra},
		handler: h,
	})
}

// AddResource registers a resource with a fixed URI. An empty Name
// defaults to the URI. It panics on a missing or duplicate URI.
func (p *Plugin) AddResource(r Resource, h ResourceHandler) {
	if r.URI == "" {
		panic("wasmcp: resource without URI")
	}
	mustRegister(fmt.Sprintf("wasmcp: resource %q", r.URI), false, h == nil,
		slices.ContainsFunc(p.resources, func(e *resourceEntry) bool { return e.res.URI == r.URI }))
	if r.Name == "" {
		r.Name = r.URI
	}
	p.resources = append(p.resources, &resourceEntry{res: r, handler: h})
}

// AddResourceTemplate registers a resource template; reads of URIs that
// match it (and no static resource) go to h with the template's variables.
// An empty Name defaults to the template. It panics on an invalid or
// duplicate template.
func (p *Plugin) AddResourceTemplate(t ResourceTemplate, h ResourceHandler) {
	where := fmt.Sprintf("wasmcp: resource template %q", t.URITemplate)
	parsed, err := parseTemplate(t.URITemplate)
	switch {
	case t.URITemplate == "":
		panic("wasmcp: resource template without uriTemplate")
	case err != nil:
		panic(fmt.Sprintf("%s: %v", where, err))
	}
	mustRegister(where, false, h == nil,
		slices.ContainsFunc(p.templates, func(e *templateEntry) bool { return e.tmpl.URITemplate == t.URITemplate }))
	if t.Name == "" {
		t.Name = t.URITemplate
	}
	p.templates = append(p.templates, &templateEntry{tmpl: t, parsed: parsed, handler: h})
}

// AddResourceLister registers a function that lists run-time resources;
// see [ResourceLister].
func (p *Plugin) AddResourceLister(l ResourceLister) {
	if l == nil {
		panic("wasmcp: nil resource lister")
	}
	p.listers = append(p.listers, l)
}

// SetListFilter makes f decide which registered tools and prompts the
// manifest lists; see [ListFilter]. Without one, all are listed.
func (p *Plugin) SetListFilter(f ListFilter) {
	p.filter = f
}

// listed reports whether the filter lets the item into the manifest.
func (p *Plugin) listed(c *Context, kind ListKind, name string) bool {
	if p.filter == nil {
		return true
	}
	ok, err := protect(func() (bool, error) { return p.filter(c, kind, name), nil })
	if err != nil {
		c.Logf(LevelWarning, "wasmcp: list filter: %v", err)
		return true
	}
	return ok
}

// AddPrompt registers a prompt. It panics on an invalid or duplicate
// prompt.
func (p *Plugin) AddPrompt(pr Prompt, h PromptHandler) {
	where := fmt.Sprintf("wasmcp: prompt %q", pr.Name)
	mustRegister(where, !validName(pr.Name), h == nil, p.prompt(pr.Name) != nil)
	seen := map[string]bool{}
	for _, a := range pr.Arguments {
		if a.Name == "" || seen[a.Name] {
			panic(fmt.Sprintf("%s: argument %q is empty or repeated", where, a.Name))
		}
		seen[a.Name] = true
	}
	p.prompts = append(p.prompts, &promptEntry{prompt: pr, handler: h})
}

// AddPromptCompletion registers completion of the arguments of the
// prompt named prompt (registered before or after).
func (p *Plugin) AddPromptCompletion(prompt string, h CompletionHandler) {
	if h == nil {
		panic(fmt.Sprintf("wasmcp: completion of prompt %q: nil handler", prompt))
	}
	p.promptCompletions[prompt] = h
}

// AddResourceCompletion registers completion of the variables of the
// resource template uriTemplate (registered before or after).
func (p *Plugin) AddResourceCompletion(uriTemplate string, h CompletionHandler) {
	if h == nil {
		panic(fmt.Sprintf("wasmcp: completion of template %q: nil handler", uriTemplate))
	}
	p.resourceCompletions[uriTemplate] = h
}

// mustRegister panics, naming what (`wasmcp: tool "x"`), on a bad name
// (one that does not match the rule of validName), a nil handler or an
// entry registered twice, in that order.
func mustRegister(what string, badName, nilHandler, twice bool) {
	switch {
	case badName:
		panic(what + ": name must match ^[A-Za-z0-9_-]{1,64}$")
	case nilHandler:
		panic(what + ": nil handler")
	case twice:
		panic(what + ": registered twice")
	}
}

func (p *Plugin) tool(name string) *toolEntry {
	for _, e := range p.tools {
		if e.tool.Name == name {
			return e
		}
	}
	return nil
}

func (p *Plugin) prompt(name string) *promptEntry {
	for _, e := range p.prompts {
		if e.prompt.Name == name {
			return e
		}
	}
	return nil
}

// schemaJSON turns a schema given as Tool.InputSchema allows into JSON
// text, requiring a JSON object; nil stays nil.
func schemaJSON(v any) (json.RawMessage, error) {
	var raw []byte
	switch s := v.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		raw = s
	case []byte:
		raw = s
	case string:
		raw = []byte(s)
	default:
		if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Map || rv.Kind() == reflect.Pointer) && rv.IsNil() {
			return nil, nil
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	if !json.Valid(raw) {
		return nil, errors.New("not valid JSON")
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return nil, errors.New("not a JSON object")
	}
	return json.RawMessage(append([]byte(nil), raw...)), nil
}

// decodeArguments decodes tool arguments into v with messages a model can
// act on.
func decodeArguments(args json.RawMessage, v any) error {
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	err := json.Unmarshal(args, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "arguments"
		} else {
			field = "arguments." + field
		}
		return fmt.Errorf("invalid arguments: %s: expected %s, got %s", field, jsonKind(te.Type), te.Value)
	}
	return fmt.Errorf("invalid arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names the JSON type a Go type decodes from.
func jsonKind(t reflect.Type) string {
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return t.String()
}
