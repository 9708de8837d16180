package mcp

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// maxRetainedStreams bounds the finished-but-undelivered POST streams a
// session keeps for resumption.
const maxRetainedStreams = 64

// httpSession is a legacy Streamable HTTP session (Mcp-Session-Id).
type httpSession struct {
	h          *httpHandler
	c          *conn
	id         string
	principal  string // the authenticated caller that opened it ("" without access control)
	standalone *sseStream
	done       chan struct{} // closed when the session ends

	// An HTTP+SSE (2024-11-05) session: its stream carries everything,
	// slots bound its running requests.
	sse   bool
	slots sessionSlots

	mu         sync.Mutex
	running    int                  // HTTP+SSE: requests running
	ending     bool                 // HTTP+SSE: the stream ends once none runs
	streams    map[int64]*sseStream // POST streams that may still be resumed
	order      []int64              // stream ids, oldest first
	nextStream int64
	active     int // requests and open responses
	lastUsed   time.Time
	timer      *time.Timer
	closed     bool
}

func (h *httpHandler) newSession() *httpSession {
	ss := &httpSession{h: h, done: make(chan struct{}), streams: map[int64]*sseStream{}, lastUsed: time.Now()}
	ss.standalone = newSSEStream(ss, 0, h.opts.ReplayEvents, h.opts.ReplayBytes)
	ss.c = h.s.newConn(h.s.ctx, ss.standalone)
	ss.c.httpSession = ss
	ss.id = ss.c.id
	return ss
}

// addSession registers a new session; false when the handler is closed
// or full.
func (h *httpHandler) addSession(ss *httpSession) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.sessions) >= h.opts.MaxSessions {
		return false
	}
	h.sessions[ss.id] = ss
	ss.timer = time.AfterFunc(h.opts.SessionIdleTimeout, ss.expire)
	return true
}

// sessionOf returns the Streamable HTTP session id names for request r.
// The error is errSessionStore when a shared session could not be looked
// up because the session store is unavailable.
func (h *httpHandler) sessionOf(r *http.Request, id string) (*httpSession, error) {
	return h.findSession(r, id, false)
}

// lookupSession returns the session id names for request r, of the
// HTTP+SSE transport (sse) or of Streamable HTTP: nil when there is none
// of that transport, or when it belongs to another principal (a session
// id is not a credential: with access control on, only its owner may use
// it).
func (h *httpHandler) lookupSession(r *http.Request, id string, sse bool) *httpSession {
	ss, _ := h.findSession(r, id, sse)
	return ss
}

// findSession is lookupSession, with the session store's failure.
func (h *httpHandler) findSession(r *http.Request, id string, sse bool) (*httpSession, error) {
	h.mu.Lock()
	ss := h.sessions[id]
	h.mu.Unlock()
	adopted := false
	if ss == nil && !sse && h.s.opts.Sessions != nil {
		var err error
		if ss, err = h.adopt(r, id); err != nil {
			return nil, err
		}
		adopted = ss != nil
	}
	if ss == nil || ss.sse != sse || ss.principal != identityFrom(r.Context()).Principal {
		return nil, nil
	}
	if !adopted && ss.c.shared != nil && !h.touch(ss) {
		return nil, nil
	}
	return ss, nil
}

// enter marks the session busy; false when it is closed.
func (ss *httpSession) enter() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.closed {
		return false
	}
	ss.active++
	ss.lastUsed = time.Now()
	return true
}

func (ss *httpSession) leave() {
	ss.mu.Lock()
	ss.active--
	ss.lastUsed = time.Now()
	ss.mu.Unlock()
}

// expire ends the session when it was idle for the timeout.
func (ss *httpSession) expire() {
	ss.mu.Lock()
	if ss.closed {
		ss.mu.Unlock()
		return
	}
	idle := ss.h.opts.SessionIdleTimeout
	if left := idle - time.Since(ss.lastUsed); ss.active > 0 || left > 0 {
		if left <= 0 {
			left = idle
		}
		ss.timer.Reset(left)
		ss.mu.Unlock()
		return
	}
	ss.mu.Unlock()
	ss.h.log.Debug("session expired", "session_id", ss.id)
	ss.close()
}

// close ends the session: its requests are cancelled and its streams end.
func (ss *httpSession) close() {
	first := closeOnce(&ss.mu, &ss.closed, func() {
		if ss.timer != nil {
			ss.timer.Stop()
		}
		close(ss.done)
		ss.streams = nil
	})
	if !first {
		return
	}
	ss.h.mu.Lock()
	if ss.h.sessions[ss.id] == ss {
		delete(ss.h.sessions, ss.id)
	}
	ss.h.mu.Unlock()
	ss.c.close()
}

// newStream opens the stream of a POSTed request.
func (ss *httpSession) newStream() *sseStream {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.nextStream++
	st := newSSEStream(ss, ss.nextStream, ss.h.opts.ReplayEvents, ss.h.opts.ReplayBytes)
	if ss.closed {
		return st
	}
	ss.streams[st.id] = st
	ss.order = append(ss.order, st.id)
	if len(ss.order) > maxRetainedStreams {
		// Forget the oldest streams that are no longer running.
		kept := ss.order[:0]
		for i, id := range ss.order {
			old := ss.streams[id]
			if old != nil && len(ss.order)-i > maxRetainedStreams && old.finishedOrDone() {
				delete(ss.streams, id)
				continue
			}
			if old != nil {
				kept = append(kept, id)
			}
		}
		ss.order = kept
	}
	return st
}

func (st *sseStream) finishedOrDone() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.done
}

// dropStream forgets a stream that needs no resumption.
func (ss *httpSession) dropStream(st *sseStream) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.streams[st.id] == st {
		delete(ss.streams, st.id)
		for i, id := range ss.order {
			if id == st.id {
				ss.order = append(ss.order[:i], ss.order[i+1:]...)
				break
			}
		}
	}
}

func (ss *httpSession) stream(id int64) *sseStream {
	if id == 0 {
		return ss.standalone
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.streams[id]
}

// sessionFor finds the session of a GET or DELETE, answering the request
// itself when there is none: 405 without Mcp-Session-Id (there is nothing
// to stream or delete without a session), 404 for an unknown one.
func (h *httpHandler) sessionFor(w http.ResponseWriter, r *http.Request) *httpSession {
	sid := r.Header.Get("Mcp-Session-Id")
	if sid == "" {
		w.Header().Set("Allow", "POST")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "method not allowed: " + r.Method + " needs the Mcp-Session-Id of a legacy session"})
		return nil
	}
	ss, err := h.sessionOf(r, sid)
	if err != nil {
		refuseBusy(w, jsonrpc.ID{}, errSessionStore)
		return nil
	}
	if ss == nil {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return nil
	}
	if v := r.Header.Get("Mcp-Protocol-Version"); v != "" && !isSupportedVersion(v) {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unsupported MCP-Protocol-Version " + v})
		return nil
	}
	return ss
}

// serveGet opens the standalone SSE stream of a session, or resumes a
// stream after Last-Event-ID.
func (h *httpHandler) serveGet(w http.ResponseWriter, r *http.Request) {
	ss := h.sessionFor(w, r)
	if ss == nil {
		return
	}
	st, cursor := ss.standalone, int64(-1)
	hdr := r.Header.Get("Last-Event-ID")
	last := hdr
	if last != "" && ss.c.shared != nil {
		local, handled := h.resumeShared(w, r, ss, last)
		if handled {
			return
		}
		last = local
	}
	if last != "" {
		sid, seq, ok := parseEventID(last)
		if ok {
			st = ss.stream(sid)
		}
		if !ok || st == nil {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unknown or expired Last-Event-ID " + hdr})
			return
		}
		cursor = seq
	}
	if !ss.enter() {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"})
		return
	}
	defer ss.leave()
	if cursor < 0 {
		st.mu.Lock()
		cursor = st.delivered
		st.mu.Unlock()
	}
	startSSE(w)
	_, version, _, _ := ss.c.snapshot()
	h.writePriming(w, st, cursor, version)
	var drain <-chan struct{}
	if st.id == 0 {
		drain = h.draining // the standalone stream ends on shutdown
	}
	if st.pump(w, r, cursor, h.opts.KeepAlive, false, drain) && st.id != 0 {
		ss.dropStream(st)
	}
}

// writePriming sends the event that lets a 2025-11-25 client resume: an
// id, the retry delay and empty data.
func (h *httpHandler) writePriming(w http.ResponseWriter, st *sseStream, cursor int64, version string) {
	if version < version20251125 {
		_ = http.NewResponseController(w).Flush()
		return
	}
	b := make([]byte, 0, 64)
	b = append(b, "id: "...)
	b = append(b, st.eventID(cursor)...)
	b = append(b, "\nretry: "...)
	b = strconv.AppendInt(b, h.opts.SSERetry.Milliseconds(), 10)
	b = append(b, "\ndata: \n\n"...)
	_, _ = w.Write(b)
	_ = http.NewResponseController(w).Flush()
}

func parseEventID(s string) (stream, seq int64, ok bool) {
	a, b, found := strings.Cut(s, ".")
	if !found {
		return 0, 0, false
	}
	x, err1 := strconv.ParseInt(a, 10, 64)
	y, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return 0, 0, false
	}
	return x, y, true
}

// serveDelete ends a legacy session.
func (h *httpHandler) serveDelete(w http.ResponseWriter, r *http.Request) {
	ss := h.sessionFor(w, r)
	if ss == nil {
		return
	}
	ss.close()
	h.endShared(ss)
	w.WriteHeader(http.StatusNoContent)
}
