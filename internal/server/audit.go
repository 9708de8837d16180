package server

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/wasmcp/wasmcp/internal/audit"
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/mcp"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// audit records ev in the [audit] trail (docs/governance.md, "Audit
// trail"): it never waits, a full queue drops the event and counts it
// (wasmcp_audit_dropped_total). It does nothing when [audit] is off.
func (s *Server) audit(ev audit.Event) {
	if s == nil || s.aud == nil {
		return
	}
	s.aud.Log(ev)
}

// openAudit opens the [audit] trail; nil when it is off.
func openAudit(c *config.Audit) (*audit.Logger, error) {
	if !c.Enabled() {
		return nil, nil
	}
	return audit.Open(audit.Options{File: c.File, MaxSize: int64(c.MaxSize), MaxFiles: c.MaxFiles,
		IncludeData: c.IncludeData, MaxData: int(c.MaxData)})
}

// auditDroppedFunc reads how many events the trail could not take; nil
// when [audit] is off.
func (s *Server) auditDroppedFunc() func() uint64 {
	if s.aud == nil {
		return nil
	}
	return s.aud.Dropped
}

// auditObserver records the calls, reads and gets in the audit trail,
// and passes every request on to the telemetry's Observer (nil: none).
type auditObserver struct {
	s     *Server
	inner mcp.Observer
}

// observer returns the mcp.Observer of the server: the telemetry's, with
// the audit trail's in front when [audit] is on.
func (s *Server) observer() mcp.Observer {
	inner := s.tel.Observer()
	if s.aud == nil {
		return inner
	}
	return &auditObserver{s: s, inner: inner}
}

// auditTypes are the methods audited, with their event types.
var auditTypes = map[string]string{
	"tools/call":     audit.TypeToolCall,
	"resources/read": audit.TypeResourceRead,
	"prompts/get":    audit.TypePromptGet,
}

// RequestStart implements mcp.Observer.
func (o *auditObserver) RequestStart(ctx context.Context, ri *mcp.RequestInfo) context.Context {
	if o.inner != nil {
		return o.inner.RequestStart(ctx, ri)
	}
	return ctx
}

// RequestEnd implements mcp.Observer: one event per audited method, and
// authz_denied for any request the policies refused (completion/complete
// too).
func (o *auditObserver) RequestEnd(ctx context.Context, ri *mcp.RequestInfo, result []byte, err error) {
	if typ, ok := auditTypes[ri.Request.Method]; ok {
		o.s.auditRequest(typ, ri, result, err)
	} else if d := (*denial)(nil); errors.As(err, &d) {
		o.s.auditRequest(audit.TypeAuthzDenied, ri, result, err)
	}
	if o.inner != nil {
		o.inner.RequestEnd(ctx, ri, result, err)
	}
}

// RequestAnswered implements mcp.Observer.
func (o *auditObserver) RequestAnswered(ri *mcp.RequestInfo, err *jsonrpc.Error) {
	if o.inner != nil {
		o.inner.RequestAnswered(ri, err)
	}
}

// auditRequest records the request of ri as an event of type typ.
func (s *Server) auditRequest(typ string, ri *mcp.RequestInfo, result []byte, err error) {
	r := ri.Request
	ev := audit.Event{Type: typ, Time: ri.Start, Outcome: "ok", Source: ri.Remote, Transport: transportName(ri.Transport),
		Subject: subjectOf(&r.Client, ri.Transport), Target: targetOf(s, r), DurationMS: float64(time.Since(ri.Start).Microseconds()) / 1000}
	var je *jsonrpc.Error
	var d *denial
	switch {
	case errors.As(err, &d):
		ev.Type, ev.Outcome, ev.Detail = audit.TypeAuthzDenied, "denied", clip(r.Method+": "+d.why)
	case errors.As(err, &je) && je.Code == jsonrpc.CodeForbidden:
		ev.Type, ev.Outcome, ev.Detail = audit.TypeAuthzDenied, "denied", r.Method+": the authorization policy does not allow this request"
	case err != nil:
		ev.Outcome, ev.Detail = "error", clip(err.Error())
	case ri.ToolError || ri.Nonconforming:
		ev.Outcome = "tool_error"
	}
	if s.aud.IncludeData() {
		ev.Request = r.Params
		if err == nil {
			ev.Response = result
		}
	}
	s.audit(ev)
}

// auditDenial records a capability denial (the grants refused what a
// plugin asked for).
func (s *Server) auditDenial(r *mcp.Request, plugin, capability, target, detail string) {
	tr := "pipe"
	if r.HTTP {
		tr = "tcp"
	}
	d := capability
	if detail != "" {
		d += " " + detail
	}
	s.audit(audit.Event{Type: audit.TypeCapabilityDenied, Outcome: "denied", Transport: transportName(tr),
		Subject: subjectOf(&r.Client, tr), Target: audit.Target{Plugin: plugin, Name: clip(target), Method: r.Method}, Detail: clip(d)})
}

// transportName is the audit name of an Observer transport ("tcp" on
// HTTP, "pipe" on stdio).
func transportName(t string) string {
	if t == "tcp" {
		return "http"
	}
	return "stdio"
}

// subjectOf is the caller of a request: the verified token's subject
// ("stdio" on stdio) and what the client said of itself.
func subjectOf(c *mcpreq.Client, transport string) audit.Subject {
	sub := c.Principal
	if transport != "tcp" {
		sub = "stdio"
	}
	var info struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	if len(c.ClientInfo) > 0 {
		_ = json.Unmarshal(c.ClientInfo, &info) // what the client sent; not an object: none
	}
	return audit.Subject{Sub: clip(sub), ClientName: clip(info.Name), ClientVersion: clip(info.Version)}
}

// targetOf is what request r is about: its plugin (when one serves it),
// tool or prompt name or resource URI, and method.
func targetOf(s *Server, r *mcp.Request) audit.Target {
	t := audit.Target{Method: r.Method}
	switch r.Method {
	case "tools/call":
		t.Name = r.Parsed.Name
		if it, ok := s.reg.Tool(t.Name); ok {
			t.Plugin = it.Plugin.Name()
		}
	case "prompts/get":
		t.Name = r.Parsed.Name
		if it, ok := s.reg.Prompt(t.Name); ok {
			t.Plugin = it.Plugin.Name()
		}
	case "resources/read":
		t.Name = r.Parsed.URI
		if it, ok := s.reg.Resource(t.Name, access(r)); ok {
			t.Plugin = it.Plugin.Name()
		}
	case "completion/complete":
		ref := &r.Parsed.Ref
		if ref.Type == "ref/prompt" {
			t.Name = ref.Name
			if it, ok := s.reg.Prompt(t.Name); ok {
				t.Plugin = it.Plugin.Name()
			}
			break
		}
		t.Name = ref.URI
		if it, ok := s.reg.Template(t.Name); ok {
			t.Plugin = it.Plugin.Name()
		} else if it, ok := s.reg.Resource(t.Name, access(r)); ok {
			t.Plugin = it.Plugin.Name()
		}
	}
	t.Name = clip(t.Name)
	return t
}
