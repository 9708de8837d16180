// Package loadgen drives MCP servers for wasmcp's benchmarks: a closed-loop
// stdio client that keeps N tools/call requests in flight, a Streamable HTTP
// client with C concurrent keep-alive connections, a generic multiplexed
// stdio connection for the latency checks (cold start, runaway plugins), and
// the summary of results.
//
// Every response is validated: it must answer a request in flight, be a
// successful result (no JSON-RPC error, no isError) and echo back the exact
// text sent, which carries the request id.
//
// Requests are either legacy (after an initialize handshake with protocol
// version 2025-11-25) or modern: stateless 2026-07-28 requests that carry
// the protocol version and client capabilities in params._meta.
package loadgen
