package mcp

import (
	"context"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// checkModernMeta validates the _meta every 2026-07-28 request must carry.
// A missing field is -32602 (HTTP 400).
func checkModernMeta(mi *metaInfo) *jsonrpc.Error {
	switch {
	case !mi.hasMeta:
		return invalidParams("missing params._meta: 2026-07-28 requests must carry " + metaProtocolVersion + " and " + metaClientCaps)
	case !mi.hasVersion:
		return invalidParams("missing _meta " + metaProtocolVersion + " (a string)")
	case !mi.hasCaps:
		return invalidParams("missing _meta " + metaClientCaps + " (an object)")
	case mi.hasLogLevel && logLevelIndex(mi.logLevel) < 0:
		return invalidParams("invalid _meta " + metaLogLevel)
	}
	return nil
}

// checkModernVersion refuses versions the stateless path does not speak
// with -32022 (HTTP 400).
func checkModernVersion(mi *metaInfo) *jsonrpc.Error {
	if mi.version == version20260728 {
		return nil
	}
	data := append([]byte(`{"supported":`), supportedVersionsJSON...)
	data = append(data, `,"requested":`...)
	data = jsonscan.AppendString(data, mi.version)
	data = append(data, '}')
	return &jsonrpc.Error{Code: jsonrpc.CodeUnsupportedVersion, Message: "unsupported protocol version", Data: data}
}

// checkModernMethod refuses methods 2026-07-28 does not have (unknown or
// removed) with -32601 (HTTP 404).
func checkModernMethod(method string) *jsonrpc.Error {
	if isModernMethod(method) {
		return nil
	}
	return methodNotFound(method)
}

// checkModern runs the checks of the stateless path in order: _meta,
// version, method. (HTTP runs its header checks between the first two.)
func checkModern(m *jsonrpc.Message, mi *metaInfo) *jsonrpc.Error {
	if e := checkModernMeta(mi); e != nil {
		return e
	}
	if e := checkModernVersion(mi); e != nil {
		return e
	}
	return checkModernMethod(m.Method)
}

// newModernCall prepares the 2026-07-28 request m. It has no session: it
// cannot send server-to-client requests.
func (s *Server) newModernCall(parent context.Context, m *jsonrpc.Message, mi *metaInfo, out sink) *call {
	cl := s.newCall(parent, nil, m.ID, out)
	cl.req.Method = m.Method
	cl.req.Params = paramsOrEmpty(m.Params)
	cl.req.ProtocolVersion = mi.version
	cl.req.Stateless = true
	cl.req.ClientInfo = mi.clientInfo
	cl.req.ClientCapabilities = mi.caps
	cl.req.ProgressToken = mi.progressToken
	cl.req.setMeta(mi.meta)
	if mi.hasLogLevel {
		cl.minLog = logLevelIndex(mi.logLevel)
	}
	return cl
}
