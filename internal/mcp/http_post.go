package mcp

import (
	"context"
	"errors"
	"net"
	"net/http"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// servePost handles one POSTed message (or 2025-03-26 batch).
func (h *httpHandler) servePost(w http.ResponseWriter, r *http.Request) {
	if !checkContentType(r) {
		writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Content-Type must be application/json"})
		return
	}
	buf, err := h.readBody(w, r)
	if err != nil {
		if errors.Is(err, errBodyTooLarge) {
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: body larger than the server accepts"})
			return
		}
		// Close the connection: net/http would otherwise read the rest of
		// a slow body before answering.
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: could not read the body"})
		return
	}
	keep := false
	defer func() {
		if !keep {
			putBuf(buf)
		}
	}()
	body := *buf
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, body)
		return
	}
	m, perr := jsonrpc.Parse(body)
	if perr != nil {
		writeError(w, http.StatusBadRequest, m.ID, perr)
		return
	}
	if m.IsRequest() && h.isDraining() {
		refuseBusy(w, m.ID, errShuttingDown)
		return
	}
	var mi metaInfo
	if m.IsRequest() {
		scanMeta(m.Params, &mi)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	hv := r.Header.Get("Mcp-Protocol-Version")
	switch {
	case m.IsRequest() && (mi.modern || isModernOnlyMethod(m.Method)):
		h.postModern(w, r, &m, &mi)
	case sid != "":
		ss := h.sessionOf(r, sid)
		if ss == nil {
			writeError(w, http.StatusNotFound, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
			return
		}
		keep = h.postLegacy(w, r, ss, &m, &mi, buf)
	case m.IsRequest() && m.Method == methodInitialize:
		h.postInitialize(w, r, &m)
	case m.IsRequest() && hv != "" && !isLegacyVersion(hv):
		h.postModern(w, r, &m, &mi)
	case !m.IsRequest():
		w.WriteHeader(http.StatusAccepted)
	default:
		writeError(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "invalid request: missing Mcp-Session-Id (send initialize first, or per-request _meta for protocol version 2026-07-28)"})
	}
}

// postModern serves a 2026-07-28 request. The checks run in the order the
// protocol fixes: _meta (-32602), headers (-32020), version (-32022), then
// the method (-32601, 404); every refusal is JSON with the request id.
func (h *httpHandler) postModern(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, mi *metaInfo) {
	s := h.s
	e := checkModernMeta(mi)
	if e == nil {
		e = h.checkHeaders(r, m, mi)
	}
	if e == nil {
		e = checkModernVersion(mi)
	}
	if e == nil {
		e = checkModernMethod(m.Method)
	}
	if e != nil {
		status := statusFor(e.Code)
		if e.Code == jsonrpc.CodeInvalidParams {
			status = http.StatusBadRequest
		}
		writeError(w, status, m.ID, e)
		return
	}
	ds := &directSink{w: w, rc: http.NewResponseController(w)}
	cl := s.newModernCall(r.Context(), m, mi, ds)
	cl.header = r.Header
	id := identityFrom(r.Context())
	cl.req.Principal, cl.req.Scopes = id.Principal, id.Scopes
	cl.keepAlive = h.opts.KeepAlive
	cl.stop = h.done
	cl.drain = h.draining
	cl.remote = remoteHost(r)
	if rf := s.admitCall(cl); rf != nil {
		cl.cancel()
		refuse(w, m.ID, rf)
		return
	}
	stop := context.AfterFunc(h.ctx, cl.cancel) // the handler closes: cancel
	res, err := s.invoke(cl)
	stop()
	out := getBuf()
	resp, code, ok := s.finish(cl, res, err, (*out)[:0])
	switch {
	case ok:
		ds.finish(resp, statusFor(code))
	case h.ctx.Err() != nil && r.Context().Err() == nil:
		// Cancelled by the server's shutdown: say so.
		resp = jsonrpc.AppendError(resp[:0], m.ID, errShuttingDown)
		w.Header()["Retry-After"] = retryAfterValue
		ds.finish(resp, http.StatusServiceUnavailable)
	}
	*out = resp
	putBuf(out)
}

// remoteHost is the client's address without its port: one client with
// many connections is one principal.
func remoteHost(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}

// postInitialize opens a legacy session.
func (h *httpHandler) postInitialize(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !isSupportedVersion(v) {
		writeError(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unsupported MCP-Protocol-Version " + v})
		return
	}
	ss := h.newSession()
	ss.principal = identityFrom(r.Context()).Principal
	res, e := ss.c.initialize(m)
	if e != nil {
		ss.c.close()
		writeError(w, http.StatusBadRequest, m.ID, e)
		return
	}
	if !h.addSession(ss) {
		ss.c.close()
		refuseBusy(w, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many sessions; retry later"})
		return
	}
	w.Header().Set("Mcp-Session-Id", ss.id)
	b := getBuf()
	*b = jsonrpc.AppendResult((*b)[:0], m.ID, res)
	writeJSON(w, http.StatusOK, *b)
	putBuf(b)
}

// postLegacy serves a message of a legacy session. It reports whether it
// kept buf (a request running past the handler owns it).
func (h *httpHandler) postLegacy(w http.ResponseWriter, r *http.Request, ss *httpSession, m *jsonrpc.Message, mi *metaInfo, buf *[]byte) bool {
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !isSupportedVersion(v) {
		writeError(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unsupported MCP-Protocol-Version " + v})
		return false
	}
	if !ss.enter() {
		writeError(w, http.StatusNotFound, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return false
	}
	defer ss.leave()
	switch {
	case m.IsResponse():
		ss.c.handleResponse(m)
		w.WriteHeader(http.StatusAccepted)
		return false
	case m.IsNotification():
		ss.c.handleNotification(m)
		w.WriteHeader(http.StatusAccepted)
		return false
	}
	st := ss.newStream()
	cl := ss.c.newLegacyCall(m, mi, st)
	cl.header = r.Header
	cl.req.Principal, cl.req.Scopes = ss.principal, identityFrom(r.Context()).Scopes
	if !ss.c.track(cl) {
		cl.cancel()
		ss.dropStream(st)
		writeError(w, http.StatusBadRequest, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a request with this id is already running"})
		return false
	}
	if rf := h.s.admitCall(cl); rf != nil {
		ss.c.untrack(cl)
		cl.cancel()
		ss.dropStream(st)
		refuse(w, m.ID, rf)
		return false
	}
	ss.enter() // the request itself, until it finishes
	go func() {
		defer ss.leave()
		res, err := h.s.invoke(cl)
		resp, _, ok := h.s.finish(cl, res, err, nil)
		ss.c.untrack(cl)
		putBuf(buf)
		if !ok {
			resp = nil
		}
		st.finish(resp)
	}()
	h.serveStream(w, r, ss, st)
	return true
}

// serveStream writes the response of a legacy POST: JSON when the request
// sends nothing before its result, SSE (with a priming event for
// 2025-11-25) from the first message on.
func (h *httpHandler) serveStream(w http.ResponseWriter, r *http.Request, ss *httpSession, st *sseStream) {
	for {
		st.mu.Lock()
		sse, done, final := st.sse, st.done, st.final
		ch := st.changed
		st.mu.Unlock()
		if sse {
			break
		}
		if done {
			ss.dropStream(st)
			if final == nil {
				// Cancelled: an SSE response without events.
				startSSE(w)
				return
			}
			writeJSON(w, http.StatusOK, final)
			return
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			st.mu.Lock()
			st.detached = !st.sse
			gone := st.detached && st.done
			st.mu.Unlock()
			if gone {
				ss.dropStream(st)
			}
			return
		case <-ss.done:
			writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session terminated"})
			return
		}
	}
	startSSE(w)
	_, version, _, _ := ss.c.snapshot()
	h.writePriming(w, st, 0, version)
	if st.pump(w, r, 0, h.opts.KeepAlive, true, nil) {
		ss.dropStream(st)
	}
}

// postBatch serves a 2025-03-26 batch: every request runs, the responses
// come back as one JSON array (their notifications go to the session's
// standalone stream).
func (h *httpHandler) postBatch(w http.ResponseWriter, r *http.Request, body []byte) {
	if !jsonscan.Valid(body) {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: invalid JSON"})
		return
	}
	if h.isDraining() {
		refuseBusy(w, jsonrpc.ID{}, errShuttingDown)
		return
	}
	ss := h.sessionOf(r, r.Header.Get("Mcp-Session-Id"))
	if ss == nil {
		if r.Header.Get("Mcp-Session-Id") != "" {
			writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
			return
		}
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: batches are only accepted in a 2025-03-26 session"})
		return
	}
	if _, v, _, _ := ss.c.snapshot(); v != version20250326 {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: batches are only accepted in a 2025-03-26 session"})
		return
	}
	if !ss.enter() {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return
	}
	defer ss.leave()
	elems, perr := jsonrpc.ParseBatch(body)
	if perr == nil {
		perr = h.s.batchTooLong(len(elems))
	}
	if perr != nil {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, perr)
		return
	}
	var calls []*call
	var immediate [][]byte
	for _, e := range elems {
		m, perr := jsonrpc.Parse(e)
		switch {
		case perr != nil:
			immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, perr))
		case m.IsResponse():
			ss.c.handleResponse(&m)
		case m.IsNotification():
			ss.c.handleNotification(&m)
		case m.Method == methodInitialize:
			immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "invalid request: initialize must not be part of a batch"}))
		default:
			var mi metaInfo
			scanMeta(m.Params, &mi)
			cl := ss.c.newLegacyCall(&m, &mi, ss.standalone)
			cl.header = r.Header
			cl.req.Principal, cl.req.Scopes = ss.principal, identityFrom(r.Context()).Scopes
			if !ss.c.track(cl) {
				cl.cancel()
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
					Message: "invalid request: a request with this id is already running"}))
				continue
			}
			if rf := h.s.admitCall(cl); rf != nil {
				ss.c.untrack(cl)
				cl.cancel()
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, rf.err))
				continue
			}
			calls = append(calls, cl)
		}
	}
	out := append(immediate, runBatch(h.s, ss.c, calls)...)
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, joinBatch(out))
}
