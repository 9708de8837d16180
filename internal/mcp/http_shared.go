package mcp

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Shared legacy sessions: with Options.Sessions (and Options.Bus), a
// legacy HTTP session lives in the SessionStore, so that any server of a
// cluster serves any of its requests without sticky routing. The server
// that sees a session id it does not hold loads the session's state
// (what initialize negotiated, the log level, the subscriptions) and
// serves it as its own; a change of that state is saved and announced on
// the Bus, so that every server holding the session reloads it. A client
// answer to a server-to-client request that reaches another server is
// forwarded to the one waiting for it; DELETE ends the session in the
// store and on every server; the store expires an idle session as the
// idle timer does on one server. A server that shuts down or drops an
// idle copy ends nothing but its copy.

// sharedConn is what a conn of a shared session keeps besides its state.
type sharedConn struct {
	close func() // ends the local copy (the httpSession)

	mu sync.Mutex
	// last is the SHA-256 of the stored state this copy has: a digest,
	// not the record, so that a session keeps no second copy of its
	// subscriptions and a record read back that is invalid (of any size)
	// is not kept at all.
	last [sha256.Size]byte
}

// sessionState is the stored state of a shared session.
type sessionState struct {
	Principal  string          `json:"p,omitempty"`
	Version    string          `json:"v"`
	ClientInfo json.RawMessage `json:"ci,omitempty"`
	ClientCaps json.RawMessage `json:"cc,omitempty"`
	LogLevel   int32           `json:"ll"`
	Subs       []string        `json:"s,omitempty"`
}

// Bus messages about shared sessions: the kind byte, the session id,
// and for busReply a newline and the client's JSON-RPC response.
const (
	busSessionChanged = 'S'
	busSessionEnded   = 'D'
	busReply          = 'P'
)

// sessionMAC is the length of the seal of a session id, in bytes.
const sessionMAC = 12

// newConnID returns a new session id: with Options.SessionKey, 128
// random bits and their seal, so that any server of the cluster can tell
// a session id it minted from a guessed one before asking the store.
func (s *Server) newConnID() string {
	id := newSessionID()
	if len(s.opts.SessionKey) == 0 {
		return id
	}
	return id + "." + s.sealSessionID(id)
}

func (s *Server) sealSessionID(raw string) string {
	m := hmac.New(sha256.New, s.opts.SessionKey)
	m.Write([]byte("session " + raw))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:sessionMAC])
}

// validSessionID reports whether id carries a valid seal.
func (s *Server) validSessionID(id string) bool {
	raw, mac, ok := strings.Cut(id, ".")
	if !ok || len(raw) != 22 || len(s.opts.SessionKey) == 0 {
		return false
	}
	return hmac.Equal([]byte(mac), []byte(s.sealSessionID(raw)))
}

// state returns the stored form of c's state.
func (c *conn) state(principal string) sessionState {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := sessionState{Principal: principal, Version: c.version, ClientInfo: c.clientInfo, ClientCaps: c.clientCaps, LogLevel: c.logLevel.Load()}
	for u := range c.subs {
		st.Subs = append(st.Subs, u)
	}
	slices.Sort(st.Subs)
	return st
}

// decodeState parses a session state read back from the store and
// checks it as strictly as the requests that made it: a legacy version
// the engine speaks, a log level it knows, at most MaxSubscriptions
// subscriptions of at most MaxURIBytes, and capabilities and clientInfo
// in the bounded form a session keeps (clientcaps.go). The store is not
// trusted more than a client: a record that does not pass is not served.
func (s *Server) decodeState(data []byte) (*sessionState, error) {
	if max := s.maxSessionRecord(); len(data) > max {
		return nil, fmt.Errorf("mcp: session record of %d bytes, over %d", len(data), max)
	}
	var st sessionState
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("mcp: session record does not parse: %w", err)
	}
	switch {
	case !isLegacyVersion(st.Version):
		return nil, fmt.Errorf("mcp: session record has protocol version %q", st.Version)
	case st.LogLevel < -1 || st.LogLevel >= int32(len(logLevels)):
		return nil, fmt.Errorf("mcp: session record has log level %d", st.LogLevel)
	case len(st.Subs) > s.opts.MaxSubscriptions:
		return nil, fmt.Errorf("mcp: session record has %d subscriptions, over %d", len(st.Subs), s.opts.MaxSubscriptions)
	case len(st.ClientCaps) > 0 && jsonscan.Kind(st.ClientCaps) != 'o',
		len(st.ClientInfo) > 0 && jsonscan.Kind(st.ClientInfo) != 'o':
		return nil, errors.New("mcp: session record has capabilities or clientInfo that are not objects")
	}
	for _, u := range st.Subs {
		if u == "" || len(u) > s.opts.MaxURIBytes {
			return nil, fmt.Errorf("mcp: session record has a subscribed URI of %d bytes", len(u))
		}
	}
	st.ClientCaps = keptCapabilities(st.ClientCaps)
	st.ClientInfo = keptClientInfo(st.ClientInfo)
	return &st, nil
}

// maxSessionRecord is the longest session record decodeState accepts
// and the most of one that is read from the store: every subscription at
// its longest URI, and initialize's params.
func (s *Server) maxSessionRecord() int {
	return s.opts.MaxSubscriptions*(s.opts.MaxURIBytes+8) + maxInitializeBytes
}

// restore sets c's state from the store (checked: decodeState).
func (c *conn) restore(st *sessionState) {
	c.mu.Lock()
	c.initialized = true
	c.version, c.clientInfo, c.clientCaps = st.Version, st.ClientInfo, st.ClientCaps
	c.releaseSubsLocked()
	dropped := 0
	for _, u := range st.Subs {
		if _, ok := c.subs[u]; ok {
			continue
		}
		if c.closed || !c.srv.chargeSubs(subCost(u)) {
			dropped++
			continue
		}
		c.subsCharged += subCost(u)
		if c.subs == nil {
			c.subs = map[string]struct{}{}
		}
		c.subs[u] = struct{}{}
	}
	closed := c.closed
	c.mu.Unlock()
	if dropped > 0 && !closed {
		c.srv.log.Warn("session store: subscriptions of a shared session not kept here: the server's subscription budget is spent", "session_id", c.id, "dropped", dropped, "max_subscription_bytes", c.srv.opts.MaxSubscriptionBytes)
	}
	c.logLevel.Store(st.LogLevel)
}

// share makes ss a shared session held by this server (markShared) and
// lets the Bus find it by id.
func (h *httpHandler) share(ss *httpSession) {
	if ss.c.shared == nil {
		markShared(ss)
	}
	s := h.s
	s.mu.Lock()
	if s.shared == nil {
		s.shared = map[string]*conn{}
	}
	s.shared[ss.id] = ss.c
	s.mu.Unlock()
}

// markShared sets up ss's conn as shared: its server-to-client request
// ids start at a random point (two servers may ask the same client).
func markShared(ss *httpSession) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	ss.c.nextOut.Store(int64(binary.BigEndian.Uint64(b[:]) >> 12)) // below 2^52: exact in JSON numbers
	ss.c.shared = &sharedConn{close: ss.close}
}

// saveSession stores the state of a shared session; it logs and returns
// the store's error.
func (h *httpHandler) saveSession(ss *httpSession) error {
	data, _ := json.Marshal(ss.c.state(ss.principal))
	err := h.s.opts.Sessions.Save(ss.id, data, h.opts.SessionIdleTimeout)
	if err == nil {
		ss.c.shared.remember(data)
	}
	if err != nil {
		h.log.Warn("session state not saved to the session store", "session_id", ss.id, "error", err)
	}
	return err
}

// stateChanged saves a shared session's state after logging/setLevel or
// a subscription change and tells the other servers to reload it.
func (c *conn) stateChanged() {
	if c.shared == nil || c.httpSession == nil {
		return
	}
	ss := c.httpSession
	if ss.h.saveSession(ss) == nil {
		c.srv.toBus(busSessionChanged, ss.id)
	}
}

// errSessionStore answers (503, with Retry-After) a request of a shared
// session this server does not hold while the session store is
// unavailable: the session may well be alive, so not 404.
var errSessionStore = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "session store unavailable; retry later"}

// adopt loads the shared session id from the store and serves it here;
// nil when it is not a valid id, not in the store, or of another
// principal, and errSessionStore when the store is unavailable.
func (h *httpHandler) adopt(r *http.Request, id string) (*httpSession, error) {
	s := h.s
	if !s.validSessionID(id) {
		return nil, nil
	}
	data, found, err := s.opts.Sessions.Load(id, h.opts.SessionIdleTimeout, s.maxSessionRecord())
	if err != nil {
		h.log.Warn("session store unavailable: a session held by another server cannot be served here", "session_id", id, "error", err)
		return nil, errSessionStore
	}
	if !found {
		return nil, nil
	}
	st, err := s.decodeState(data)
	if err != nil {
		h.log.Warn("session store: an invalid session record is not served", "session_id", id, "error", err)
		return nil, nil
	}
	if st.Principal != identityFrom(r.Context()).Principal {
		return nil, nil
	}
	ss := h.newSession()
	ss.id, ss.c.id, ss.principal = id, id, st.Principal
	ss.c.restore(st)
	markShared(ss)
	ss.c.shared.remember(data)
	h.mu.Lock()
	if old := h.sessions[id]; old != nil || h.closed || len(h.sessions) >= h.opts.MaxSessions {
		h.mu.Unlock()
		ss.c.close()
		return old, nil
	}
	h.sessions[id] = ss
	ss.timer = time.AfterFunc(h.opts.SessionIdleTimeout, ss.expire)
	h.mu.Unlock()
	h.share(ss)
	s.register(ss.c)
	h.log.Debug("session adopted from the session store", "session_id", id)
	return ss, nil
}

// touch runs before every request of a shared session held here: it
// extends the session's expiry in the store, takes the state another
// server may have changed (a client may set its log level through one
// server and call a tool through another at once), and reports whether
// the session is still alive there. An unreachable store keeps it alive
// here, with the state this copy has.
func (h *httpHandler) touch(ss *httpSession) bool {
	data, found, err := h.s.opts.Sessions.Load(ss.id, h.opts.SessionIdleTimeout, h.s.maxSessionRecord())
	switch {
	case err != nil:
		return true
	case !found:
		ss.close()
		return false
	}
	ss.c.refresh(data)
	return true
}

// remember records the stored state this copy has.
func (sh *sharedConn) remember(data []byte) {
	sum := sha256.Sum256(data)
	sh.mu.Lock()
	sh.last = sum
	sh.mu.Unlock()
}

// refresh takes the stored state data when it differs from this copy's.
func (c *conn) refresh(data []byte) {
	sh := c.shared
	sum := sha256.Sum256(data)
	sh.mu.Lock()
	same := sh.last == sum
	sh.last = sum
	sh.mu.Unlock()
	if same {
		return
	}
	st, err := c.srv.decodeState(data)
	if err != nil {
		c.srv.log.Warn("session store: an invalid session record is ignored; the session keeps its state", "session_id", c.id, "error", err)
		return
	}
	c.restore(st)
}

// endShared ends a shared session everywhere (DELETE).
func (h *httpHandler) endShared(ss *httpSession) {
	if ss.c.shared == nil {
		return
	}
	if err := h.s.opts.Sessions.Delete(ss.id); err != nil {
		h.log.Warn("session not deleted from the session store; it expires there", "session_id", ss.id, "error", err)
	}
	h.s.toBus(busSessionEnded, ss.id)
}

// forwardReply sends a client's answer that no request here waits for to
// the other servers holding the session.
func (c *conn) forwardReply(m *jsonrpc.Message) {
	msg := make([]byte, 0, 64+len(m.Result))
	msg = append(append(msg, c.id...), '\n')
	if m.Error != nil {
		msg = jsonrpc.AppendError(msg, m.ID, m.Error)
	} else {
		msg = jsonrpc.AppendResult(msg, m.ID, m.Result)
	}
	c.srv.toBus(busReply, string(msg))
}

// sessionEvent handles a Bus message about a shared session.
func (s *Server) sessionEvent(kind byte, msg []byte) {
	if kind == busRelayed {
		s.relayed(string(msg))
		return
	}
	if kind == busResume {
		s.relayTo(string(msg))
		return
	}
	id, reply, _ := strings.Cut(string(msg), "\n")
	s.mu.Lock()
	c := s.shared[id]
	s.mu.Unlock()
	if c == nil || c.shared == nil {
		return
	}
	switch kind {
	case busSessionEnded:
		c.shared.close()
	case busSessionChanged:
		go func() {
			data, found, err := s.opts.Sessions.Load(id, c.httpSession.h.opts.SessionIdleTimeout, s.maxSessionRecord())
			if err == nil && found {
				c.refresh(data)
			}
		}()
	case busReply:
		m, e := jsonrpc.Parse([]byte(reply))
		if e == nil && m.IsResponse() {
			c.mu.Lock()
			_, waiting := c.pending[m.ID]
			c.mu.Unlock()
			if waiting {
				c.handleResponse(&m)
			}
		}
	}
}

// sharedConnOf returns the shared legacy session held here whose tasks
// are bound to principal (taskPrincipal: "s " and the session id), or nil.
func (s *Server) sharedConnOf(principal string) *conn {
	id, ok := strings.CutPrefix(principal, "s ")
	if !ok || s.opts.Sessions == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shared[id]
}

// forgetShared drops c from the Bus's index.
func (s *Server) forgetShared(c *conn) {
	s.mu.Lock()
	if s.shared[c.id] == c {
		delete(s.shared, c.id)
	}
	s.mu.Unlock()
}

// Event ids of shared sessions name the server that holds the stream:
// "<instance>.<seal>.<stream>.<seq>", the seal an HMAC of the session,
// instance and stream under SessionKey. A client that resumes with
// Last-Event-ID on another server gets, for the standalone stream, that
// server's own stream from now on (notifications reach every holder of
// the session); for the stream of a request, the events after seq relayed
// over the Bus from the server that holds it, until the response.

// Bus messages of a relay: busResume asks the holder of a stream to relay
// it ("sid\nlast event id\nrelay"; the holder checks the seal), busRelayed carries one event
// ("relay\ne\n<event id>\n<data>"), the start ("relay\na") or the end
// ("relay\nz").
const (
	busResume  = 'E'
	busRelayed = 'V'
)

// relayWait bounds the wait for the holder of a stream to answer a
// resumption: past it the stream is taken for lost with its server.
const relayWait = 3 * time.Second

// relayQueue bounds the relayed events waiting for the resuming client;
// past it they are dropped (the client resumes again).
const relayQueue = 256

// eventSeal seals the stream of a shared session held here.
func (s *Server) eventSeal(sid string, stream int64) string {
	m := hmac.New(sha256.New, s.opts.SessionKey)
	m.Write([]byte("event " + sid + " " + s.instance + " " + strconv.FormatInt(stream, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:6])
}

// sharedEventID is the event id of seq on stream of shared session sid.
func (s *Server) sharedEventID(sid string, stream, seq int64) string {
	return s.instance + "." + s.eventSeal(sid, stream) + "." + strconv.FormatInt(stream, 10) + "." + strconv.FormatInt(seq, 10)
}

// parseSharedEventID splits a shared event id. It checks the seal only
// for ids of this server (the others are checked by their holder).
func (s *Server) parseSharedEventID(sid, id string) (instance string, stream, seq int64, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 4 || len(parts[0]) != 2*instanceLen {
		return "", 0, 0, false
	}
	x, err1 := strconv.ParseInt(parts[2], 10, 64)
	y, err2 := strconv.ParseInt(parts[3], 10, 64)
	if err1 != nil || err2 != nil || x < 0 || y < 0 {
		return "", 0, 0, false
	}
	if parts[0] == s.instance && !hmac.Equal([]byte(parts[1]), []byte(s.eventSeal(sid, x))) {
		return "", 0, 0, false
	}
	return parts[0], x, y, true
}

// instanceLen is the length of a server's instance id, in bytes.
const instanceLen = 8

// newInstanceID returns a random server instance id (hex).
func newInstanceID() string {
	var b [instanceLen]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// resumeShared handles the Last-Event-ID last of shared session ss. It
// returns the local form ("stream.seq") of an id of this server, "" when
// the standalone stream should start afresh, or handled true when it
// answered the request itself (a relay, or an error).
func (h *httpHandler) resumeShared(w http.ResponseWriter, r *http.Request, ss *httpSession, last string) (local string, handled bool) {
	s := h.s
	inst, stream, seq, ok := s.parseSharedEventID(ss.id, last)
	switch {
	case !ok:
		return "-", false // not a shared event id: the caller refuses it
	case inst == s.instance:
		return strconv.FormatInt(stream, 10) + "." + strconv.FormatInt(seq, 10), false
	case stream == 0:
		return "", false
	}
	h.relayFrom(w, r, ss, last)
	return "", true
}

// relayFrom asks the server that holds the stream of event id last for
// its events after last and writes them to w until the stream's response.
func (h *httpHandler) relayFrom(w http.ResponseWriter, r *http.Request, ss *httpSession, last string) {
	s := h.s
	var b [8]byte
	_, _ = rand.Read(b[:])
	relay := base64.RawURLEncoding.EncodeToString(b[:])
	ch := make(chan []byte, relayQueue)
	s.mu.Lock()
	if s.relays == nil {
		s.relays = map[string]chan []byte{}
	}
	s.relays[relay] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.relays, relay)
		s.mu.Unlock()
	}()
	s.toBus(busResume, ss.id+"\n"+last+"\n"+relay)
	t := time.NewTimer(relayWait)
	defer t.Stop()
	select {
	case m := <-ch:
		if string(m) != "a" {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unknown or expired Last-Event-ID " + last})
			return
		}
	case <-t.C:
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "Last-Event-ID " + last + ": the stream was lost with the server that held it"})
		return
	case <-r.Context().Done():
		return
	}
	if !ss.enter() {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, errSessionNotFound)
		return
	}
	defer ss.leave()
	startSSE(w)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	tick, stop := clock(h.opts.KeepAlive, true)
	defer stop()
	for {
		select {
		case m := <-ch:
			kind, rest, _ := strings.Cut(string(m), "\n")
			if kind == "z" {
				return
			}
			id, data, _ := strings.Cut(rest, "\n")
			if _, err := w.Write(appendEvent(nil, id, []byte(data))); err != nil || rc.Flush() != nil {
				return
			}
		case <-tick:
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil || rc.Flush() != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-ss.done:
			return
		case <-h.draining:
			return
		}
	}
}

// relayTo serves a resumption another server asked for, if this server
// holds the stream: it relays the stream's events after seq over the Bus
// until the response, then forgets the stream.
func (s *Server) relayTo(msg string) {
	f := strings.SplitN(msg, "\n", 3)
	if len(f) != 3 {
		return
	}
	sid, relay := f[0], f[2]
	inst, stream, seq, ok := s.parseSharedEventID(sid, f[1])
	if !ok || inst != s.instance {
		return // another server's, or forged (its holder would check it)
	}
	s.mu.Lock()
	c := s.shared[sid]
	s.mu.Unlock()
	var st *sseStream
	if c != nil && c.httpSession != nil && stream > 0 {
		st = c.httpSession.stream(stream)
	}
	if st == nil {
		s.toBus(busRelayed, relay+"\nn") // not here any more
		return
	}
	s.toBus(busRelayed, relay+"\na")
	go func() {
		cursor := seq
		for {
			st.mu.Lock()
			for _, ev := range st.events {
				if ev.seq > cursor {
					s.toBus(busRelayed, relay+"\ne\n"+s.sharedEventID(sid, stream, ev.seq)+"\n"+string(ev.data))
					cursor = ev.seq
				}
			}
			end := st.done && cursor >= st.nextSeq-1
			ch := st.changed
			st.mu.Unlock()
			if end {
				s.toBus(busRelayed, relay+"\nz")
				c.httpSession.dropStream(st)
				return
			}
			select {
			case <-ch:
			case <-st.sess.done:
				s.toBus(busRelayed, relay+"\nz")
				return
			}
		}
	}()
}

// relayed hands a relayed message to the resumption waiting for it.
func (s *Server) relayed(msg string) {
	relay, rest, _ := strings.Cut(msg, "\n")
	s.mu.Lock()
	ch := s.relays[relay]
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case ch <- []byte(rest):
	default:
		s.log.Warn("relayed SSE event dropped: the resuming client is too slow", "relay", relay)
	}
}
