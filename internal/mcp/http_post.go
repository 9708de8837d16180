package mcp

import (
	"cmp"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// servePost handles one POSTed message (or 2025-03-26 batch).
func (h *httpHandler) servePost(w http.ResponseWriter, r *http.Request) {
	buf, release, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	defer release()
	keep := false
	defer func() {
		if !keep {
			putBuf(buf)
		}
	}()
	body := *buf
	sid := r.Header.Get("Mcp-Session-Id")
	var ss *httpSession
	if sid != "" {
		var err error
		if ss, err = h.sessionOf(r, sid); err != nil {
			refuseBusy(w, jsonrpc.ID{}, errSessionStore)
			return
		}
	}
	if jsonrpc.IsBatch(body) {
		h.postBatch(w, r, sid, ss, body)
		return
	}
	in := h.inbound(r, sid, ss)
	var m jsonrpc.Message
	var mi metaInfo
	rt, rf := h.s.admitMessage(body, &in, &m, &mi)
	switch rt {
	case routeRefused:
		refuse(w, m.ID, rf)
	case routeNotice:
		if ss != nil {
			h.postNotice(w, ss, &m)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	case routePong:
		writeResult(w, m.ID, []byte("{}"))
	case routeInitialize:
		h.postInitialize(w, r, &m)
	case routeModern:
		h.postModern(w, r, &m, &mi)
	default:
		keep = h.postLegacy(w, r, ss, &m, &mi, buf)
	}
}

// readMessage reads the body of a POSTed message into a pooled buffer,
// answering the request itself when it cannot (415, 413, 400, and 503
// past MaxInflightBytes). The caller calls release when it has answered
// the message: its bytes count against MaxInflightBytes until then.
func (h *httpHandler) readMessage(w http.ResponseWriter, r *http.Request) (buf *[]byte, release func(), ok bool) {
	var start time.Time
	if h.s.opts.Observer != nil {
		start = time.Now()
	}
	var rf *refusal
	weight := h.opts.MaxBodyBytes
	if r.ContentLength >= 0 && r.ContentLength < weight {
		weight = r.ContentLength
	}
	if !checkContentType(r) {
		rf = &refusal{err: errContentType, reason: refusedMediaType}
	} else if release = h.takeBytes(weight); release == nil {
		rf = &refusal{err: errInflight, reason: refusedUnavailable, retryAfter: 1}
		w.Header().Set("Connection", "close")
	} else {
		buf, err := h.readBody(w, r)
		switch {
		case err == nil:
			return buf, release, true
		case errors.Is(err, errBodyTooLarge):
			rf = &refusal{err: errBodyLarge, reason: refusedTooLarge}
		default:
			rf = badRequest(errBodyRead)
		}
		release()
		// Close the connection: net/http would otherwise read the rest of
		// a slow or large body before answering.
		w.Header().Set("Connection", "close")
	}
	refuse(w, jsonrpc.ID{}, h.s.refuseUnread(start, r.Header, rf))
	return nil, nil, false
}

// The refusals of a POSTed body not read.
var (
	errContentType = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Content-Type must be application/json"}
	errBodyLarge   = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: body larger than the server accepts"}
	errBodyRead    = &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: could not read the body"}
	errInflight    = &jsonrpc.Error{Code: jsonrpc.CodeRequestTimeout, Message: "server busy: too many request bytes in flight; retry later", Data: []byte(`{"busy":true,"retryAfterMs":1000}`)}
)

// inbound describes request r, of session ss (sid its id, "" for none),
// to admission.
func (h *httpHandler) inbound(r *http.Request, sid string, ss *httpSession) inbound {
	in := inbound{unknownSession: sid != "" && ss == nil, version: r.Header.Get("Mcp-Protocol-Version"), draining: h.isDraining(),
		header: r.Header, headers: headerCheck{h: h, r: r}}
	if ss != nil {
		in.c = ss.c
	}
	return in
}

// postModern serves a 2026-07-28 request that admission let through.
func (h *httpHandler) postModern(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message, mi *metaInfo) {
	s := h.s
	ds := &directSink{w: w, rc: http.NewResponseController(w)}
	cl := s.newModernCall(r.Context(), m, mi, ds)
	cl.header = r.Header
	id := identityFrom(r.Context())
	bindHTTP(&cl.req.Client, id.Principal, id)
	cl.keepAlive = h.opts.KeepAlive
	cl.stop = h.done
	cl.drain = h.draining
	cl.remote = h.remoteHost(r)
	if rf := s.startCall(cl, nil); rf != nil {
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
// many connections is one principal. Behind a trusted proxy it is the
// address the proxies forwarded (clientAddr).
func (h *httpHandler) remoteHost(r *http.Request) string {
	host := r.RemoteAddr
	if hp, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = hp
	}
	if len(h.opts.TrustedProxies) == 0 {
		return host
	}
	return clientAddr(host, r.Header.Values("X-Forwarded-For"), h.opts.TrustedProxies)
}

// clientAddr returns the address of the client of a request that peer
// (an address) passed on with the X-Forwarded-For header lines xff: the
// last address of the list, read from its end, that is not a trusted
// proxy's, each hop before it having been one. A hop that does not parse
// stops the walk at the one after it, which is the client as far as the
// proxies can vouch; so does the start of the list.
func clientAddr(peer string, xff []string, trusted []netip.Prefix) string {
	isTrusted := func(s string) (netip.Addr, bool) {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = a.Unmap()
		for _, p := range trusted {
			if p.Contains(a) {
				return a, true
			}
		}
		return a, false
	}
	if _, ok := isTrusted(peer); !ok {
		return peer
	}
	client := peer
	for i := len(xff) - 1; i >= 0; i-- {
		hops := strings.Split(xff[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop := strings.TrimSpace(hops[j])
			a, ok := isTrusted(hop)
			if !a.IsValid() {
				return client
			}
			client = a.String()
			if !ok {
				return client
			}
		}
	}
	return client
}

// postInitialize opens a legacy session.
func (h *httpHandler) postInitialize(w http.ResponseWriter, r *http.Request, m *jsonrpc.Message) {
	ss := h.newSession()
	ss.principal = identityFrom(r.Context()).Principal
	res, e := ss.c.initialize(m, r.Header)
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
	if h.s.opts.Sessions != nil {
		h.share(ss)
		if h.saveSession(ss) != nil {
			ss.close()
			refuseBusy(w, m.ID, errSessionStore)
			return
		}
	}
	w.Header().Set("Mcp-Session-Id", ss.id)
	writeResult(w, m.ID, res)
}

// writeResult writes a JSON-RPC result with status 200.
func writeResult(w http.ResponseWriter, id jsonrpc.ID, res []byte) {
	b := getBuf()
	*b = jsonrpc.AppendResult((*b)[:0], id, res)
	writeJSON(w, http.StatusOK, *b)
	putBuf(b)
}

// postNotice delivers a notification or response of session ss.
func (h *httpHandler) postNotice(w http.ResponseWriter, ss *httpSession, m *jsonrpc.Message) {
	if !ss.enter() {
		writeError(w, http.StatusNotFound, m.ID, errSessionNotFound)
		return
	}
	defer ss.leave()
	ss.c.deliver(m)
	w.WriteHeader(http.StatusAccepted)
}

// postLegacy serves a message of a legacy session. It reports whether it
// kept buf (a request running past the handler owns it).
func (h *httpHandler) postLegacy(w http.ResponseWriter, r *http.Request, ss *httpSession, m *jsonrpc.Message, mi *metaInfo, buf *[]byte) bool {
	if !ss.enter() {
		writeError(w, http.StatusNotFound, m.ID, errSessionNotFound)
		return false
	}
	defer ss.leave()
	st := ss.newStream()
	cl := ss.c.newLegacyCall(m, mi, st)
	cl.header = r.Header
	bindHTTP(&cl.req.Client, ss.principal, identityFrom(r.Context()))
	if rf := h.s.startCall(cl, ss.c); rf != nil {
		ss.dropStream(st)
		refuse(w, m.ID, rf)
		return false
	}
	ss.enter() // the request itself, until it finishes
	go func() {
		defer ss.leave()
		resp, code, ok := h.s.serveTracked(cl, ss.c, buf, nil)
		if !ok {
			resp = nil
		}
		if code == jsonrpc.CodeForbidden {
			st.mu.Lock()
			st.finalStatus = http.StatusForbidden
			st.mu.Unlock()
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
		sse, done, final, status := st.sse, st.done, st.final, st.finalStatus
		ch := st.changed
		st.mu.Unlock()
		if sse {
			break
		}
		if done {
			ss.dropStream(st)
			if final == nil {
				select {
				case <-ss.done:
					// Cancelled with its session (the select below may
					// see the request end first).
					writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session terminated"})
				default:
					// Cancelled: an SSE response without events.
					startSSE(w)
				}
				return
			}
			writeJSON(w, cmp.Or(status, http.StatusOK), final)
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

// postBatch serves a 2025-03-26 batch of session ss (sid its id): every
// request runs, the responses come back as one JSON array (their
// notifications go to the session's standalone stream).
func (h *httpHandler) postBatch(w http.ResponseWriter, r *http.Request, sid string, ss *httpSession, body []byte) {
	if sid != "" && ss == nil && jsonscan.Valid(body) {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, errSessionNotFound)
		return
	}
	var c *conn
	if ss != nil {
		if !ss.enter() {
			writeError(w, http.StatusNotFound, jsonrpc.ID{}, errSessionNotFound)
			return
		}
		defer ss.leave()
		c = ss.c
	}
	calls, immediate, rf := h.s.admitBatch(body, &inbound{c: c, draining: h.isDraining(), header: r.Header}, func(m *jsonrpc.Message, mi *metaInfo) *call {
		cl := ss.c.newLegacyCall(m, mi, ss.standalone)
		cl.header = r.Header
		bindHTTP(&cl.req.Client, ss.principal, identityFrom(r.Context()))
		return cl
	})
	if rf != nil {
		refuse(w, jsonrpc.ID{}, rf)
		return
	}
	out := append(immediate, runBatch(h.s, ss.c, calls)...)
	if len(out) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	writeJSON(w, http.StatusOK, joinBatch(out))
}
