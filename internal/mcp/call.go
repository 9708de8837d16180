package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/internal/jsonscan"
	"github.com/wasmcp/wasmcp/internal/mcpreq"
)

// sink receives the messages a request (or a session) sends before or
// instead of a response: notifications and server-to-client requests. msg
// is one complete JSON-RPC message without framing; send copies it.
type sink interface {
	send(msg []byte) error
}

// noticeSink is a sink that queues notifications without ever blocking:
// notice reports false when it dropped msg because too much is queued. A
// message with the same non-empty key still waiting to be written is not
// queued again (it reports true).
type noticeSink interface {
	notice(key string, msg []byte) bool
}

// keepAliver is a sink that can send a transport-level keep-alive.
type keepAliver interface {
	keepAlive() error
}

// streamCloser is a sink whose underlying HTTP response can be closed
// while the request goes on (SSE polling).
type streamCloser interface {
	closeStream()
}

// slotPool bounds concurrent requests (stdio).
type slotPool interface {
	acquire()
	release()
}

// errClientGone is returned by ClientCall when the client connection ends
// before the answer arrives.
var errClientGone = errors.New("mcp: client connection closed")

// call is one client request while it runs: the Request the Provider sees,
// its context, and where its messages go. It implements peer.
type call struct {
	srv    *Server
	conn   *conn // legacy session or stdio connection; nil for stateless HTTP
	id     jsonrpc.ID
	req    Request
	ctx    context.Context
	cancel context.CancelFunc
	out    sink
	header http.Header // the HTTP request's header (Observer); nil on stdio
	ri     RequestInfo // what the Observer sees of it (observeStart), allocated with it
	minLog int32       // 2026-07-28: level from _meta, -1 when absent
	extra  []byte      // members checkResult adds to the result (resultType...)

	// keepAlive is the interval of keep-alives on long-lived requests
	// (subscriptions/listen over HTTP); 0 disables them.
	keepAlive time.Duration
	// stop, when closed, ends long-lived requests like a server Close
	// (the HTTP handler shutting down).
	stop <-chan struct{}
	// drain, when closed, ends long-lived requests with their completion
	// (the HTTP handler stops taking requests).
	drain <-chan struct{}
	// slots, when set, bounds the connection's running requests: a request
	// gives its slot back while it waits for the client.
	slots slotPool
	// admitted: the call holds a place in the server's call limiter
	// (only the goroutine that runs the call touches it).
	admitted bool
	// share is the share of the run slots the call takes
	// (SlotSharer); nil for none. Set before the call takes a slot.
	share *shareState
	// pkey is the principal whose place the call holds (zero for none);
	// remote names the client when nothing else does (principalKey).
	pkey   principalID
	remote string
	// task is the task this call runs for (a background call); nil for
	// a client request.
	task *taskRun

	mu              sync.Mutex
	running         bool // holds a run slot of the server's call limiter
	yielded         bool // gave its run slot back while queued for a plugin instance
	released        bool // releaseCall ran: the call takes no slot again
	done            bool // answered (or abandoned): nothing more may be sent
	clientCancelled bool // notifications/cancelled: no response at all
	progressed      bool
	lastProgress    float64
}

func (s *Server) newCall(parent context.Context, c *conn, id jsonrpc.ID, out sink) *call {
	cl := &call{srv: s, conn: c, id: id, out: out, minLog: -1}
	cl.ctx, cl.cancel = context.WithCancel(parent)
	cl.req.peer = cl
	return cl
}

// cancelByClient handles notifications/cancelled for this request.
func (cl *call) cancelByClient() {
	cl.mu.Lock()
	if cl.done {
		cl.mu.Unlock()
		return
	}
	cl.clientCancelled = true
	cl.mu.Unlock()
	cl.cancel()
}

// sendLocked sends msg unless the request is finished or cancelled by the
// client. cl.mu must be held.
func (cl *call) sendLocked(msg []byte) error {
	if cl.done || cl.clientCancelled {
		return errRequestDone
	}
	return cl.out.send(msg)
}

var errRequestDone = errors.New("mcp: request already answered")

func (cl *call) progress(r *Request, progress float64, total *float64, message string) {
	if math.IsNaN(progress) || math.IsInf(progress, 0) {
		return
	}
	if cl.task != nil && r.Stateless {
		cl.taskProgress(progress, total, message)
		return
	}
	b := getBuf()
	defer putBuf(b)
	p := append((*b)[:0], `{"progressToken":`...)
	p = append(p, r.ProgressToken...)
	p = append(p, `,"progress":`...)
	p = strconv.AppendFloat(p, progress, 'g', -1, 64)
	if total != nil && !math.IsNaN(*total) && !math.IsInf(*total, 0) {
		p = append(p, `,"total":`...)
		p = strconv.AppendFloat(p, *total, 'g', -1, 64)
	}
	if message != "" {
		p = append(p, `,"message":`...)
		p = jsonscan.AppendString(p, message)
	}
	p = append(p, '}')
	n := len(p)
	msg := jsonrpc.AppendNotification(p, notifProgress, p[:n])[n:]
	*b = p

	cl.mu.Lock()
	defer cl.mu.Unlock()
	if cl.progressed && progress <= cl.lastProgress {
		return
	}
	if cl.sendLocked(msg) == nil {
		cl.progressed, cl.lastProgress = true, progress
	}
}

func (cl *call) log(r *Request, level, logger string, data json.RawMessage) {
	lvl := logLevelIndex(level)
	if lvl < 0 || (cl.task != nil && r.Stateless) {
		return // 2026-07-28 tasks carry no log messages
	}
	min := cl.minLog
	if !r.Stateless && cl.conn != nil {
		min = cl.conn.logLevel.Load()
	}
	if min < 0 || lvl < min {
		return
	}
	b := getBuf()
	defer putBuf(b)
	p := append((*b)[:0], `{"level":`...)
	p = jsonscan.AppendString(p, level)
	if logger != "" {
		p = append(p, `,"logger":`...)
		p = jsonscan.AppendString(p, logger)
	}
	p = append(p, `,"data":`...)
	p = appendRawOrString(p, data)
	p = append(p, '}')
	n := len(p)
	msg := jsonrpc.AppendNotification(p, notifMessage, p[:n])[n:]
	*b = p
	cl.mu.Lock()
	_ = cl.sendLocked(msg)
	cl.mu.Unlock()
}

// appendRawOrString appends data when it is valid JSON (compacted), and
// otherwise appends it as a JSON string; empty data becomes null.
func appendRawOrString(dst []byte, data []byte) []byte {
	if len(data) == 0 {
		return append(dst, "null"...)
	}
	if jsonscan.Valid(data) {
		return appendCompact(dst, data)
	}
	return jsonscan.AppendString(dst, string(data))
}

func (cl *call) clientCall(ctx context.Context, r *Request, method string, params json.RawMessage) (json.RawMessage, error) {
	c := cl.conn
	if c == nil || cl.out == nil {
		return nil, ErrNoClientRequests
	}
	if capName := mcpreq.CapabilityFor(method); capName != "" && !r.HasClientCapability(capName) {
		return nil, fmt.Errorf("%w: the client did not declare the %q capability", ErrNoClientRequests, capName)
	}
	if len(params) > 0 && (!jsonscan.Valid(params) || jsonscan.Kind(params) != 'o') {
		return nil, fmt.Errorf("mcp: %s: params must be a JSON object", method)
	}
	if cl.task != nil {
		params = cl.taskInput(params, true)
		defer cl.taskInput(nil, false)
	}
	id := jsonrpc.IntID(c.nextOut.Add(1))
	ch := make(chan clientReply, 1)
	if !c.addPending(id, ch) {
		return nil, errClientGone
	}
	defer c.removePending(id)

	b := getBuf()
	msg := jsonrpc.AppendRequest((*b)[:0], id, method, nil)
	if len(params) > 0 {
		msg = msg[:len(msg)-1]
		msg = append(msg, `,"params":`...)
		msg = appendCompact(msg, params)
		msg = append(msg, '}')
	}
	cl.mu.Lock()
	err := cl.sendLocked(msg)
	cl.mu.Unlock()
	*b = msg
	putBuf(b)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s: %w", method, err)
	}

	if cl.slots != nil {
		cl.slots.release()
		defer cl.slots.acquire()
	}
	paused := cl.srv.pauseSlot(cl)
	defer cl.srv.resumeSlot(ctx, cl, paused)
	select {
	case rep := <-ch:
		if rep.goErr != nil {
			return nil, rep.goErr
		}
		if rep.err != nil {
			return nil, rep.err
		}
		return rep.result, nil
	case <-ctx.Done():
		cl.notifyCancelled(id, "the server stopped waiting")
		return nil, ctx.Err()
	case <-cl.ctx.Done():
		return nil, cl.ctx.Err()
	}
}

// notifyCancelled tells the client the server gave up on its own request
// id, if the originating request is still running.
func (cl *call) notifyCancelled(id jsonrpc.ID, reason string) {
	p := append([]byte(`{"requestId":`), id.Raw()...)
	p = append(p, `,"reason":`...)
	p = jsonscan.AppendString(p, reason)
	p = append(p, '}')
	msg := jsonrpc.AppendNotification(nil, notifCancelled, p)
	cl.mu.Lock()
	_ = cl.sendLocked(msg)
	cl.mu.Unlock()
}

func (cl *call) yieldSlot() { cl.srv.yieldSlot(cl) }

func (cl *call) resumeSlot(ctx context.Context) error {
	return cl.srv.resumeSlotAfterYield(ctx, cl)
}

func (cl *call) startTask(*Request) {
	if cl.task != nil {
		cl.task.start()
	}
}

func (cl *call) closeStream(*Request) {
	if cl.task != nil {
		return // a task's messages go to the session's stream, not the request's
	}
	if sc, ok := cl.out.(streamCloser); ok {
		cl.mu.Lock()
		done := cl.done
		cl.mu.Unlock()
		if !done {
			sc.closeStream()
		}
	}
}

// clientReply is the client's answer to a server-to-client request.
type clientReply struct {
	result json.RawMessage
	err    *jsonrpc.Error
	goErr  error
}

var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 1<<20 {
		return // do not keep huge buffers
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}
