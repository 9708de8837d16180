package mcp

// toolIndex caches the x-mcp-header annotations of the tools.
type toolIndex struct{}
