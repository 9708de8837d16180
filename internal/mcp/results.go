package mcp

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// appendCompact appends the valid JSON v without insignificant newlines,
// so it can travel on one stdio line or one SSE data line.
func appendCompact(dst, v []byte) []byte {
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return append(dst, v...)
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return append(dst, v...)
	}
	return append(dst, b.Bytes()...)
}

// resultFacts are the top-level members of a result the engine cares about.
type resultFacts struct {
	resultType    string
	hasResultType bool
	hasTTL        bool
	hasScope      bool
	shape         resultShape
}

func scanResult(res []byte) (f resultFacts, ok bool) {
	it, ok := jsonscan.NewObjectIter(res)
	if !ok {
		return f, false
	}
	for {
		k, v, more := it.Next()
		if !more {
			return f, true
		}
		switch {
		case jsonscan.KeyIs(k, "resultType"):
			f.resultType, f.hasResultType = jsonscan.String(v)
		case jsonscan.KeyIs(k, "ttlMs"):
			f.hasTTL = true
		case jsonscan.KeyIs(k, "cacheScope"):
			f.hasScope = true
		default:
			f.shape.take(k, v)
		}
	}
}

// checkResult validates a Provider result and completes it for 2026-07-28:
// resultType "complete" when absent, and ttlMs/cacheScope on a complete
// resources/read result. input_required is refused outside tools/call,
// prompts/get and resources/read, and on legacy sessions; a complete
// result must have its method's shape (conform).
func (s *Server) checkResult(cl *call, res []byte) ([]byte, error) {
	if !jsonscan.Valid(res) {
		s.log.Error("provider returned invalid JSON", "method", cl.req.Method)
		return nil, errInternal
	}
	f, ok := scanResult(res)
	if !ok {
		s.log.Error("provider result is not a JSON object", "method", cl.req.Method)
		return nil, errInternal
	}
	res = compact(res)
	if f.resultType == "input_required" && (!cl.req.Stateless || !mayRequireInput(cl.req.Method)) {
		s.log.Error("provider returned input_required where it is not allowed", "method", cl.req.Method, "stateless", cl.req.Stateless)
		return nil, errInternal
	}
	res, err := s.conform(cl, res, &f)
	if err != nil {
		return nil, err
	}
	if !cl.req.Stateless {
		return res, nil
	}
	complete := !f.hasResultType || f.resultType == "complete"
	needTTL := complete && cl.req.Method == methodResRead && (!f.hasTTL || !f.hasScope)
	if f.hasResultType && !needTTL {
		return res, nil
	}
	if !needTTL {
		cl.extra = resultTypeComplete // the common case: no allocation
		return res, nil
	}
	var extra []byte
	if !f.hasResultType {
		extra = append(extra, resultTypeComplete...)
	}
	if !f.hasTTL {
		extra = append(extra, `"ttlMs":`...)
		extra = strconv.AppendInt(extra, s.opts.ReadTTL.Milliseconds(), 10)
		extra = append(extra, ',')
	}
	if !f.hasScope {
		extra = append(extra, `"cacheScope":`...)
		extra = append(extra, cacheScope(&cl.req)...)
		extra = append(extra, ',')
	}
	cl.extra = extra
	return res, nil
}

var resultTypeComplete = []byte(`"resultType":"complete",`)

// conform checks a result of cl (f its scan) against the MCP result type
// of its method (see conformed); one that does not conform is logged and
// told to the Observer (RequestInfo.Nonconforming), as is a tool error
// (RequestInfo.ToolError).
func (s *Server) conform(cl *call, res []byte, f *resultFacts) ([]byte, error) {
	r := &cl.req
	out, bad, err := conformed(r.Method, res, f)
	cl.ri.ToolError = string(f.shape.m[shIsError]) == "true"
	if bad != nil {
		cl.ri.Nonconforming = true
		s.log.Warn("provider returned a result that does not conform to MCP", "method", r.Method, "name", r.Parsed.Name, "uri", r.Parsed.URI, "error", bad)
	}
	return out, err
}

// ConformResult holds res, a Provider's result for r, to the MCP result
// type of r's method, as the engine does with every result: one that
// does not conform becomes a tool error naming the member (tools/call)
// or a -32603 *jsonrpc.Error; one that is not a JSON object is a -32603
// too. Code that runs a Provider without the engine (the wasmcp call
// command) calls it itself, as it calls ParseParams.
func (r *Request) ConformResult(res []byte) ([]byte, error) {
	f, ok := resultFacts{}, jsonscan.Valid(res)
	if ok {
		f, ok = scanResult(res)
	}
	if !ok {
		return nil, errInternal
	}
	out, _, err := conformed(r.Method, res, &f)
	return out, err
}

// conformed checks a result of method (f its scan; an input_required one
// is not checked) against the MCP result type of method: a tools/call
// result that does not conform becomes a tool error the model can read
// (f rescanned), any other a -32603 error; both name the member, and bad
// is what does not conform (nil when the result does).
func conformed(method string, res []byte, f *resultFacts) (out []byte, bad, err error) {
	if f.resultType == "input_required" {
		return res, nil, nil
	}
	bad = checkShape(method, &f.shape)
	if bad == nil {
		return res, nil, nil
	}
	if method != methodToolsCall {
		return nil, bad, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: bad.Error()}
	}
	res = append([]byte(`{"content":[{"type":"text","text":`), jsonscan.AppendString(nil, bad.Error())...)
	res = append(res, `}],"isError":true}`...)
	*f, _ = scanResult(res)
	return res, bad, nil
}

// compact returns v without insignificant newlines (a copy only when it
// has some).
func compact(v []byte) []byte {
	if bytes.IndexByte(v, '\n') < 0 && bytes.IndexByte(v, '\r') < 0 {
		return v
	}
	return appendCompact(nil, v)
}

// appendResult appends the response carrying res, with the members extra
// (each followed by a comma) inserted at the start of the object.
func appendResult(dst []byte, id jsonrpc.ID, res, extra []byte) []byte {
	if len(extra) == 0 {
		return jsonrpc.AppendResult(dst, id, res)
	}
	i := bytes.IndexByte(res, '{')
	rest := bytes.TrimLeft(res[i+1:], " \t\r\n")
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = id.AppendJSON(dst)
	dst = append(dst, `,"result":{`...)
	dst = append(dst, extra...)
	if len(rest) > 0 && rest[0] == '}' {
		dst = dst[:len(dst)-1] // no comma before the end of an empty object
	}
	dst = append(dst, rest...)
	return append(dst, '}')
}

// cacheScope is "private" for authenticated callers, else "public".
func cacheScope(r *Request) string {
	if r.Principal != "" {
		return `"private"`
	}
	return `"public"`
}

func appendTTL(dst []byte, d time.Duration, r *Request) []byte {
	dst = append(dst, `,"ttlMs":`...)
	dst = strconv.AppendInt(dst, d.Milliseconds(), 10)
	dst = append(dst, `,"cacheScope":`...)
	return append(dst, cacheScope(r)...)
}

// discover answers server/discover.
func (s *Server) discover(cl *call) []byte {
	b := make([]byte, 0, 512)
	b = append(b, `{"resultType":"complete","supportedVersions":`...)
	b = append(b, supportedVersionsJSON...)
	b = append(b, `,"capabilities":`...)
	b = append(b, capabilities(s.p.Features(), version20260728)...)
	if s.opts.Instructions != "" {
		b = append(b, `,"instructions":`...)
		b = jsonscan.AppendString(b, s.opts.Instructions)
	}
	b = appendTTL(b, s.opts.ListTTL, &cl.req)
	b = append(b, `,"_meta":{"`+metaServerInfo+`":`...)
	b = append(b, s.serverInfo...)
	return append(b, "}}"...)
}
