package mcp

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// Server is the MCP protocol engine. It serves one Provider to any number
// of stdio connections and HTTP handlers at once, for every protocol
// version (legacy sessions and stateless 2026-07-28 requests side by
// side). Its methods are safe for concurrent use.
type Server struct {
	p    Provider
	opts Options
	log  *slog.Logger

	ctx    context.Context // done after Close
	cancel context.CancelFunc

	limit      *callLimiter
	principals *principals
	rates      RateStore     // Options.Rates, else the process's (toolrate.go)
	active     atomic.Int64  // requests being served (invoke)
	subBytes   atomic.Int64  // bytes of subscriptions kept (subs.go)
	drain      chan struct{} // closed by Shutdown: stop taking requests

	serverInfo []byte // Implementation object

	mu        sync.Mutex
	conns     map[*conn]struct{}     // initialized legacy sessions (stdio and HTTP)
	listeners map[*listener]struct{} // 2026-07-28 subscriptions/listen streams
	closers   []func()               // HTTP handlers to shut down on Close
	draining  bool

	tools atomic.Pointer[toolIndex] // x-mcp-header annotations and task support, see toolindex.go
	tasks taskHook                  // all the engine sees of tasks (tasks.go)

	unsubscribe func()                 // ends the Bus subscription; nil without a Bus
	shared      map[string]*conn       // shared legacy sessions held here, by id (guarded by mu)
	relays      map[string]chan []byte // resumptions waiting for relayed events (guarded by mu)
	instance    string                 // this server's id in shared event ids
}

// NewServer returns a Server for p. opts may be nil. It panics if p is nil.
func NewServer(p Provider, opts *Options) *Server {
	if p == nil {
		panic("mcp: NewServer with a nil Provider")
	}
	o := opts.withDefaults()
	s := &Server{
		p:         p,
		opts:      o,
		log:       o.Logger,
		conns:     map[*conn]struct{}{},
		listeners: map[*listener]struct{}{},
		limit:     newCallLimiter(o.MaxConcurrentCalls, o.MaxWaitingCalls, o.CallWaitTimeout),
		drain:     make(chan struct{}),
	}
	s.limit.perShare = int64(o.MaxCallsPerShare)
	s.principals = newPrincipals(o.PrincipalConcurrent, o.PrincipalRate, o.PrincipalBurst, o.MaxConcurrentCalls+o.MaxWaitingCalls)
	if s.rates = o.Rates; s.rates == nil {
		s.rates = newMemRates()
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.tasks = newTaskEngine(s)
	info := append([]byte(`{"name":`), jsonscan.AppendString(nil, o.Name)...)
	if o.Title != "" {
		info = append(info, `,"title":`...)
		info = jsonscan.AppendString(info, o.Title)
	}
	info = append(info, `,"version":`...)
	info = jsonscan.AppendString(info, o.Version)
	s.serverInfo = append(info, '}')
	if o.Bus != nil {
		s.unsubscribe = o.Bus.Subscribe(s.fromBus)
	}
	if o.Sessions != nil {
		s.instance = newInstanceID()
	}
	return s
}

// Bus messages: one byte for the kind, then the list kind or the URI.
const (
	busListChanged     = 'L'
	busResourceUpdated = 'R'
)

// fromBus notifies this server's clients of a change another server
// published.
func (s *Server) fromBus(msg []byte) {
	if len(msg) < 2 || s.ctx.Err() != nil {
		return
	}
	switch msg[0] {
	case busListChanged:
		s.fanListChanged(string(msg[1:]))
	case busResourceUpdated:
		s.fanResourceUpdated(string(msg[1:]))
	case busSessionChanged, busSessionEnded, busReply, busResume, busRelayed:
		if s.opts.Sessions != nil {
			s.sessionEvent(msg[0], msg[1:])
		}
	}
}

// toBus publishes a change to the other servers, if there is a Bus.
func (s *Server) toBus(kind byte, v string) {
	if s.opts.Bus == nil {
		return
	}
	msg := append([]byte{kind}, v...)
	if err := s.opts.Bus.Publish(msg); err != nil {
		s.log.Warn("notification not sent to the other replicas", "error", err)
	}
}

// Close ends every session, stream and subscription the server serves:
// ServeStdio calls return, HTTP sessions are terminated and listen streams
// receive their completion result. Close is safe to call more than once.
func (s *Server) Close() error {
	s.cancel()
	if s.unsubscribe != nil {
		s.unsubscribe()
	}
	s.tasks.close()
	s.mu.Lock()
	closers := s.closers
	s.closers = nil
	s.mu.Unlock()
	for _, f := range closers {
		f()
	}
	return nil
}

// Shutdown stops the server gracefully: every transport stops taking new
// requests (stdio stops reading; HTTP answers 503 with Retry-After), GET
// and listen streams end, and the requests in flight are let finish and
// answered until ctx ends. Then Close cancels whatever still runs.
// Shutdown returns ctx.Err() if requests were still running when ctx
// ended, else nil. ServeStdio calls return once their requests are
// answered.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if !s.draining {
		s.draining = true
		close(s.drain)
	}
	s.mu.Unlock()
	err := s.waitIdle(ctx)
	s.Close()
	return err
}

// isDraining reports whether Shutdown began.
func (s *Server) isDraining() bool { return isClosed(s.drain) }

// errShuttingDown answers requests that arrive during Shutdown.
var errShuttingDown = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "server is shutting down; retry on another instance or later"}

// waitIdle waits until no request is being served, or ctx ends.
func (s *Server) waitIdle(ctx context.Context) error {
	wait := time.Millisecond
	for s.active.Load() > 0 {
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, 50*time.Millisecond)
	}
	return nil
}

func (s *Server) addCloser(f func()) {
	s.mu.Lock()
	s.closers = append(s.closers, f)
	s.mu.Unlock()
}

// register adds an initialized legacy session to the notification fan-out.
func (s *Server) register(c *conn) {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
}

func (s *Server) unregister(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	if c.shared != nil {
		s.forgetShared(c)
	}
}

// NotifyListChanged tells clients that the list of kind ("tools",
// "resources" or "prompts") changed: every legacy session gets
// notifications/<kind>/list_changed, and every 2026-07-28 listen stream that
// asked for it gets the same notification tagged with its subscription id.
// Nothing is sent unless Features().ListChanged is set. With a Bus, the
// other servers notify their clients too.
func (s *Server) NotifyListChanged(kind string) {
	if s.fanListChanged(kind) {
		s.toBus(busListChanged, kind)
	}
}

// fanListChanged notifies this server's clients that the list of kind
// changed and reports whether kind is a list kind.
func (s *Server) fanListChanged(kind string) bool {
	var method string
	switch kind {
	case "tools":
		method = "notifications/tools/list_changed"
		s.tools.Store(nil)
	case "resources":
		method = "notifications/resources/list_changed"
	case "prompts":
		method = "notifications/prompts/list_changed"
	default:
		s.log.Warn("NotifyListChanged: unknown list kind", "kind", kind)
		return false
	}
	if !s.p.Features().ListChanged {
		return true
	}
	s.fan(method, method, "", func(*conn) bool { return true }, func(l *listener) bool { return l.wantsList(kind) })
	return true
}

// fan sends the notification method (with params.uri when uri is not "")
// to the legacy connections and the listen streams that want it, chosen
// under s.mu and sent outside it; key coalesces it in their queues.
func (s *Server) fan(key, method, uri string, connWants func(*conn) bool, listenerWants func(*listener) bool) {
	var params []byte
	if uri != "" {
		params = append([]byte(`{"uri":`), jsonscan.AppendString(nil, uri)...)
		params = append(params, '}')
	}
	legacy := jsonrpc.AppendNotification(nil, method, params)
	s.mu.Lock()
	var conns []*conn
	for c := range s.conns {
		if connWants(c) {
			conns = append(conns, c)
		}
	}
	var ls []*listener
	for l := range s.listeners {
		if listenerWants(l) {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.notify(key, legacy)
	}
	for _, l := range ls {
		l.deliver(key, taggedNotification(method, uri, l.id))
	}
}

// NotifyResourceUpdated tells the clients subscribed to uri (legacy
// resources/subscribe, or a listen stream's resourceSubscriptions) that it
// changed. A subscription to a URI also covers the URIs below it
// ("file:///dir/" covers "file:///dir/a.txt"). With a Bus, the other
// servers notify their subscribers too.
func (s *Server) NotifyResourceUpdated(uri string) {
	if s.fanResourceUpdated(uri) {
		s.toBus(busResourceUpdated, uri)
	}
}

// fanResourceUpdated notifies this server's subscribers of uri and
// reports whether the notification was valid to send.
func (s *Server) fanResourceUpdated(uri string) bool {
	if f := s.p.Features(); !f.Resources || !f.Subscribe {
		return false
	}
	if len(uri) > s.opts.MaxURIBytes {
		s.log.Warn("resources/updated dropped: URI too long", "bytes", len(uri), "max", s.opts.MaxURIBytes)
		return false
	}
	s.fan(notifUpdated+" "+uri, notifUpdated, uri, func(c *conn) bool { return c.subscribed(uri) }, func(l *listener) bool { return l.wantsResource(uri) })
	return true
}

// checkURI refuses a subscribed or read URI (resources/read, a
// completion's ref) longer than Options.MaxURIBytes.
func (s *Server) checkURI(method, uri string) *jsonrpc.Error {
	if len(uri) > s.opts.MaxURIBytes {
		return invalidParams(method + ": uri of " + strconv.Itoa(len(uri)) + " bytes; at most " + strconv.Itoa(s.opts.MaxURIBytes))
	}
	return nil
}

// coversURI reports whether a subscription to sub covers uri.
func coversURI(sub, uri string) bool {
	if sub == uri {
		return true
	}
	return strings.HasPrefix(uri, sub) && (strings.HasSuffix(sub, "/") || uri[len(sub)] == '/')
}

// capabilities returns the ServerCapabilities object for f, as version
// has it: 2025-11-25 sessions get the tasks capability of that version,
// 2026-07-28 the tasks extension; extensions come from appendExtensions.
func capabilities(f Features, version string) []byte {
	b := make([]byte, 0, 160)
	b = append(b, `{"logging":{}`...)
	if f.Completions {
		b = append(b, `,"completions":{}`...)
	}
	if f.Prompts {
		b = append(b, `,"prompts":{"listChanged":`...)
		b = appendBool(b, f.ListChanged)
		b = append(b, '}')
	}
	if f.Resources {
		b = append(b, `,"resources":{"subscribe":`...)
		b = appendBool(b, f.Subscribe)
		b = append(b, `,"listChanged":`...)
		b = appendBool(b, f.ListChanged)
		b = append(b, '}')
	}
	if f.Tools {
		b = append(b, `,"tools":{"listChanged":`...)
		b = appendBool(b, f.ListChanged)
		b = append(b, '}')
		if version == version20251125 {
			b = append(b, `,"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`...)
		}
	}
	b = appendExtensions(b, f, version)
	return append(b, '}')
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}
