package mcp

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

var errInternal = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error"}

func invalidParams(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

func methodNotFound(method string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "method not found: " + method}
}

// invoke runs the method of cl and returns its result object. A panic in
// the Provider becomes an internal error.
func (s *Server) invoke(cl *call) (res []byte, err error) {
	s.active.Add(1)
	defer s.active.Add(-1)
	if ri := s.observeStart(cl); ri != nil {
		defer func() { s.opts.Observer.RequestEnd(cl.ctx, ri, res, err) }()
	}
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic while serving a request", "method", cl.req.Method, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, errInternal
		}
	}()
	if cl.req.Stateless {
		switch cl.req.Method {
		case methodDiscover:
			return s.discover(cl), nil
		case methodListen:
			return s.listen(cl)
		case methodTasksGet, methodTasksUpdate, methodTasksCancel:
			return s.tasks.serve(cl)
		}
		return s.serveFeature(cl)
	}
	switch cl.req.Method {
	case methodPing:
		return []byte("{}"), nil
	case methodSetLevel:
		lvl, ok := stringParam(cl.req.Params, "level")
		idx := logLevelIndex(lvl)
		if !ok || idx < 0 {
			return nil, invalidParams("invalid log level; want one of debug, info, notice, warning, error, critical, alert, emergency")
		}
		cl.conn.logLevel.Store(idx)
		cl.conn.stateChanged()
		return []byte("{}"), nil
	case methodSubscribe, methodUnsubscribe:
		if f := s.p.Features(); !f.Resources || !f.Subscribe {
			return nil, methodNotFound(cl.req.Method)
		}
		uri, ok := stringParam(cl.req.Params, "uri")
		if !ok || uri == "" {
			return nil, invalidParams(cl.req.Method + ": uri must be a non-empty string")
		}
		if cl.req.Method == methodUnsubscribe {
			cl.conn.unsubscribe(uri)
		} else if e := cl.conn.subscribe(uri); e != nil {
			return nil, e
		}
		cl.conn.stateChanged()
		return []byte("{}"), nil
	case methodInitialize:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the session is already initialized"}
	case methodTasksGet, methodTasksResult, methodTasksList, methodTasksCancel:
		if !s.p.Features().Tools {
			return nil, methodNotFound(cl.req.Method)
		}
		return s.tasks.serve(cl)
	}
	return s.serveFeature(cl)
}

// serveFeature runs the methods both eras share.
func (s *Server) serveFeature(cl *call) ([]byte, error) {
	f := s.p.Features()
	m := cl.req.Method
	var on bool
	switch m {
	case methodToolsList, methodToolsCall:
		on = f.Tools
	case methodResList, methodResTemplates, methodResRead:
		on = f.Resources
	case methodPromptsList, methodPromptsGet:
		on = f.Prompts
	case methodComplete:
		on = f.Completions
	case methodSkillsList, methodSkillsGet:
		_, ok := s.p.(SkillProvider)
		on = f.Skills && f.Resources && ok
	case methodDirRead:
		_, ok := s.p.(DirectoryReader)
		on = f.Skills && f.Resources && f.DirectoryRead && ok
	}
	if !on {
		return nil, methodNotFound(m)
	}
	if jsonscan.Kind(cl.req.Params) != 'o' {
		return nil, invalidParams(m + ": params must be an object")
	}
	if hasParsedParams(m) {
		if e := parseParams(&cl.req); e != nil {
			return nil, e
		}
		// A resource URI is matched against every template a plugin
		// declares: its length is bounded as a subscribed one is.
		if e := s.checkURI(m, cl.req.Parsed.URI); e != nil {
			return nil, e
		}
		if e := s.checkURI(m+" ref", cl.req.Parsed.Ref.URI); e != nil {
			return nil, e
		}
	}
	if m == methodToolsCall {
		if res, err, done := s.tasks.toolsCall(cl); done {
			return res, err
		}
	}
	if limited(m) {
		if sh, ok := s.p.(SlotSharer); ok {
			cl.share = s.limit.share(sh.SlotShare(&cl.req))
		}
		if err := s.runSlot(cl); err != nil {
			return nil, err
		}
		defer s.releaseCall(cl)
	}
	ctx, r := cl.ctx, &cl.req
	var res []byte
	var err error
	switch m {
	case methodToolsList:
		return s.list(cl, listTools)
	case methodResList:
		return s.list(cl, listResources)
	case methodResTemplates:
		return s.list(cl, listTemplates)
	case methodPromptsList:
		return s.list(cl, listPrompts)
	case methodSkillsList:
		return s.list(cl, listSkills)
	case methodSkillsGet:
		return s.getSkill(cl)
	case methodDirRead:
		return s.list(cl, listDirectory)
	case methodToolsCall:
		res, err = s.p.CallTool(ctx, r)
	case methodResRead:
		res, err = s.p.ReadResource(ctx, r)
	case methodPromptsGet:
		res, err = s.p.GetPrompt(ctx, r)
	case methodComplete:
		res, err = s.p.Complete(ctx, r)
	}
	if err != nil {
		return nil, err
	}
	return s.checkResult(cl, res)
}

// serveTracked runs the call cl of connection c (tracked for
// cancellation) and appends its response to dst (ok false when none is
// due, see finish; code is its error code, 0 for a result); then it
// untracks cl and recycles buf, the buffer its message was read into
// (nil: the caller keeps it).
func (s *Server) serveTracked(cl *call, c *conn, buf *[]byte, dst []byte) (resp []byte, code int, ok bool) {
	res, err := s.invoke(cl)
	resp, code, ok = s.finish(cl, res, err, dst)
	c.untrack(cl)
	if buf != nil {
		putBuf(buf)
	}
	return resp, code, ok
}

// finish marks cl answered and appends its response to dst. ok is false
// when no response is due: the client cancelled the request, or its
// context ended (disconnect, shutdown) and it failed. code is the JSON-RPC
// error code of an error response, 0 for a result.
func (s *Server) finish(cl *call, res []byte, err error, dst []byte) (out []byte, code int, ok bool) {
	s.releaseCall(cl)
	cl.mu.Lock()
	cl.done = true
	cancelled := cl.clientCancelled
	cl.mu.Unlock()
	abandoned := cl.ctx.Err() != nil
	cl.cancel()
	if cancelled || (abandoned && (err != nil || cl.req.Method != methodListen)) {
		return dst, 0, false
	}
	if err != nil {
		e := s.wireError(cl, err)
		return jsonrpc.AppendError(dst, cl.id, e), e.Code, true
	}
	return appendResult(dst, cl.id, res, cl.extra), 0, true
}

// wireError maps a handler error to the error object the client sees.
func (s *Server) wireError(cl *call, err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		s.log.Error("request failed", "method", cl.req.Method, "error", err)
		return errInternal
	}
	if !cl.req.Stateless {
		return je
	}
	switch c := je.Code; {
	case c == jsonrpc.CodeResourceNotFound:
		e := *je
		e.Code = jsonrpc.CodeInvalidParams
		return &e
	case c == jsonrpc.CodeURLElicitationRequired,
		c <= -32020 && c >= -32099 && c != jsonrpc.CodeHeaderMismatch &&
			c != jsonrpc.CodeMissingClientCapability && c != jsonrpc.CodeUnsupportedVersion:
		s.log.Error("provider error code not allowed in 2026-07-28", "method", cl.req.Method, "code", c)
		return errInternal
	}
	return je
}
