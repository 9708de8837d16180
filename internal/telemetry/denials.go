package telemetry

import (
	"log/slog"
	"sync/atomic"

	"github.com/wasmcp/wasmcp/internal/denials"
	"github.com/wasmcp/wasmcp/internal/mcp"
)

// denialKey is what the denial records are rate-limited by: a plugin
// and a capability, or (authz set) a principal and an action.
type denialKey struct {
	plugin, capability string
	authz              bool
}

// DenialLog writes the audit records of capability denials, bounded by
// the rules of package denials: each field cut to denials.MaxField
// bytes, and per plugin and capability the first denials.DefaultBurst
// records in each denials.DefaultInterval written, the rest folded into
// one "capability denials folded" record (folded=N) at the end of the
// interval and counted (Folded; the metric
// wasmcp_audit_denials_folded_total). Every denial still counts in
// wasmcp_plugin_denials_total. It is safe for concurrent use; one serves
// a whole server.
type DenialLog struct {
	log    *slog.Logger
	lim    *denials.Limiter[denialKey]
	folded atomic.Int64
	onFold func(n int64) // the metric, when there is one
	// onDenial sees every capability denial, folded or not (the audit
	// trail); nil for none.
	onDenial func(r *mcp.Request, plugin, capability, target, detail string)
}

// OnDenial has f called with every capability denial, before the
// records are rate-limited (the audit trail, which bounds itself). It
// must be set before the DenialLog is used, and f must not block.
func (d *DenialLog) OnDenial(f func(r *mcp.Request, plugin, capability, target, detail string)) {
	d.onDenial = f
}

// NewDenialLog returns a DenialLog writing to log (nil discards).
func NewDenialLog(log *slog.Logger) *DenialLog {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &DenialLog{log: log}
	d.lim = denials.New(denials.Options[denialKey]{Overflow: denialKey{"…", "…", false}}, d.report)
	return d
}

// report writes the record of the denials the limiter folded.
func (d *DenialLog) report(k denialKey, n int64) {
	d.folded.Add(n)
	if d.onFold != nil {
		d.onFold(n)
	}
	if k.authz {
		d.log.Warn("authz denials folded", "audit", "authz_denied", "principal", k.plugin, "action", k.capability, "folded", n)
		return
	}
	d.log.Warn("capability denials folded", "audit", "denial", "plugin", k.plugin, "capability", k.capability, "folded", n)
}

// Authz writes the audit record of one authorization denial ("authz
// denied", audit=authz_denied): the principal (entity), the action, the
// target (entity) and its plugin, the request's method, and the
// policies that decided ("" when none permitted). Records are bounded
// like those of capability denials, keyed by principal and action, and
// the folded ones reported as "authz denials folded".
func (d *DenialLog) Authz(r *mcp.Request, principal, action, target, plugin, policies string) {
	if d == nil || !d.lim.Allow(denialKey{principal, action, true}) {
		return
	}
	f := denials.Field
	d.log.Warn("authz denied", "audit", "authz_denied", "principal", f(principal), "action", f(action), "method", f(r.Method),
		"target", f(target), "plugin", f(plugin), "policies", f(policies))
}

// Folded returns how many denial records were folded so far (they are
// counted once their interval ends).
func (d *DenialLog) Folded() int64 { return d.folded.Load() }

// Flush writes the records of what was folded and not yet reported (at
// shutdown).
func (d *DenialLog) Flush() { d.lim.Flush() }

// write writes the audit record of one capability denial: the plugin,
// the capability (kind) and what it asked for (detail), the request
// (method, target) and the caller; or folds it.
func (d *DenialLog) write(plugin, kind string, r *mcp.Request, target, detail string) {
	if d == nil {
		return
	}
	if d.onDenial != nil {
		d.onDenial(r, plugin, kind, target, detail)
	}
	if !d.lim.Allow(denialKey{plugin, kind, false}) {
		return
	}
	f := denials.Field
	args := []any{"audit", "denial", "plugin", f(plugin), "capability", f(kind), "method", f(r.Method),
		"target", f(target), "principal", f(principal(r))}
	if detail != "" {
		args = append(args, "detail", f(detail))
	}
	d.log.Warn("capability denied", args...)
}
