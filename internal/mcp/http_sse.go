package mcp

import (
	"net/http"
	"net/url"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// The HTTP+SSE transport of 2024-11-05 runs beside Streamable HTTP on the
// same handler: GET on HTTPOptions.SSEPath opens a session and its event
// stream, whose first event ("endpoint") names the URL the client POSTs
// its messages to (MessagesPath?sessionId=…). Every answer goes on the
// stream; a POST gets 202 once its message is admitted. A session lives as
// long as its stream: it ends when the client goes away.
//
// A session is an httpSession whose standalone stream carries everything,
// so the session limit, principal binding, idle expiry, the stream's
// retention bounds (ReplayEvents, ReplayBytes: the oldest events go first
// for a client that does not read) and the write deadline are those of
// Streamable HTTP. The requests of one session run at most
// Options.MaxConcurrency at once, as on a stdio connection: a POST beyond
// that waits for a slot.

// sessionSlots bounds the running requests of an HTTP+SSE session.
type sessionSlots chan struct{}

func (s sessionSlots) acquire() { s <- struct{}{} }
func (s sessionSlots) release() { <-s }

// sseSink is where the requests of an HTTP+SSE session write: the
// session's stream, which (unlike a Streamable HTTP response) a request
// cannot close.
type sseSink struct{ st *sseStream }

func (s sseSink) send(msg []byte) error              { return s.st.send(msg) }
func (s sseSink) notice(key string, msg []byte) bool { return s.st.notice(key, msg) }

// serveSSEStream opens an HTTP+SSE session (GET SSEPath).
func (h *httpHandler) serveSSEStream(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "method not allowed: the SSE endpoint takes GET"})
		return
	}
	if h.isDraining() {
		refuseBusy(w, jsonrpc.ID{}, errShuttingDown)
		return
	}
	ss := h.newSession()
	ss.sse = true
	ss.slots = make(sessionSlots, h.s.opts.MaxConcurrency)
	ss.principal = identityFrom(r.Context()).Principal
	if !h.addSession(ss) {
		ss.c.close()
		refuseBusy(w, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many sessions; retry later"})
		return
	}
	defer ss.close()
	ss.enter() // the open stream keeps the session alive
	defer ss.leave()

	// On shutdown the stream ends once the requests in flight have
	// answered on it.
	go func() {
		select {
		case <-h.draining:
			ss.endStream()
		case <-ss.done:
		}
	}()

	startSSE(w)
	ev := make([]byte, 0, 128)
	ev = append(ev, "event: endpoint\ndata: "...)
	ev = append(ev, h.opts.MessagesPath...)
	ev = append(ev, "?sessionId="...)
	ev = append(ev, url.QueryEscape(ss.id)...)
	ev = append(ev, "\n\n"...)
	if _, err := w.Write(ev); err != nil {
		return
	}
	if http.NewResponseController(w).Flush() != nil {
		return
	}
	ss.standalone.pump(w, r, 0, h.opts.KeepAlive, false, nil)
}

// serveSSEMessage takes one message of an HTTP+SSE session (POST
// MessagesPath?sessionId=…). What admission refuses is answered on the
// stream, like every other answer; the POST itself fails only when there
// is no session to answer on, or the body cannot be read.
func (h *httpHandler) serveSSEMessage(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "method not allowed: the messages endpoint takes POST"})
		return
	}
	notFound := func() { // the message is refused unread
		refuse(w, jsonrpc.ID{}, h.s.refuseUnread(time.Now(), r.Header, &refusal{err: errSessionNotFound, reason: refusedNoSession}))
	}
	ss := h.lookupSession(r, r.URL.Query().Get("sessionId"), true)
	if ss == nil {
		notFound()
		return
	}
	buf, release, ok := h.readMessage(w, r)
	if !ok {
		return
	}
	defer release()
	if !ss.enter() {
		putBuf(buf)
		notFound()
		return
	}
	defer ss.leave()
	if !h.sseMessage(r, ss, buf) {
		putBuf(buf)
	}
	w.WriteHeader(http.StatusAccepted)
}

// beginCall takes a slot of the session for a request (or batch) and
// counts it as running. The slot is waited for, so that a flood waits in
// its POSTs rather than queueing. False when the client or the session
// went away first, or when the stream is ending: then the request is
// answered that the server shuts down (and the slot given back).
func (ss *httpSession) beginCall(r *http.Request, id jsonrpc.ID) bool {
	select {
	case ss.slots <- struct{}{}:
	case <-r.Context().Done():
		return false
	case <-ss.done:
		return false
	}
	ss.mu.Lock()
	ok := !ss.ending
	if ok {
		ss.running++
	}
	ss.mu.Unlock()
	if !ok {
		ss.slots.release()
		ss.answerError(id, errShuttingDown)
	}
	return ok
}

// endCall gives back the slot of a request that ended; the last one of an
// ending stream ends it.
func (ss *httpSession) endCall() {
	ss.slots.release()
	ss.mu.Lock()
	ss.running--
	end := ss.ending && ss.running == 0
	ss.mu.Unlock()
	if end {
		ss.standalone.finish(nil)
	}
}

// endStream ends the session's stream once no request runs any more
// (shutdown: new requests are refused meanwhile).
func (ss *httpSession) endStream() {
	ss.mu.Lock()
	ss.ending = true
	end := ss.running == 0
	ss.mu.Unlock()
	if end {
		ss.standalone.finish(nil)
	}
}

// sseMessage admits the message in buf and starts it; it reports whether
// a request now runs, owning buf.
func (h *httpHandler) sseMessage(r *http.Request, ss *httpSession, buf *[]byte) bool {
	body := *buf
	out := sseSink{ss.standalone}
	prep := func(cl *call) *call {
		cl.header = r.Header
		bindHTTP(&cl.req.Client, ss.principal, identityFrom(r.Context()))
		cl.remote = h.remoteHost(r)
		return cl
	}
	if jsonrpc.IsBatch(body) {
		calls, immediate, rf := h.s.admitBatch(body, &inbound{c: ss.c, draining: h.isDraining(), header: r.Header}, func(m *jsonrpc.Message, mi *metaInfo) *call {
			return prep(ss.c.newLegacyCall(m, mi, out))
		})
		switch {
		case rf != nil:
			ss.answerError(jsonrpc.ID{}, rf.err)
			return false
		case len(calls) == 0:
			if len(immediate) > 0 {
				_ = out.send(joinBatch(immediate))
			}
			return false
		case !ss.beginCall(r, jsonrpc.ID{}):
			for _, cl := range calls {
				ss.c.untrack(cl)
				h.s.releaseCall(cl)
				cl.cancel()
			}
			return false
		}
		go func() {
			defer ss.endCall()
			defer putBuf(buf) // the calls alias it
			res := append(immediate, runBatch(h.s, ss.c, calls)...)
			_ = out.send(joinBatch(res))
		}()
		return true
	}
	in := inbound{c: ss.c, version: r.Header.Get("Mcp-Protocol-Version"), draining: h.isDraining(), header: r.Header}
	var m jsonrpc.Message
	var mi metaInfo
	rt, rf := h.s.admitMessage(body, &in, &m, &mi)
	b := getBuf()
	resp, settled := settle(rt, rf, &m, &in, (*b)[:0])
	if len(resp) > 0 {
		_ = out.send(resp)
	}
	*b = resp
	putBuf(b)
	if settled {
		return false
	}
	cl := prep(h.s.routeCall(rt, ss.c, &m, &mi, out))
	cl.slots = ss.slots // a request waiting for the client gives its slot back
	if !ss.beginCall(r, m.ID) {
		cl.cancel()
		return false
	}
	if rf := h.s.startCall(cl, ss.c); rf != nil {
		ss.endCall()
		ss.answerError(m.ID, rf.err)
		return false
	}
	go func() {
		defer ss.endCall()
		resp, _, ok := h.s.serveTracked(cl, ss.c, buf, nil)
		if ok {
			_ = out.send(resp)
		}
	}()
	return true
}

// answerError sends an error response on the session's stream.
func (ss *httpSession) answerError(id jsonrpc.ID, e *jsonrpc.Error) {
	b := getBuf()
	*b = jsonrpc.AppendError((*b)[:0], id, e)
	_ = ss.standalone.send(*b)
	putBuf(b)
}
