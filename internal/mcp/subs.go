package mcp

import (
	"strconv"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// The subscription budget: every subscription the server keeps (a URI
// of resources/subscribe in a legacy session, a URI or task id of a
// subscriptions/listen stream while it runs) is counted in bytes against
// Options.MaxSubscriptionBytes, server-wide, so that max_sessions
// sessions of max_subscriptions URIs each cannot add up to gigabytes.

// subEntryBytes is what one subscription costs beyond its bytes: a map
// entry and a string header, roughly.
const subEntryBytes = 64

// subCost is what a subscription to s is counted.
func subCost(s string) int64 { return int64(len(s)) + subEntryBytes }

// chargeSubs counts n more bytes of subscriptions, or reports false and
// counts nothing when they would pass the budget.
func (s *Server) chargeSubs(n int64) bool {
	if s.subBytes.Add(n) > s.opts.MaxSubscriptionBytes {
		s.subBytes.Add(-n)
		return false
	}
	return true
}

// releaseSubs gives n bytes of subscriptions back.
func (s *Server) releaseSubs(n int64) { s.subBytes.Add(-n) }

// subBudgetError answers a subscription past the budget: busy, as the
// server-wide call and task caps are.
func (s *Server) subBudgetError() *jsonrpc.Error {
	return &jsonrpc.Error{
		Code:    jsonrpc.CodeRequestTimeout,
		Message: "Server busy: subscriptions take the " + strconv.FormatInt(s.opts.MaxSubscriptionBytes, 10) + " bytes the server keeps for them; retry later",
		Data:    busyData(retryAfterSeconds),
	}
}

// releaseSubsLocked gives back what c's subscriptions are charged and
// forgets them. c.mu is held.
func (c *conn) releaseSubsLocked() {
	c.srv.releaseSubs(c.subsCharged)
	c.subsCharged = 0
	c.subs = nil
}
