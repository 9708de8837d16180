package mcp

import (
	"context"
	"net/http"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Admission is the one place where the rules for what a client sends are
// kept: which era a message belongs to, the order of the 2026-07-28
// checks, the legacy session and version-header rules, the batch rules of
// 2025-03-26 and the limiter. Every transport (stdio, Streamable HTTP,
// HTTP+SSE) frames its messages, hands each one to admitMessage (or a
// batch to admitBatch) and then only writes what it is told, with its own
// statuses and streams. What admission tells is transport-neutral: a
// route, or a refusal with its error and its reason; Streamable HTTP maps
// the reason to a status (refusalReason.httpStatus, http.go), stdio and
// HTTP+SSE send the error alone.

// route is what admission decided for one message.
type route int

const (
	routeRefused    route = iota // answered with the refusal: nothing runs
	routeNotice                  // a notification or response, handled by in.c (none: accepted and dropped)
	routePong                    // a ping outside a session: answered {}
	routeInitialize              // initialize: the transport initializes (or opens) its session
	routeModern                  // a 2026-07-28 request: every check passed, it runs statelessly
	routeLegacy                  // a request of the legacy session in.c
)

// inbound is what admission knows of where a message came in.
type inbound struct {
	// c is the legacy session the message belongs to: the connection of
	// stdio, the session HTTP names. nil when there is none.
	c *conn
	// unknownSession: HTTP named a session that does not exist (or is not
	// the caller's).
	unknownSession bool
	// version is the MCP-Protocol-Version header; "" when absent, and on
	// transports without headers.
	version string
	// headers checks the 2026-07-28 HTTP headers of the request against
	// its body; zero on transports without them (stdio, HTTP+SSE). A
	// concrete type, not a func value: a call through a func value would
	// make every transport's message escape to the heap.
	headers headerCheck
	// draining: the transport takes no new requests.
	draining bool
	// header is the HTTP request's header (for the Observer); nil on
	// stdio.
	header http.Header
}

// refusal is admission's answer to a message it will not run: the error
// to answer, why, and when the client may retry.
type refusal struct {
	err        *jsonrpc.Error
	reason     refusalReason
	retryAfter int // seconds the client should wait before retrying; 0: none said
}

// refusalReason is why a message was refused, in terms of no transport.
type refusalReason uint8

const (
	answered             refusalReason = iota // not refused: the response is the request's own
	refusedInvalid                            // malformed, or against a rule of the protocol
	refusedNoSession                          // names a session that does not exist (or is not the caller's)
	refusedUnknownMethod                      // a 2026-07-28 request for a method the server has not
	refusedTooLarge                           // longer than the server reads
	refusedMediaType                          // in a form the transport does not read
	refusedUnavailable                        // the server is shutting down, or at capacity
	refusedCallerLimit                        // the caller is over its share or its rate
)

// Refusals of admission.
var (
	errNoSession = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "invalid request: no session: send initialize first (over HTTP, then its Mcp-Session-Id), or per-request _meta for protocol version 2026-07-28"}
	errSessionNotFound = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "session not found"}
	errDuplicateID     = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a request with this id is already running"}
	errBatchSession    = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: batches are only accepted in a 2025-03-26 session"}
	errBatchInitialize = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: initialize must not be part of a batch"}
	errBatchModern     = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: 2026-07-28 requests cannot be batched"}
	errBatchJSON       = &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: invalid JSON"}
)

func badRequest(e *jsonrpc.Error) *refusal { return &refusal{err: e, reason: refusedInvalid} }

func shuttingDown() *refusal {
	return &refusal{err: errShuttingDown, reason: refusedUnavailable, retryAfter: retryAfterSeconds}
}

// isModernRequest is era detection: request m is served statelessly
// (2026-07-28) when it carries 2026-07-28 _meta or its method exists only
// in 2026-07-28, whatever session it arrives in.
func isModernRequest(m *jsonrpc.Message, mi *metaInfo) bool {
	return mi.modern || isModernOnlyMethod(m.Method)
}

// admitMessage parses one message (not a batch) and decides its route. m
// and mi are filled in as far as the message could be read; m aliases
// body. A refusal carries the error to answer, with the id of m; the
// Observer is told of a refused request and of a message refused unparsed
// (timed from its refusal: the clock is not read for the others, whose
// calls are timed from their start).
func (s *Server) admitMessage(body []byte, in *inbound, m *jsonrpc.Message, mi *metaInfo) (route, *refusal) {
	var perr *jsonrpc.Error
	*m, perr = jsonrpc.Parse(body)
	*mi = metaInfo{}
	if perr != nil {
		rf := badRequest(perr)
		if s.opts.Observer != nil {
			s.observeRefused(time.Now(), m, mi, in, rf.reason, rf.err)
		}
		return routeRefused, rf
	}
	rt, rf := s.admitOne(in, m, mi)
	if s.opts.Observer != nil && rt == routeRefused && m.IsRequest() {
		s.observeRefused(time.Now(), m, mi, in, rf.reason, rf.err)
	}
	return rt, rf
}

// refuseUnread is admission's refusal rf of a message it could not read
// (over HTTP, a body of the wrong Content-Type, too large or cut short,
// or POSTed to an HTTP+SSE session that does not exist; on stdio, a line
// too long), which arrived at start and came with
// header (nil on stdio): the Observer is told of it as the request
// HeaderRequest describes.
func (s *Server) refuseUnread(start time.Time, header http.Header, rf *refusal) *refusal {
	if s.opts.Observer != nil {
		r := &Request{}
		if header != nil {
			r = HeaderRequest(header)
		}
		s.observeAnswered(start, r, jsonrpc.ID{}, header, rf.reason, rf.err)
	}
	return rf
}

func (s *Server) admitOne(in *inbound, m *jsonrpc.Message, mi *metaInfo) (route, *refusal) {
	if !m.IsRequest() {
		switch {
		case in.unknownSession:
			return routeRefused, &refusal{err: errSessionNotFound, reason: refusedNoSession}
		case in.c != nil:
			if r := checkVersionHeader(in.version); r != nil {
				return routeRefused, r
			}
		}
		return routeNotice, nil
	}
	if in.draining {
		return routeRefused, shuttingDown()
	}
	scanMeta(m.Params, mi)
	if isModernRequest(m, mi) {
		return s.admitModern(m, mi, in)
	}
	if in.unknownSession {
		return routeRefused, &refusal{err: errSessionNotFound, reason: refusedNoSession}
	}
	initialized := false
	if in.c != nil {
		initialized, _, _, _ = in.c.snapshot()
	}
	switch {
	case initialized || m.Method == methodInitialize:
		if r := checkVersionHeader(in.version); r != nil {
			return routeRefused, r
		}
		if initialized {
			return routeLegacy, nil // initialize again: the session answers it is initialized
		}
		return routeInitialize, nil
	case in.version != "" && !isLegacyVersion(in.version):
		// The header names 2026-07-28 (or an unknown version): the
		// stateless checks say what is missing.
		return s.admitModern(m, mi, in)
	case m.Method == methodPing:
		return routePong, nil
	}
	return routeRefused, badRequest(errNoSession)
}

// admitModern runs the checks of a 2026-07-28 request in the order the
// protocol fixes: _meta (-32602), headers (-32020), version (-32022), then
// the method (-32601, HTTP 404).
func (s *Server) admitModern(m *jsonrpc.Message, mi *metaInfo, in *inbound) (route, *refusal) {
	e := checkModernMeta(mi)
	if e == nil && in.headers.h != nil {
		e = in.headers.h.checkHeaders(in.headers.r, m, mi)
	}
	if e == nil {
		e = checkModernVersion(mi)
	}
	if e == nil {
		e = checkModernMethod(m.Method)
	}
	if e != nil {
		reason := refusedInvalid
		if e.Code == jsonrpc.CodeMethodNotFound {
			reason = refusedUnknownMethod
		}
		return routeRefused, &refusal{err: e, reason: reason}
	}
	return routeModern, nil
}

// checkVersionHeader refuses an MCP-Protocol-Version header naming a
// version the engine does not speak.
func checkVersionHeader(v string) *refusal {
	if v == "" || isSupportedVersion(v) {
		return nil
	}
	return badRequest(&jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "unsupported MCP-Protocol-Version " + v})
}

// settle serves the routes that run nothing on a transport with one
// session and one stream (stdio, HTTP+SSE): it delivers a notice to c and
// appends to dst the response due (none for a notice). It reports false
// for the routes that start a call.
func settle(rt route, rf *refusal, m *jsonrpc.Message, in *inbound, dst []byte) ([]byte, bool) {
	c := in.c
	switch rt {
	case routeRefused:
		return jsonrpc.AppendError(dst, m.ID, rf.err), true
	case routeNotice:
		c.deliver(m)
		return dst, true
	case routePong:
		return jsonrpc.AppendResult(dst, m.ID, []byte("{}")), true
	case routeInitialize:
		res, e := c.initialize(m, in.header)
		if e != nil {
			return jsonrpc.AppendError(dst, m.ID, e), true
		}
		return jsonrpc.AppendResult(dst, m.ID, res), true
	}
	return dst, false
}

// routeCall prepares the call of request m on route rt (routeModern or
// routeLegacy) in session c, writing to out.
func (s *Server) routeCall(rt route, c *conn, m *jsonrpc.Message, mi *metaInfo, out sink) *call {
	if rt == routeModern {
		return s.newModernCall(context.Background(), m, mi, out)
	}
	return c.newLegacyCall(m, mi, out)
}

// startCall registers cl with its session c (nil: none) for cancellation
// and takes its limiter place. On a refusal cl is cancelled and forgotten,
// and the Observer told (the refusal is decided at once, without
// waiting: its span starts when it is).
func (s *Server) startCall(cl *call, c *conn) *refusal {
	rf := s.startOne(cl, c)
	if rf != nil && s.opts.Observer != nil {
		s.observeAnswered(time.Now(), &cl.req, cl.id, cl.header, rf.reason, rf.err)
	}
	return rf
}

func (s *Server) startOne(cl *call, c *conn) *refusal {
	if c != nil && !c.track(cl) {
		cl.cancel()
		return badRequest(errDuplicateID)
	}
	if rf := s.admitCall(cl); rf != nil {
		if c != nil {
			c.untrack(cl)
		}
		cl.cancel()
		return rf
	}
	return nil
}

// admitBatch admits a JSON-RPC batch arriving in session in.c (nil: none).
// Batches exist only in 2025-03-26 sessions; inside one, initialize and
// 2026-07-28 requests are refused one by one (-32600), notifications and
// responses go to the session, and newCall prepares each other request,
// which is then started. It returns the started calls (they alias body)
// and the responses already due, or a refusal of the whole batch. The
// Observer is told of each request refused, and of a batch refused
// whole (as a request without a method).
func (s *Server) admitBatch(body []byte, in *inbound, newCall func(*jsonrpc.Message, *metaInfo) *call) ([]*call, [][]byte, *refusal) {
	if s.opts.Observer == nil {
		return s.admitBatchOf(body, in, newCall)
	}
	start := time.Now()
	calls, immediate, rf := s.admitBatchOf(body, in, newCall)
	if rf != nil {
		s.observeAnswered(start, &Request{}, jsonrpc.ID{}, in.header, rf.reason, rf.err)
	}
	return calls, immediate, rf
}

func (s *Server) admitBatchOf(body []byte, in *inbound, newCall func(*jsonrpc.Message, *metaInfo) *call) ([]*call, [][]byte, *refusal) {
	c, draining := in.c, in.draining
	if !jsonscan.Valid(body) {
		return nil, nil, badRequest(errBatchJSON)
	}
	if draining {
		return nil, nil, shuttingDown()
	}
	if c == nil {
		return nil, nil, badRequest(errBatchSession)
	}
	if ok, v, _, _ := c.snapshot(); !ok || v != version20250326 {
		return nil, nil, badRequest(errBatchSession)
	}
	elems, perr := jsonrpc.ParseBatch(body)
	if perr == nil {
		perr = s.batchTooLong(len(elems))
	}
	if perr != nil {
		return nil, nil, badRequest(perr)
	}
	var calls []*call
	var immediate [][]byte
	var start time.Time
	if s.opts.Observer != nil {
		start = time.Now()
	}
	for _, e := range elems {
		m, perr := jsonrpc.Parse(e)
		if perr == nil && m.Method == methodInitialize && m.IsRequest() {
			perr = errBatchInitialize
		}
		var mi metaInfo
		if perr == nil && m.IsRequest() {
			scanMeta(m.Params, &mi)
			if isModernRequest(&m, &mi) {
				perr = errBatchModern
			}
		}
		switch {
		case perr != nil:
			immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, perr))
			if s.opts.Observer != nil && m.IsRequest() {
				s.observeRefused(start, &m, &mi, in, answered, perr)
			}
		case !m.IsRequest():
			c.deliver(&m)
		default:
			cl := newCall(&m, &mi)
			if rf := s.startCall(cl, c); rf != nil {
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, rf.err))
				continue
			}
			calls = append(calls, cl)
		}
	}
	return calls, immediate, nil
}

// joinBatch makes one JSON array of the responses of a batch.
func joinBatch(msgs [][]byte) []byte {
	n := 2
	for _, m := range msgs {
		n += len(m) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, ']')
}
