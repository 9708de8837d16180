// Package interop tests wasmcp's protocol engine (internal/mcp) against the
// official MCP Go SDK client, over Streamable HTTP and stdio, with a legacy
// protocol version and with 2026-07-28. It is a separate module so that the
// SDK never enters the server's dependency graph.
package interop
