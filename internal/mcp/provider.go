package mcp

import (
	"context"
	"encoding/json"
)

// Provider supplies the server features that the engine serves: tools,
// resources, resource templates, prompts and completion. internal/server
// implements it with Wasm plugins; tests implement it in memory.
//
// Methods may be called concurrently from many goroutines.
//
// Every item and result is MCP JSON kept verbatim: the engine never drops
// keys it does not know (x-mcp-header, $defs, _meta ...).
//
// # Errors
//
// A method returns a *jsonrpc.Error to answer with that error. Any other
// error is answered as -32603 with a generic message (the error is logged).
// jsonrpc.CodeResourceNotFound (-32002) from ReadResource is rewritten to
// -32602 for 2026-07-28 requests by the engine. If the request's context was
// cancelled by the client, the engine sends no response at all.
type Provider interface {
	// Features reports which server features exist. It decides the
	// capabilities advertised by initialize and server/discover, and which
	// methods answer -32601. It may change over time (plugins reload).
	Features() Features

	// Tools, Resources, ResourceTemplates and Prompts return every item in
	// a stable order. The engine paginates. The engine also calls Tools
	// with a tools/list Request of its own to read a tool's entry while it
	// serves a tools/call; it reuses that Request afterwards, so Tools
	// must not keep r once it has returned.
	Tools(ctx context.Context, r *Request) ([]json.RawMessage, error)
	Resources(ctx context.Context, r *Request) ([]json.RawMessage, error)
	ResourceTemplates(ctx context.Context, r *Request) ([]json.RawMessage, error)
	Prompts(ctx context.Context, r *Request) ([]json.RawMessage, error)

	// CallTool, ReadResource, GetPrompt and Complete answer one request;
	// r.Params holds the client's params object. The result is the MCP
	// result object. CallTool, ReadResource and GetPrompt may return an
	// input_required result ({"resultType":"input_required", ...}); the
	// engine refuses that shape from any other method.
	CallTool(ctx context.Context, r *Request) (json.RawMessage, error)
	ReadResource(ctx context.Context, r *Request) (json.RawMessage, error)
	GetPrompt(ctx context.Context, r *Request) (json.RawMessage, error)
	Complete(ctx context.Context, r *Request) (json.RawMessage, error)
}

// SlotSharer is implemented by a Provider whose calls share the
// server's run slots (Options.MaxConcurrentCalls) by key, so that the
// calls of one key (say, of one plugin whose instances spin) hold at most
// Options.MaxCallsPerShare of them and the calls of other keys still run.
// SlotShare is called before the call takes a slot, with the request's
// method and params set; "" means no share. Keys should be few (plugin
// names): the engine keeps a counter for each key it has seen.
type SlotSharer interface {
	SlotShare(r *Request) string
}

// Features says which server features a Provider offers.
type Features struct {
	Tools       bool // tools/list, tools/call
	Resources   bool // resources/list, resources/templates/list, resources/read
	Prompts     bool // prompts/list, prompts/get
	Completions bool // completion/complete

	// Subscribe means resource subscriptions work: the provider calls
	// Server.NotifyResourceUpdated when a resource changes.
	Subscribe bool
	// ListChanged means the provider calls Server.NotifyListChanged when a
	// list changes.
	ListChanged bool

	// UI advertises MCP Apps (ExtUI): the provider serves ui:// resources
	// of type UIMimeType and tools that point at them.
	UI bool
	// Skills advertises Skills (ExtSkills, with Resources): the provider
	// implements SkillProvider and serves each skill's files as
	// resources.
	Skills bool
	// DirectoryRead advertises the Skills extension's directoryRead: the
	// provider implements DirectoryReader.
	DirectoryRead bool
}

// DirectoryReader is implemented by a Provider that answers
// resources/directory/read (ext-skills, Features.DirectoryRead): the
// Resource objects of the direct children of the directory resource uri
// (mimeType inode/directory for subdirectories), found false when uri is
// not one.
type DirectoryReader interface {
	ReadDirectory(ctx context.Context, r *Request, uri string) (children []json.RawMessage, found bool, err error)
}

// SkillProvider is implemented by a Provider that serves skills
// (Features.Skills): the engine answers skills/list and skills/get from
// Skills, the Skill entries of ext-skills ({uri, frontmatter,
// resources}) in a stable order.
type SkillProvider interface {
	Skills(ctx context.Context, r *Request) ([]json.RawMessage, error)
}
