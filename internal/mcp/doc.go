// Package mcp is wasmcp's Model Context Protocol engine: version
// negotiation for every protocol version from 2024-11-05 to the stateless
// 2026-07-28, dispatch of the server methods to a Provider, notifications,
// cancellation, pagination, and the stdio and Streamable HTTP transports.
// It knows nothing about WebAssembly.
package mcp
