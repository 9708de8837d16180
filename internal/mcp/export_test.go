package mcp

// NewConstProvider returns the benchmark Provider to the external tests.
func NewConstProvider() Provider { return constProvider{} }
