package mcp

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// conn is a legacy session: one stdio connection, or one Streamable HTTP
// session (Mcp-Session-Id). It holds what initialize negotiated, the log
// level, resource subscriptions, the requests in flight (for
// notifications/cancelled) and the server-to-client requests waiting for
// an answer.
type conn struct {
	srv    *Server
	id     string
	ctx    context.Context // ends with the connection or session
	cancel context.CancelFunc
	out    sink // messages not tied to a request (list_changed, resources/updated)

	mu          sync.Mutex
	initialized bool // initialize answered
	closed      bool
	version     string
	clientInfo  json.RawMessage
	clientCaps  json.RawMessage
	subs        map[string]struct{}
	subsCharged int64 // bytes of subs charged to the server's budget (subs.go)
	inflight    map[jsonrpc.ID]*call
	pending     map[jsonrpc.ID]chan clientReply

	// httpSession is the HTTP session of this conn (nil on stdio), and
	// shared is set when that session is shared (http_shared.go).
	httpSession *httpSession
	shared      *sharedConn

	logLevel atomic.Int32 // logging/setLevel; -1 until set
	nextOut  atomic.Int64 // ids of server-to-client requests
	dropped  atomic.Int64 // notifications dropped (noticeSink full)
}

func (s *Server) newConn(parent context.Context, out sink) *conn {
	c := &conn{
		srv:      s,
		id:       s.newConnID(),
		out:      out,
		inflight: map[jsonrpc.ID]*call{},
		pending:  map[jsonrpc.ID]chan clientReply{},
	}
	c.ctx, c.cancel = context.WithCancel(parent)
	context.AfterFunc(c.ctx, c.cancelInflight)
	c.logLevel.Store(-1)
	return c
}

// cancelInflight cancels every request of the connection once its
// context ends. Requests do not derive their contexts from the
// connection's (that would put every request through one lock); this is
// how they learn it ended.
func (c *conn) cancelInflight() {
	c.mu.Lock()
	calls := values(c.inflight)
	c.mu.Unlock()
	for _, cl := range calls {
		cl.cancel()
	}
}

// newSessionID returns 128 random bits in URL-safe base64: visible ASCII
// only, as Mcp-Session-Id requires.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// snapshot returns what initialize negotiated.
func (c *conn) snapshot() (ok bool, version string, info, caps json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initialized, c.version, c.clientInfo, c.clientCaps
}

// initialize answers the initialize request m.
func (c *conn) initialize(m *jsonrpc.Message, header http.Header) ([]byte, *jsonrpc.Error) {
	if c.srv.opts.Observer == nil {
		return c.initializeOnce(m)
	}
	start := time.Now()
	res, e := c.initializeOnce(m)
	_, v, _, _ := c.snapshot()
	c.srv.observeAnswered(start, &Request{Method: methodInitialize, Params: m.Params, Client: mcpreq.Client{ProtocolVersion: v}, SessionID: c.id}, m.ID, header, answered, e)
	return res, e
}

func (c *conn) initializeOnce(m *jsonrpc.Message) ([]byte, *jsonrpc.Error) {
	params := m.Params
	if jsonscan.Kind(params) != 'o' {
		return nil, invalidParams("initialize: params must be an object with protocolVersion, capabilities and clientInfo")
	}
	if len(params) > maxInitializeBytes {
		return nil, initializeTooLarge(len(params))
	}
	v, ok := stringParam(params, "protocolVersion")
	if !ok {
		return nil, invalidParams("initialize: protocolVersion must be a string")
	}
	// The session keeps only what is used of the client's capabilities
	// and clientInfo, bounded (clientcaps.go).
	caps := json.RawMessage("{}")
	if cv, ok := jsonscan.Member(params, "capabilities"); ok {
		caps = keptCapabilities(cv)
	}
	var info json.RawMessage
	if iv, ok := jsonscan.Member(params, "clientInfo"); ok {
		info = keptClientInfo(iv)
	}
	c.mu.Lock()
	if c.initialized || c.closed {
		c.mu.Unlock()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: the session is already initialized"}
	}
	c.initialized = true
	c.version = negotiate(v)
	c.clientCaps, c.clientInfo = caps, info
	c.mu.Unlock()
	c.srv.register(c)

	s := c.srv
	res := make([]byte, 0, 256)
	res = append(res, `{"protocolVersion":`...)
	res = jsonscan.AppendString(res, c.version)
	res = append(res, `,"capabilities":`...)
	res = append(res, capabilities(s.p.Features(), c.version)...)
	res = append(res, `,"serverInfo":`...)
	res = append(res, s.serverInfo...)
	if s.opts.Instructions != "" {
		res = append(res, `,"instructions":`...)
		res = jsonscan.AppendString(res, s.opts.Instructions)
	}
	return append(res, '}'), nil
}

// newLegacyCall prepares the legacy request m; mi is its scanned _meta.
func (c *conn) newLegacyCall(m *jsonrpc.Message, mi *metaInfo, out sink) *call {
	_, version, info, caps := c.snapshot()
	cl := c.srv.newCall(context.Background(), c, m.ID, out)
	cl.req.Method = m.Method
	cl.req.Params = paramsOrEmpty(m.Params)
	cl.req.ProtocolVersion = version
	cl.req.ClientInfo = info
	cl.req.ClientCapabilities = caps
	cl.req.ProgressToken = mi.progressToken
	cl.req.setMeta(mi.meta)
	cl.req.SessionID = c.id
	return cl
}

func paramsOrEmpty(p json.RawMessage) json.RawMessage {
	if len(p) == 0 {
		return json.RawMessage("{}")
	}
	return p
}

// track registers a running request for cancellation; false when a request
// with the same id is already running. A request tracked after the
// connection ended starts cancelled.
func (c *conn) track(cl *call) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.inflight[cl.id]; dup {
		return false
	}
	if c.ctx.Err() != nil {
		cl.cancel()
	}
	c.inflight[cl.id] = cl
	return true
}

func (c *conn) untrack(cl *call) {
	c.mu.Lock()
	if c.inflight[cl.id] == cl {
		delete(c.inflight, cl.id)
	}
	c.mu.Unlock()
}

// deliver handles a client notification or response.
func (c *conn) deliver(m *jsonrpc.Message) {
	if m.IsResponse() {
		c.handleResponse(m)
	} else {
		c.handleNotification(m)
	}
}

// handleNotification handles a client notification.
func (c *conn) handleNotification(m *jsonrpc.Message) {
	switch m.Method {
	case notifCancelled:
		v, ok := jsonscan.Member(m.Params, "requestId")
		if !ok {
			return
		}
		var id jsonrpc.ID
		if json.Unmarshal(v, &id) != nil || id.IsZero() {
			return
		}
		c.mu.Lock()
		cl := c.inflight[id]
		if cl != nil {
			// The request will send nothing more: its id is free at once,
			// not only once its handler has returned.
			delete(c.inflight, id)
		}
		c.mu.Unlock()
		if cl != nil {
			cl.cancelByClient()
		}
	default:
		// notifications/initialized, roots/list_changed and unknown
		// notifications need nothing from the engine.
	}
}

// handleResponse delivers the client's answer to a server-to-client
// request. m aliases a read buffer, so what is kept is copied.
func (c *conn) handleResponse(m *jsonrpc.Message) {
	if m.ID.IsZero() {
		if m.Error != nil {
			c.srv.log.Debug("client reported an error", "code", m.Error.Code, "message", m.Error.Message)
		}
		return
	}
	c.mu.Lock()
	ch := c.pending[m.ID]
	delete(c.pending, m.ID)
	c.mu.Unlock()
	if ch == nil {
		if c.shared != nil {
			c.forwardReply(m) // the request may be waiting on another server
		}
		return
	}
	var rep clientReply
	if m.Error != nil {
		e := *m.Error
		e.Data = append(json.RawMessage(nil), e.Data...)
		rep.err = &e
	} else {
		rep.result = append(json.RawMessage(nil), m.Result...)
	}
	ch <- rep
}

func (c *conn) addPending(id jsonrpc.ID, ch chan clientReply) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.pending[id] = ch
	return true
}

func (c *conn) removePending(id jsonrpc.ID) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

// failPending answers every waiting server-to-client request with
// errClientGone.
func (c *conn) failPending() {
	c.mu.Lock()
	for id, ch := range c.pending {
		ch <- clientReply{goErr: errClientGone}
		delete(c.pending, id)
	}
	c.mu.Unlock()
}

// notify sends a session-level notification once initialize is done,
// without blocking: one with the same key still waiting to be written is
// not queued again, and past the session's bound it is dropped.
func (c *conn) notify(key string, msg []byte) {
	c.mu.Lock()
	ok := c.initialized && !c.closed
	c.mu.Unlock()
	if !ok {
		return
	}
	ns, queues := c.out.(noticeSink)
	if !queues {
		if err := c.out.send(msg); err != nil {
			c.srv.log.Debug("session notification not delivered", "session_id", c.id, "error", err)
		}
		return
	}
	if !ns.notice(key, msg) {
		// Log the first drop, then at each power of two.
		if n := c.dropped.Add(1); n&(n-1) == 0 {
			c.srv.log.Warn("session notifications dropped: the client does not read them", "session_id", c.id, "dropped", n)
		}
	}
}

// subscribe adds a resource subscription, within the bounds of
// Options.MaxSubscriptions and MaxURIBytes.
func (c *conn) subscribe(uri string) *jsonrpc.Error {
	if e := c.srv.checkURI("resources/subscribe", uri); e != nil {
		return e
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.subs[uri]; ok {
		return nil
	}
	if max := c.srv.opts.MaxSubscriptions; len(c.subs) >= max {
		return invalidParams("resources/subscribe: the session already has " + strconv.Itoa(max) + " subscriptions, the most it may have; unsubscribe first")
	}
	if c.closed {
		return nil // the session ended: nothing is kept, nothing sent
	}
	if !c.srv.chargeSubs(subCost(uri)) {
		return c.srv.subBudgetError()
	}
	c.subsCharged += subCost(uri)
	if c.subs == nil {
		c.subs = map[string]struct{}{}
	}
	c.subs[uri] = struct{}{}
	return nil
}

func (c *conn) unsubscribe(uri string) {
	c.mu.Lock()
	if _, ok := c.subs[uri]; ok {
		delete(c.subs, uri)
		c.srv.releaseSubs(subCost(uri))
		c.subsCharged -= subCost(uri)
	}
	c.mu.Unlock()
}

func (c *conn) subscribed(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for sub := range c.subs {
		if coversURI(sub, uri) {
			return true
		}
	}
	return false
}

// close ends the session: requests are cancelled, waiting client calls
// fail, and no more session notifications are sent.
func (c *conn) close() {
	if !closeOnce(&c.mu, &c.closed, c.releaseSubsLocked) {
		return
	}
	c.srv.unregister(c)
	c.failPending()
	c.cancel()
}
