package server

import (
	"github.com/wasmcp/wasmcp/internal/audit"
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
