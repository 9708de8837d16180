package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/hostapi"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/telemetry"
	"github.com/wasmcp/wasmcp/plugins"
)

// provider serves the plugin registry to the MCP engine.
type provider struct {
	reg    *plugins.Registry
	log    *slog.Logger
	shares shareCache           // see share.go
	tel    *telemetry.Telemetry // nil: telemetry off
	denied *telemetry.DenialLog // the audit of denials without telemetry; nil writes none
	// taskTimeout is the deadline of a call that runs as a task
	// (Request.TaskID set), instead of the plugin's timeout.
	taskTimeout time.Duration
	// gate holds lists and calls until the first load is done; nil
	// (open) unless the server started in the background.
	gate *startGate
	// skills serves skills/list, skills/get and the skill:// resources;
	// nil: none.
	skills *skillSource
	// az decides every request by the [authz] policies; nil allows all.
	az *authorizer
	// pin withholds the items whose definitions wasmcp.lock does not
	// approve ([server] pin); nil pins nothing.
	pin *pinner
}

var (
	_ mcp.Provider        = (*provider)(nil)
	_ mcp.SkillProvider   = (*provider)(nil)
	_ mcp.DirectoryReader = (*provider)(nil)
)

// Features declares every feature: plugins come and go with reloads, so
// the lists may be empty but the methods always exist.
func (p *provider) Features() mcp.Features {
	return mcp.Features{Tools: true, Resources: true, Prompts: true, Completions: true, Subscribe: true, ListChanged: true,
		UI: true, Skills: true, DirectoryRead: true}
}

// Skills returns the Skill entries (ext-skills) of the skill directories
// and of the plugins.
func (p *provider) Skills(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	if p.skills == nil {
		return nil, nil
	}
	return p.az.filter(r, 'R', p.skills.current().Entries()), nil
}

// ReadDirectory answers resources/directory/read for the skill://
// directories (internal/skills: the skill roots, the directories inside
// skills and the levels of their paths).
func (p *provider) ReadDirectory(ctx context.Context, r *mcp.Request, uri string) ([]json.RawMessage, bool, error) {
	if p.skills == nil {
		return nil, false, nil
	}
	children, ok := p.skills.current().Directory(uri)
	return children, ok, nil
}

// The lists are what the caller may see: plugins restricted to scopes are
// left out for authenticated callers without one of them.

func (p *provider) Tools(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	if err := p.gate.wait(ctx); err != nil {
		return nil, err
	}
	v := p.pin.current()
	return p.az.filter(r, 'T', p.pin.filter(v, p.reg.ToolsFor(access(r)))), nil
}

func (p *provider) Resources(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	if err := p.gate.wait(ctx); err != nil {
		return nil, err
	}
	v := p.pin.current()
	res := p.pin.filter(v, p.reg.ResourcesFor(access(r)))
	if p.skills != nil {
		if sk := p.skills.current().Resources(); len(sk) > 0 {
			res = append(slices.Clip(res), sk...)
		}
	}
	return p.az.filter(r, 'R', res), nil
}

func (p *provider) ResourceTemplates(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	if err := p.gate.wait(ctx); err != nil {
		return nil, err
	}
	v := p.pin.current()
	return p.az.filter(r, 'M', p.pin.filter(v, p.reg.ResourceTemplatesFor(access(r)))), nil
}

func (p *provider) Prompts(ctx context.Context, r *mcp.Request) ([]json.RawMessage, error) {
	if err := p.gate.wait(ctx); err != nil {
		return nil, err
	}
	v := p.pin.current()
	return p.az.filter(r, 'P', p.pin.filter(v, p.reg.PromptsFor(access(r)))), nil
}

// access is the part of a plugins.Request that decides visibility: an
// authenticated caller (HTTP with access control) is restricted to the
// plugins its scopes allow; stdio and unauthenticated HTTP see them all
// (configuration refuses plugin scopes without [auth]).
func access(r *mcp.Request) *plugins.Request {
	return &plugins.Request{Client: &r.Client, Restricted: r.Principal != ""}
}

func (p *provider) CallTool(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	return p.do(ctx, r, p.reg.CallTool)
}

func (p *provider) ReadResource(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	if p.skills != nil && strings.HasPrefix(r.Parsed.URI, "skill://") {
		if res, ok := p.skills.current().Read(r.Parsed.URI); ok {
			if _, err := p.az.allow(r, nil); err != nil {
				return nil, err
			}
			return res, nil
		}
	}
	return p.do(ctx, r, p.reg.ReadResource)
}

func (p *provider) GetPrompt(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	return p.do(ctx, r, p.reg.GetPrompt)
}

func (p *provider) Complete(ctx context.Context, r *mcp.Request) (json.RawMessage, error) {
	return p.do(ctx, r, p.reg.Complete)
}

func (p *provider) do(ctx context.Context, r *mcp.Request, call func(context.Context, *plugins.Request) (json.RawMessage, error)) (json.RawMessage, error) {
	if err := p.gate.wait(ctx); err != nil {
		return nil, err
	}
	// Authorization decides before the registry routes (an unknown item
	// is refused like a forbidden one), and again on the item routed if
	// that is not the one decided on (a re-describe came between);
	// pinned definitions are checked on the item routed.
	decided, err := p.az.allow(r, nil)
	if err != nil {
		return nil, err
	}
	// The one translation: the engine's request, parsed, is the
	// registry's (shared, not copied).
	pc := &pluginCall{req: plugins.Request{Client: &r.Client, Params: r.Params, Parsed: &r.Parsed, Restricted: r.Principal != "", Caller: caller{r}}}
	req := &pc.req
	if p.az != nil || p.pin.blocks() {
		pc.prov, pc.r, pc.decided = p, r, decided
		req.Approve = pc
	}
	if r.TaskID != "" {
		req.Options.Timeout = p.taskTimeout
	}
	if p.tel != nil {
		req.Hook = p.tel.CallHook()
		req.Options.Queue = telemetry.QueueHook(ctx, slotHook{r}) // the queue wait timed
		out, err := call(ctx, req)
		recordOutcome(ctx, err)
		if err != nil {
			out, err = mapError(ctx, p.log, r, err)
		}
		if err == nil && r.Method == "tools/call" {
			out = p.tel.AddUsage(ctx, out)
		}
		return out, err
	}
	// Without telemetry, denials are still audited.
	pc.audit = telemetry.DenialAuditOf(p.denied, r)
	req.Hook = &pc.audit
	req.Options.Queue = slotHook{r}
	out, err := call(ctx, req)
	if err != nil {
		if inErr := (*plugins.InputRequestError)(nil); errors.As(err, &inErr) {
			pc.audit.Denied("input_request", inErr.Method)
		}
		return mapError(ctx, p.log, r, err)
	}
	return out, nil
}

// pluginCall is what a plugin call of the provider allocates, in one
// piece: the registry's request (with the runtime's call options) and,
// without telemetry, its hook.
type pluginCall struct {
	req   plugins.Request
	audit telemetry.DenialAudit

	// For Approve: the provider, the request and the definition
	// authorization decided on.
	prov    *provider
	r       *mcp.Request
	decided json.RawMessage
}

// Approve implements plugins.Approver: the item the registry routed the
// call to is decided again when authorization decided on another
// definition, and must be one the pinned definitions approve.
func (pc *pluginCall) Approve(it plugins.Item) error {
	if pc.prov.az != nil && !sameRaw(it.Def, pc.decided) {
		if _, err := pc.prov.az.allow(pc.r, &it); err != nil {
			return err
		}
	}
	return pc.prov.pin.approve(pc.r, it)
}

// slotHook lets a call give its server-wide run slot back while it waits
// in its plugin's instance queue, so that calls queued behind a slow
// plugin do not hold up calls to the others (see internal/mcp, limit.go,
// for why resuming cannot deadlock).
type slotHook struct{ r *mcp.Request }

func (h slotHook) Waiting() { h.r.YieldSlot() }

func (h slotHook) Resume(ctx context.Context) error { return h.r.ResumeSlot(ctx) }

// caller adapts an MCP request to what plugins need of the client.
type caller struct{ r *mcp.Request }

func (c caller) Log(level, logger string, data json.RawMessage) { c.r.Log(level, logger, data) }

func (c caller) Progress(progress float64, total *float64, message string) {
	c.r.Progress(progress, total, message)
}

func (c caller) CloseStream() { c.r.CloseStream() }

func (c caller) StartTask() { c.r.StartTask() }

func (c caller) Request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	res, err := c.r.ClientCall(ctx, method, params)
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(err, mcp.ErrNoClientRequests):
		return nil, hostapi.ErrUnsupported
	case errors.As(err, &rpcErr):
		return nil, clientError{rpcErr}
	}
	return res, err
}

// clientError is an error the client answered with; hostapi passes its
// code to the plugin.
type clientError struct{ e *jsonrpc.Error }

func (c clientError) Error() string                    { return c.e.Message }
func (c clientError) RPCError() (code int, msg string) { return c.e.Code, c.e.Message }
