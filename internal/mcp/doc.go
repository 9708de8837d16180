// Package mcp is wasmcp's Model Context Protocol engine: version
// negotiation for every protocol version from 2024-11-05 to the stateless
// 2026-07-28, dispatch of the server methods to a Provider, notifications,
// cancellation, pagination, and the stdio and Streamable HTTP transports.
// It knows nothing about WebAssembly.
//
// A composition root implements Provider and serves it:
//
//	srv := mcp.NewServer(provider, &mcp.Options{Name: "wasmcp", Version: version, Logger: logger})
//	defer srv.Close()
//	// stdio: one client on the process's stdin/stdout.
//	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout)
//	// or Streamable HTTP on a listener, until ctx ends.
//	err := srv.RunHTTP(ctx, ln, &mcp.HTTPOptions{Path: "/mcp", AllowedOrigins: origins})
//
// The provider calls srv.NotifyListChanged and srv.NotifyResourceUpdated
// when its lists or resources change.
//
// # Eras
//
// One Server serves both eras at once, on the same stdio connection or HTTP
// endpoint. A request whose params._meta carries
// io.modelcontextprotocol/protocolVersion or .../clientCapabilities (or
// whose method is server/discover or subscriptions/listen) is a stateless
// 2026-07-28 request: its _meta is validated (-32602), then on HTTP its
// headers (-32020), then its version (-32022), then its method (-32601).
// Anything else belongs to a legacy session opened by initialize: the stdio
// connection itself, or an HTTP session named by Mcp-Session-Id.
//
// # Errors
//
// Provider errors of type *jsonrpc.Error reach the client as they are,
// except -32002 (resource not found), which 2026-07-28 requests receive as
// -32602. Other errors and panics become -32603 with a generic message and
// are logged. A request the client cancelled gets no response.
//
// # Limits and shutdown
//
// Every bound has a default (Options, HTTPOptions): provider calls running
// and waiting across the server (beyond them -32001, or HTTP 503 with
// Retry-After before dispatch), their share per principal and rate per
// principal (-32001, HTTP 429), the run slots one share key may hold
// (SlotSharer: one plugin), stdio concurrency and line length, batch
// length and response size, subscriptions per session and URI length,
// notifications queued for a client that does not read (coalesced per
// kind and URI, then dropped with a log line), SSE replay in events and
// bytes, HTTP body size and read time, header size and time, each
// write's time (a client that stops reading loses its stream), open
// connections and legacy sessions. RunHTTP refuses requests framed by
// both Content-Length and Transfer-Encoding. Server.Shutdown and the end of RunHTTP's context stop
// taking requests, end long-lived streams, let the requests in flight
// finish for a grace period and then cancel them.
//
// # Access control
//
// The engine does not authenticate. HTTPOptions.Middleware does, and
// passes the caller on with ContextWithIdentity: the engine then fills
// Request.Principal and Request.Scopes, binds each legacy session to the
// principal that opened it (another caller gets 404), and marks
// 2026-07-28 results cacheScope "private".
package mcp
