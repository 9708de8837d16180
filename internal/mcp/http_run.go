package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/httpguard"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// NewHTTPServer returns an http.Server for h with the limits of opts
// suited to MCP: ReadHeaderTimeout (slow headers are cut off),
// IdleTimeout and MaxHeaderBytes (larger headers get 431). It sets no
// ReadTimeout or WriteTimeout, which would cut long-lived SSE streams: the
// handler bounds body reads and each write itself. opts may be nil.
func NewHTTPServer(h http.Handler, opts *HTTPOptions) *http.Server {
	o := deref(opts).serverDefaults()
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: o.ReadHeaderTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    o.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(o.Logger.Handler(), slog.LevelWarn),
	}
}

// serverDefaults fills the fields NewHTTPServer uses (withDefaults the
// others).
func (o HTTPOptions) serverDefaults() HTTPOptions {
	if o.ReadHeaderTimeout <= 0 {
		o.ReadHeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 64 << 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// RunHTTP serves the Streamable HTTP handler (see HTTPHandler) on ln,
// accepting at most opts.MaxConns connections at once, until ctx ends.
// It refuses requests that carry both Content-Length and
// Transfer-Encoding (400, and the connection is closed: RFC 9112 §6.1),
// which net/http alone would serve.
// Then it shuts down gracefully: it stops accepting connections, answers
// new requests 503, ends GET and listen streams, and lets the requests in
// flight finish and be answered for up to opts.ShutdownGrace; it then
// cancels what still runs (stateless requests are answered 503, legacy
// sessions end), and returns nil (or the error that stopped serving).
func (s *Server) RunHTTP(ctx context.Context, ln net.Listener, opts *HTTPOptions) error {
	h := s.newHTTPHandler(opts)
	hs := NewHTTPServer(httpguard.Handler(h.outer(), http.HandlerFunc(refuseFraming)), &h.opts)
	hs.ConnContext = httpguard.ConnContext
	if h.opts.MaxConns > 0 {
		ln = newLimitListener(ln, h.opts.MaxConns, h.log)
	}
	ln = httpguard.Listener(ln)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		h.close()
		return fmt.Errorf("mcp: http: %w", err)
	case <-ctx.Done():
	}
	h.beginDrain()
	gctx, cancel := context.WithTimeout(context.Background(), h.opts.ShutdownGrace)
	err := hs.Shutdown(gctx) // closes the listener, waits for the requests in flight
	cancel()
	h.close() // ends sessions: what still runs is cancelled
	if err != nil {
		h.log.Warn("shutdown grace period over; cancelling the requests still running", "grace", h.opts.ShutdownGrace)
		fctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if hs.Shutdown(fctx) != nil { // cancelled requests get their answers out
			_ = hs.Close()
		}
		cancel()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("mcp: http: %w", serr)
	}
	return nil
}

// refuseFraming answers a request httpguard refused, one that carried both
// Content-Length and Transfer-Encoding.
func refuseFraming(w http.ResponseWriter, _ *http.Request) {
	writeError(w, http.StatusBadRequest, jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "invalid request: both Content-Length and Transfer-Encoding (RFC 9112 §6.1)"})
}

// limitListener accepts at most max connections at once. A connection
// beyond that is answered 503 with Retry-After and closed (by at most
// maxRefusing goroutines at a time; beyond those it is just closed), so
// thousands of idle connections cost neither goroutines nor memory.
type limitListener struct {
	net.Listener
	sem      chan struct{}
	refusing chan struct{}
	log      *slog.Logger
}

const maxRefusing = 64

func newLimitListener(ln net.Listener, max int, log *slog.Logger) *limitListener {
	return &limitListener{Listener: ln, sem: make(chan struct{}, max), refusing: make(chan struct{}, maxRefusing), log: log}
}

// Accept implements net.Listener.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.sem <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.sem }}, nil
		default:
		}
		select {
		case l.refusing <- struct{}{}:
			go func() {
				defer func() { <-l.refusing }()
				refuseConn(c)
			}()
		default:
			_ = c.Close()
		}
	}
}

// refuseBody is what a refused connection receives.
var refuseBody = `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Server busy: too many connections; retry later","data":{"busy":true,"retryAfterMs":1000}}}`

var refuseResponse = []byte(fmt.Sprintf("HTTP/1.1 503 Service Unavailable\r\nRetry-After: %d\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
	retryAfterSeconds, len(refuseBody), refuseBody))

// refuseConn answers 503 on a connection over the limit and closes it,
// reading a little of the request first so the client sees the answer
// rather than a reset.
func refuseConn(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	_, _ = c.Read(buf) // the request line and headers, usually
	if _, err := c.Write(refuseResponse); err != nil {
		return
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	for range 16 {
		if _, err := c.Read(buf); err != nil {
			return
		}
	}
}

// limitConn gives its place back when closed.
type limitConn struct {
	net.Conn
	release func()
	once    sync.Once
}

// Close implements net.Conn; the place is released once, before the
// connection closes, so that a client that sees it closed and connects
// again finds the place free.
func (c *limitConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
