package mcp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// HTTPOptions configures the Streamable HTTP handler. The zero value of
// every field selects the documented default; nil means all defaults.
type HTTPOptions struct {
	// Path is the MCP endpoint; requests for other paths get 404. Default
	// "/mcp".
	Path string
	// SSEPath and MessagesPath are the endpoints of the HTTP+SSE
	// transport of 2024-11-05, served beside Path with the same checks,
	// access control and limits: GET SSEPath opens a session's event
	// stream, whose "endpoint" event names MessagesPath?sessionId=… for
	// the client's POSTs. Defaults "/sse" and "/messages". DisableSSE
	// turns that transport off (its paths get 404).
	SSEPath      string
	MessagesPath string
	DisableSSE   bool

	// AllowedOrigins lists the browser origins ("https://app.example")
	// accepted besides loopback origins (http or https on localhost,
	// 127.0.0.1 or [::1], any port), which are always accepted; "*"
	// accepts every origin. Requests without an Origin header are not
	// affected. A refused Origin gets 403 (DNS-rebinding protection).
	// The origins listed here (not the loopback ones) also get CORS:
	// preflights are answered before Middleware, and responses carry
	// Access-Control-Allow-Origin and expose Mcp-Session-Id,
	// WWW-Authenticate and the other headers a browser client reads.
	AllowedOrigins []string
	// AllowedHosts lists the Host header values accepted ("mcp.example"
	// or "mcp.example:8443") besides loopback hosts; "*" accepts every
	// host. When empty, a request that arrived on a loopback address
	// (the server listens on loopback, or a local proxy connects through
	// it) must name a loopback host, and other requests may name any host.
	AllowedHosts []string
	// TrustedProxies are the reverse proxies in front of the server: a
	// request whose TCP peer is in one of them comes from the client that
	// X-Forwarded-For names, read from its end back past the trusted
	// proxies (RequestInfo.Remote, and the principal of an anonymous
	// caller). Empty: the TCP peer, whatever the request's headers say.
	TrustedProxies []netip.Prefix

	// MaxBodyBytes bounds a POST body; larger bodies get 413 without
	// being read. Default 4 MiB.
	MaxBodyBytes int64
	// MaxInflightBytes bounds the bytes of the POST bodies being served
	// at once, server-wide (a body of unknown length counts as
	// MaxBodyBytes), taken before a body is read and given back when its
	// request is answered: a request past it gets 503 with Retry-After
	// without being read, so that clients sending many large bodies at
	// once cannot make the server hold them all (a 4 MiB call costs
	// several times its body while it runs). One request is always
	// admitted when none is in flight. Default 64 MiB.
	MaxInflightBytes int64
	// SessionIdleTimeout ends a legacy session after that long without a
	// request or an open stream. Default 30 minutes.
	SessionIdleTimeout time.Duration
	// MaxSessions bounds the legacy sessions alive at once; initialize
	// beyond it gets 503. Default 10000.
	MaxSessions int
	// KeepAlive is the interval of SSE comment lines on idle long-lived
	// streams (GET streams and subscriptions/listen). Default 25 seconds;
	// negative disables them.
	KeepAlive time.Duration
	// SSERetry is the reconnection delay announced in the priming event of
	// legacy SSE streams. Default 1 second.
	SSERetry time.Duration
	// ReplayEvents is how many events each legacy SSE stream keeps for
	// Last-Event-ID replay, and ReplayBytes how many bytes of them: the
	// oldest events go first (the newest is always kept). They bound too
	// what a session queues for a client that does not read its stream:
	// session notifications (list_changed, resources/updated) coalesce
	// there, one of a kind (or of a URI) waiting at most. Defaults 256
	// and 1 MiB.
	ReplayEvents int
	ReplayBytes  int

	// ReadTimeout bounds the reading of a POST body: a client sending it
	// slower is cut off (400). Default 30 seconds.
	ReadTimeout time.Duration
	// WriteTimeout bounds each write of a response or SSE event: a client
	// that stops reading loses its stream (and connection) after that
	// long, and the server goes on. Default 30 seconds.
	WriteTimeout time.Duration

	// ReadHeaderTimeout (default 10 seconds), IdleTimeout (default 2
	// minutes), MaxHeaderBytes (default 64 KiB; larger headers get 431)
	// and MaxConns (default 1024 open connections; more are answered 503
	// with Retry-After and closed; negative: no limit) configure the
	// http.Server and listener of RunHTTP.
	ReadHeaderTimeout time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	MaxConns          int
	// ShutdownGrace is how long RunHTTP lets requests in flight finish
	// once its context ends, before cancelling them. Default 10 seconds.
	ShutdownGrace time.Duration

	// Middleware, when set, wraps the handler (it sees every path): access
	// control that answers 401/403 itself and passes accepted requests on
	// with ContextWithIdentity.
	Middleware func(http.Handler) http.Handler

	// Logger receives transport diagnostics. Nil uses the Server's.
	Logger *slog.Logger
}

func (o *HTTPOptions) withDefaults(s *Server) HTTPOptions {
	v := deref(o)
	if v.Path == "" {
		v.Path = "/mcp"
	}
	if v.SSEPath == "" {
		v.SSEPath = "/sse"
	}
	if v.MessagesPath == "" {
		v.MessagesPath = "/messages"
	}
	if v.MaxBodyBytes <= 0 {
		v.MaxBodyBytes = 4 << 20
	}
	if v.MaxInflightBytes <= 0 {
		v.MaxInflightBytes = 64 << 20
	}
	if v.SessionIdleTimeout <= 0 {
		v.SessionIdleTimeout = 30 * time.Minute
	}
	if v.MaxSessions <= 0 {
		v.MaxSessions = 10000
	}
	switch {
	case v.KeepAlive == 0:
		v.KeepAlive = 25 * time.Second
	case v.KeepAlive < 0:
		v.KeepAlive = 0
	}
	if v.SSERetry <= 0 {
		v.SSERetry = time.Second
	}
	if v.ReplayEvents <= 0 {
		v.ReplayEvents = 256
	}
	if v.ReplayBytes <= 0 {
		v.ReplayBytes = 1 << 20
	}
	if v.ReadTimeout <= 0 {
		v.ReadTimeout = 30 * time.Second
	}
	if v.WriteTimeout <= 0 {
		v.WriteTimeout = 30 * time.Second
	}
	if v.MaxConns == 0 {
		v.MaxConns = 1024
	}
	if v.ShutdownGrace <= 0 {
		v.ShutdownGrace = 10 * time.Second
	}
	if v.Logger == nil {
		v.Logger = s.log
	}
	return v.serverDefaults()
}

// httpHandler serves the Streamable HTTP transport of one Server.
type httpHandler struct {
	s    *Server
	opts HTTPOptions
	log  *slog.Logger
	done chan struct{} // closed by close

	// ctx ends with close: stateless requests in flight are cancelled.
	ctx    context.Context
	cancel context.CancelFunc

	// inflight is the bytes of the POST bodies being served
	// (MaxInflightBytes).
	inflight atomic.Int64

	mu       sync.Mutex
	sessions map[string]*httpSession
	closed   bool
	draining chan struct{} // closed by beginDrain
	drained  bool
}

// HTTPHandler returns the Streamable HTTP handler of the server: POST for
// every client message (JSON or SSE replies), GET for the standalone SSE
// stream of a legacy session (with Last-Event-ID resumption), DELETE to end
// a legacy session. Legacy clients open sessions with initialize
// (Mcp-Session-Id); 2026-07-28 clients send self-contained requests, with
// the headers of that version validated against the body. opts may be nil.
// Beside it, unless HTTPOptions.DisableSSE, the handler serves the HTTP+SSE
// transport of 2024-11-05 (HTTPOptions.SSEPath and MessagesPath).
//
// The handler is closed with the Server (Close) or by RunHTTP. It stops
// taking requests (503 with Retry-After) once Shutdown begins.
func (s *Server) HTTPHandler(opts *HTTPOptions) http.Handler {
	return s.newHTTPHandler(opts).outer()
}

func (s *Server) newHTTPHandler(opts *HTTPOptions) *httpHandler {
	o := opts.withDefaults(s)
	h := &httpHandler{s: s, opts: o, log: o.Logger, done: make(chan struct{}), sessions: map[string]*httpSession{}, draining: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	s.addCloser(h.close)
	go func() {
		select {
		case <-s.drain:
			h.beginDrain()
		case <-h.done:
		}
	}()
	return h
}

// outer is the handler with its middleware, inside CORS.
func (h *httpHandler) outer() http.Handler {
	if h.opts.Middleware != nil {
		return h.cors(h.opts.Middleware(h))
	}
	return h.cors(h)
}

// beginDrain makes the handler refuse new requests (503) and end its
// long-lived streams, letting requests in flight finish.
func (h *httpHandler) beginDrain() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.drained {
		h.drained = true
		close(h.draining)
	}
}

func (h *httpHandler) isDraining() bool { return isClosed(h.draining) }

// refuse answers a message refused before dispatch: the status of its
// reason, with Retry-After when the refusal names one (503, 429), and a
// JSON-RPC error.
func refuse(w http.ResponseWriter, id jsonrpc.ID, r *refusal) {
	if r.retryAfter > 0 {
		w.Header()["Retry-After"] = []string{strconv.Itoa(r.retryAfter)}
	}
	writeError(w, r.reason.httpStatus(), id, r.err)
}

// httpStatus is the Streamable HTTP status of a refusal for reason
// (0 for answered: the response is the request's own).
func (reason refusalReason) httpStatus() int {
	switch reason {
	case refusedInvalid:
		return http.StatusBadRequest
	case refusedNoSession, refusedUnknownMethod:
		return http.StatusNotFound
	case refusedTooLarge:
		return http.StatusRequestEntityTooLarge
	case refusedMediaType:
		return http.StatusUnsupportedMediaType
	case refusedUnavailable:
		return http.StatusServiceUnavailable
	case refusedCallerLimit:
		return http.StatusTooManyRequests
	}
	return 0
}

// refuseBusy answers a request the server cannot take now: 503 with
// Retry-After and a JSON-RPC error.
func refuseBusy(w http.ResponseWriter, id jsonrpc.ID, e *jsonrpc.Error) {
	w.Header()["Retry-After"] = retryAfterValue
	writeError(w, http.StatusServiceUnavailable, id, e)
}

// close ends every session and stream of the handler.
func (h *httpHandler) close() {
	var sessions []*httpSession
	closeOnce(&h.mu, &h.closed, func() {
		close(h.done)
		h.cancel()
		sessions = values(h.sessions)
	})
	for _, ss := range sessions {
		ss.close()
	}
}

// ServeHTTP implements http.Handler.
func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	dw := &deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), d: h.opts.WriteTimeout}
	dw.extend()
	defer dw.extend() // what net/http writes after the handler gets the full time
	w = dw
	var serve func(http.ResponseWriter, *http.Request)
	switch {
	case r.URL.Path == h.opts.Path:
	case h.opts.DisableSSE:
	case r.URL.Path == h.opts.SSEPath:
		serve = h.serveSSEStream
	case r.URL.Path == h.opts.MessagesPath:
		serve = h.serveSSEMessage
	}
	if serve == nil && r.URL.Path != h.opts.Path {
		writeError(w, http.StatusNotFound, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "not found: the MCP endpoint is " + h.opts.Path})
		return
	}
	if why := h.checkOrigin(r); why != "" {
		h.log.Warn("request refused", "reason", why, "origin", r.Header.Get("Origin"), "host", r.Host)
		writeError(w, http.StatusForbidden, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "forbidden: " + why})
		return
	}
	if serve != nil {
		serve(w, r)
		return
	}
	switch r.Method {
	case http.MethodPost:
		h.servePost(w, r)
	case http.MethodGet:
		if h.isDraining() {
			refuseBusy(w, jsonrpc.ID{}, errShuttingDown)
			return
		}
		h.serveGet(w, r)
	case http.MethodDelete:
		h.serveDelete(w, r)
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "method not allowed"})
	}
}

// writeError writes a JSON-RPC error response with an HTTP status.
func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	b := getBuf()
	*b = jsonrpc.AppendError((*b)[:0], id, e)
	writeJSON(w, status, *b)
	putBuf(b)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	hd := w.Header()
	hd["Content-Type"] = jsonContentType
	hd["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

var (
	jsonContentType = []string{"application/json"}
	sseContentType  = []string{"text/event-stream"}
	noCache         = []string{"no-cache"}
	noBuffering     = []string{"no"}
)

// statusFor is the HTTP status of a JSON response carrying error code
// (0 for a result) on the 2026-07-28 path.
func statusFor(code int) int {
	switch code {
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingClientCapability, jsonrpc.CodeUnsupportedVersion,
		jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest:
		return http.StatusBadRequest
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeForbidden:
		return http.StatusForbidden
	}
	return http.StatusOK
}

var errBodyTooLarge = errors.New("mcp: request body too large")

// takeBytes counts n more bytes of bodies in flight, unless that would
// pass MaxInflightBytes while others are in flight; it returns the
// function that gives them back, or nil.
func (h *httpHandler) takeBytes(n int64) func() {
	for {
		cur := h.inflight.Load()
		if cur > 0 && cur+n > h.opts.MaxInflightBytes {
			return nil
		}
		if h.inflight.CompareAndSwap(cur, cur+n) {
			return sync.OnceFunc(func() { h.inflight.Add(-n) })
		}
	}
}

// readBody reads the POST body into a pooled buffer, refusing bodies over
// the limit (413) without reading them.
func (h *httpHandler) readBody(w http.ResponseWriter, r *http.Request) (*[]byte, error) {
	max := h.opts.MaxBodyBytes
	if r.ContentLength > max {
		return nil, errBodyTooLarge
	}
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.opts.ReadTimeout))
	defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	buf := getBuf()
	b := (*buf)[:0]
	if r.ContentLength > 0 && int64(cap(b)) < r.ContentLength {
		b = make([]byte, 0, r.ContentLength)
	}
	body := io.LimitReader(r.Body, max+1)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := body.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			*buf = b
			putBuf(buf)
			return nil, errBodyTooLarge
		}
		if err == io.EOF {
			*buf = b
			return buf, nil
		}
		if err != nil {
			*buf = b
			putBuf(buf)
			return nil, err
		}
	}
}

// checkContentType refuses bodies that are declared as something other
// than JSON.
func checkContentType(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// deadlineWriter sets a write deadline before every write and flush of a
// response, so that a client that stops reading cannot hold a handler (and
// its stream) forever: the write fails after WriteTimeout and the
// connection is dropped.
type deadlineWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *deadlineWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *deadlineWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w *deadlineWriter) Write(b []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(b)
}

// FlushError flushes with a fresh deadline (http.ResponseController uses
// it).
func (w *deadlineWriter) FlushError() error {
	w.extend()
	return w.rc.Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
