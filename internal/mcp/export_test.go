package mcp

import "time"

// NewConstProvider returns the benchmark Provider to the external tests.
func NewConstProvider() Provider { return constProvider{} }

// SetInlineMax sets the longest average run time of the requests a stdio
// reader runs inline until the test ends.
func SetInlineMax(t interface{ Cleanup(func()) }, d time.Duration) {
	old := inlineMax
	inlineMax = d
	t.Cleanup(func() { inlineMax = old })
}

// KeptCapabilities and KeptClientInfo are what a session keeps of a
// client's capabilities and clientInfo (clientcaps.go).
var (
	KeptCapabilities = keptCapabilities
	KeptClientInfo   = keptClientInfo
)

// SubscriptionBytes is what the server's subscriptions are counted
// against Options.MaxSubscriptionBytes (subs.go).
func SubscriptionBytes(s *Server) int64 { return s.subBytes.Load() }
