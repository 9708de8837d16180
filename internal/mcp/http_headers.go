package mcp

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// Header validation of 2026-07-28 POSTs (SEP-2243): MCP-Protocol-Version,
// Mcp-Method and Mcp-Name must be present and equal the body, and every
// tool argument annotated with x-mcp-header must travel in its
// Mcp-Param-{Name} header. Any failure is -32020 with HTTP 400.

func headerMismatch(format string, args ...string) *jsonrpc.Error {
	msg := format
	for i, a := range args {
		msg = strings.Replace(msg, "{"+strconv.Itoa(i)+"}", a, 1)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeHeaderMismatch, Message: "Header mismatch: " + msg}
}

// header returns the single value of header name (whitespace around it
// trimmed) and whether it is present; ok is false too when the header is
// repeated.
func header(r *http.Request, name string) (v string, present, ok bool) {
	vals := r.Header.Values(name)
	switch len(vals) {
	case 0:
		return "", false, true
	case 1:
		return strings.Trim(vals[0], " \t"), true, true
	}
	return "", true, false
}

// plainASCII reports whether v has only visible ASCII and inner spaces.
func plainASCII(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// decodeHeaderValue decodes the =?base64?...?= sentinel (strict, padded
// standard base64 of UTF-8); other values are taken literally and must be
// plain ASCII.
func decodeHeaderValue(v string) (string, bool) {
	if strings.HasPrefix(v, "=?base64?") && strings.HasSuffix(v, "?=") && len(v) >= len("=?base64??=") {
		b, err := base64.StdEncoding.Strict().DecodeString(v[len("=?base64?") : len(v)-2])
		if err != nil || !utf8.Valid(b) {
			return "", false
		}
		return string(b), true
	}
	return v, plainASCII(v)
}

// headerCheck is what admission needs to check the 2026-07-28 headers of
// an HTTP request (inbound.headers): h.checkHeaders(r, ...); h is nil on
// transports without headers.
type headerCheck struct {
	h *httpHandler
	r *http.Request
}

// checkHeaders validates the standard and custom headers of request m.
func (h *httpHandler) checkHeaders(r *http.Request, m *jsonrpc.Message, mi *metaInfo) *jsonrpc.Error {
	for _, hc := range [...]struct{ key, name, body string }{
		{"Mcp-Protocol-Version", "MCP-Protocol-Version", mi.version},
		{"Mcp-Method", "Mcp-Method", m.Method},
	} {
		v, present, ok := header(r, hc.key)
		switch {
		case !present:
			return headerMismatch("missing " + hc.name + " header")
		case !ok || !plainASCII(v):
			return headerMismatch("invalid " + hc.name + " header")
		case v != hc.body:
			return headerMismatch(hc.name+" header value '{0}' does not match body value '{1}'", v, hc.body)
		}
	}
	var nameKey string
	switch m.Method {
	case methodToolsCall, methodPromptsGet:
		nameKey = "name"
	case methodResRead:
		nameKey = "uri"
	case methodTasksGet, methodTasksUpdate, methodTasksCancel:
		nameKey = "taskId"
	default:
		return nil
	}
	bodyName, inBody := stringParam(m.Params, nameKey)
	raw, present, ok := header(r, "Mcp-Name")
	if !ok {
		return headerMismatch("repeated Mcp-Name header")
	}
	if present {
		hn, valid := decodeHeaderValue(raw)
		switch {
		case !valid:
			return headerMismatch("invalid Mcp-Name header")
		case !inBody:
			return headerMismatch("Mcp-Name header present but the body has no " + nameKey)
		case hn != bodyName:
			return headerMismatch("Mcp-Name header value '{0}' does not match body value '{1}'", hn, bodyName)
		}
	} else if inBody {
		return headerMismatch("missing Mcp-Name header")
	}
	if m.Method == methodToolsCall && inBody {
		return h.checkParamHeaders(r, m, bodyName)
	}
	return nil
}

// checkParamHeaders validates the Mcp-Param-* headers of a tools/call.
func (h *httpHandler) checkParamHeaders(r *http.Request, m *jsonrpc.Message, tool string) *jsonrpc.Error {
	params, err := h.s.toolHeaders(r, m, tool)
	if err != nil || len(params) == 0 {
		return nil // unknown tool: the Provider answers
	}
	args, _ := jsonscan.Member(m.Params, "arguments")
	for _, p := range params {
		v, inBody := jsonscan.Member(args, p.prop)
		if inBody && jsonscan.Kind(v) == 'z' {
			inBody = false
		}
		raw, present, ok := header(r, p.header)
		if !ok {
			return headerMismatch("repeated " + p.header + " header")
		}
		if !present {
			if inBody {
				return headerMismatch("missing " + p.header + " header")
			}
			continue
		}
		hv, valid := decodeHeaderValue(raw)
		switch {
		case !valid:
			return headerMismatch("invalid " + p.header + " header")
		case !inBody:
			return headerMismatch(p.header + " header present but the argument is absent")
		case !paramMatches(v, hv):
			return headerMismatch(p.header+" header value '{0}' does not match body value '{1}'", hv, string(v))
		}
	}
	return nil
}

// paramMatches compares a body argument with its header value: strings
// exactly, integers numerically, booleans as true/false.
func paramMatches(body []byte, hv string) bool {
	switch jsonscan.Kind(body) {
	case 's':
		s, _ := jsonscan.String(body)
		return s == hv
	case 'b':
		return string(body) == hv
	case 'n':
		a, err1 := strconv.ParseInt(string(body), 10, 64)
		b, err2 := strconv.ParseInt(hv, 10, 64)
		if err1 == nil && err2 == nil {
			return a == b
		}
		return string(body) == hv
	}
	return false
}

// toolHeaders returns the annotated arguments of tool, from the Provider's
// tool list (as this request would see it).
func (s *Server) toolHeaders(r *http.Request, m *jsonrpc.Message, tool string) ([]paramHeader, error) {
	var mi metaInfo
	scanMeta(m.Params, &mi)
	id := identityFrom(r.Context())
	c := mcpreq.Client{ProtocolVersion: mi.version, Stateless: true, ClientInfo: mi.clientInfo, ClientCapabilities: mi.caps}
	bindHTTP(&c, id.Principal, id)
	e, err := s.toolEntry(r.Context(), c, "", tool)
	return e.headers, err
}
