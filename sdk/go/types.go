package wasmcp

import "encoding/json"

// Info is the plugin's identity, reported in its manifest.
type Info struct {
	// Name identifies the plugin (^[A-Za-z0-9_-]{1,64}$). Empty lets the
	// host name it after its file.
	Name string
	// Version is the plugin's version, e.g. "1.2.0".
	Version string
	// Description says what the plugin offers, in a sentence.
	Description string
	// Capabilities is what the plugin asks the operator to grant. Asking
	// grants nothing: only the server's configuration does.
	Capabilities Capabilities
}

// Capabilities lists the host features a plugin asks for (manifest
// "capabilities"). Zero fields ask for nothing.
type Capabilities struct {
	// HTTP are URL prefixes the plugin wants to fetch, e.g.
	// "https://api.weather.gov/".
	HTTP []string `json:"http,omitempty"`
	// KV asks for a key-value store.
	KV bool `json:"kv,omitempty"`
	// Config are configuration keys the plugin reads with ConfigGet.
	Config []string `json:"config,omitempty"`
	// Env are environment variables the plugin reads.
	Env []string `json:"env,omitempty"`
	// FS are guest paths the plugin expects directories mounted at.
	FS []string `json:"fs,omitempty"`
	// Elicitation, Sampling and Roots ask for the blocking client calls
	// (Context.Elicit, Context.Sample, Context.ListRoots). input_required
	// results need no grant.
	Elicitation bool `json:"elicitation,omitempty"`
	Sampling    bool `json:"sampling,omitempty"`
	Roots       bool `json:"roots,omitempty"`
}

// Tool describes a tool (MCP Tool). Name and InputSchema are what the
// client sees; see [AddTool] for how the schemas may be given.
type Tool struct {
	// Name is the tool's name within the plugin (^[A-Za-z0-9_-]{1,64}$);
	// the host may prefix it.
	Name string
	// Title is an optional human-readable name.
	Title string
	// Description tells the model what the tool does and when to use it.
	Description string
	// InputSchema is the JSON Schema of the arguments, an object schema:
	// a [Schema], json.RawMessage, []byte or string holding JSON, or any
	// value that marshals to a JSON object. Nil means {"type":"object"}.
	InputSchema any
	// OutputSchema is the optional JSON Schema of structuredContent, given
	// like InputSchema. When set, the tool must return structured content
	// that conforms to it (the host checks).
	OutputSchema any
	// Annotations are optional hints about the tool's behaviour.
	Annotations *ToolAnnotations
	// Icons are optional icons for clients to display.
	Icons []Icon
	// Meta is the optional _meta object.
	Meta map[string]any
	// TaskSupport says whether the tool may run as a task
	// (execution.taskSupport): TaskForbidden (the default, ""),
	// TaskOptional or TaskRequired. The host then runs a call of a client
	// that asks for a task in the background, under [limits]
	// task_timeout (docs/tasks.md); [Context.StartTask] hands the client
	// its task at once.
	TaskSupport TaskSupport
	// Extra holds further top-level keys of the tool object, for MCP
	// fields this struct does not have; keys that the fields above set
	// win.
	Extra map[string]any
}

// TaskSupport is a tool's execution.taskSupport.
type TaskSupport string

// The task support values of MCP.
const (
	TaskForbidden TaskSupport = "forbidden"
	TaskOptional  TaskSupport = "optional"
	TaskRequired  TaskSupport = "required"
)

// ToolAnnotations are hints about a tool (MCP ToolAnnotations). Clients
// must not trust them from untrusted servers. Nil pointers are unset.
type ToolAnnotations struct {
	// Title is a human-readable name (Tool.Title takes precedence).
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool does not change its environment (default
	// false).
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: changes may destroy data (default true; meaningful
	// only when not read-only).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: repeating a call with the same arguments has no
	// further effect (default false).
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool reaches outside systems such as the web
	// (default true).
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// Icon is an icon for a tool, resource or prompt (MCP Icon).
type Icon struct {
	// Src is the icon's URI (https: or data:).
	Src string `json:"src"`
	// MIMEType is the image type, e.g. "image/png".
	MIMEType string `json:"mimeType,omitempty"`
	// Sizes lists sizes like "48x48" or "any".
	Sizes []string `json:"sizes,omitempty"`
}

// Annotations are hints about content or a resource (MCP Annotations).
type Annotations struct {
	// Audience lists who the content is for: "user", "assistant".
	Audience []Role `json:"audience,omitempty"`
	// Priority is the importance from 0 (least) to 1 (most); nil is unset.
	Priority *float64 `json:"priority,omitempty"`
	// LastModified is an ISO 8601 timestamp.
	LastModified string `json:"lastModified,omitempty"`
}

// Role is the speaker of a message: [RoleUser] or [RoleAssistant].
type Role string

// The two roles of MCP messages.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// Resource describes a resource with a fixed URI (MCP Resource). URI and
// Name are required (the SDK uses the URI when Name is empty); Size is the
// size in bytes, 0 when unknown; the other fields are optional.
type Resource struct {
	URI         string         `json:"uri"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MIMEType    string         `json:"mimeType,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Size        int64          `json:"size,omitempty"`
	Icons       []Icon         `json:"icons,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources (MCP
// ResourceTemplate); the fields mean what they mean in [Resource]. URITemplate uses RFC 6570 simple expressions:
// "{var}" matches one path segment (no "/"), and as an extension "{+var}"
// matches any run of characters, "/" included.
type ResourceTemplate struct {
	URITemplate string         `json:"uriTemplate"`
	Name        string         `json:"name"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	MIMEType    string         `json:"mimeType,omitempty"`
	Annotations *Annotations   `json:"annotations,omitempty"`
	Icons       []Icon         `json:"icons,omitempty"`
	Meta        map[string]any `json:"_meta,omitempty"`
}

// Prompt describes a prompt (MCP Prompt). Name follows the tool name
// rule; Arguments are the string arguments it takes.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        map[string]any   `json:"_meta,omitempty"`
}

// PromptArgument describes one argument of a prompt (Name required,
// Title and Description optional). Required arguments are checked before
// the handler runs.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Implementation names a client or server (MCP Implementation): Name and
// Version, and an optional display Title.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// toolJSON is the wire form of a Tool.
type toolJSON struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         map[string]any   `json:"_meta,omitempty"`
	Execution    *toolExecution   `json:"execution,omitempty"`
	Extra        map[string]any   `json:"-"`
}

type toolExecution struct {
	TaskSupport TaskSupport `json:"taskSupport"`
}

// MarshalJSON encodes the tool with its Extra keys.
func (t toolJSON) MarshalJSON() ([]byte, error) {
	type plain toolJSON
	b, err := marshal(plain(t))
	if err != nil || len(t.Extra) == 0 {
		return b, err
	}
	var merged map[string]json.RawMessage
	if err := json.Unmarshal(b, &merged); err != nil {
		return nil, err
	}
	for k, v := range t.Extra {
		if _, taken := merged[k]; taken {
			continue
		}
		raw, err := marshal(v)
		if err != nil {
			return nil, err
		}
		merged[k] = raw
	}
	return marshal(merged)
}
