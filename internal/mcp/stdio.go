package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// ServeStdio serves one client over newline-delimited JSON-RPC: requests
// and notifications are read from r one per line, and responses,
// notifications and server-to-client requests are written to w one per
// line, nothing else. Both eras are served on the same connection: an
// initialize opens the legacy session of this connection, and requests
// carrying 2026-07-28 _meta are served statelessly.
//
// Requests run concurrently (at most Options.MaxConcurrency at once). At
// end of input ServeStdio stops listen streams, lets the requests in flight
// finish (cancelling them after Options.DrainTimeout), and returns nil. When ctx ends or the Server is closed, the
// requests in flight are cancelled and ServeStdio returns once they have
// returned; a Read blocked on r is then abandoned to a goroutine that
// exits as soon as that Read returns, without reading further.
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := newLineWriter(w, s.opts.NotifyQueueBytes)
	st := &stdioConn{srv: s, lw: lw, sink: lineSink{lw}, sem: make(chan struct{}, s.opts.MaxConcurrency),
		jobs: make(chan stdioJob), quit: make(chan struct{}),
		lr: newLineReader(r, s.opts.MaxMessageBytes), readDone: make(chan error, 1)}
	st.wake = make(chan struct{}, 1)
	st.c = s.newConn(s.ctx, st.sink)
	st.remote = "stdio " + st.c.id
	stop := context.AfterFunc(ctx, st.c.cancel)
	defer stop()

	st.workers.Add(1)
	go st.watchdog()
	go st.read()
	var err error
	graceful := true // the answers due are written before ServeStdio returns
	select {
	case err = <-st.readDone:
		st.endOfInput()
		st.drain(s.opts.DrainTimeout)
	case <-s.drain:
		// Shutdown: new requests are refused (the reader still delivers
		// cancellations and answers to client calls); the requests in
		// flight finish, or are cancelled when Shutdown closes the
		// server.
		st.gate.Lock() // begin calls from now on see the shutdown
		st.gate.Unlock()
		st.drain(-1)
		st.stop()
	case <-st.c.ctx.Done():
		st.stop()
		err = ctx.Err()
		graceful = false
	}
	st.wg.Wait()
	close(st.quit)
	st.workers.Wait()
	if graceful {
		// What is queued goes out: the answers the reader held when it
		// stopped (holder), and those queued behind a write in progress
		// (Shutdown closes the connection as soon as its requests are
		// done, maybe before their answers are written). For at most
		// DrainTimeout, as for a client that does not read.
		fctx, cancel := ctx, context.CancelFunc(func() {})
		if d := s.opts.DrainTimeout; d > 0 {
			fctx, cancel = context.WithTimeout(ctx, d)
		}
		lw.flush(fctx)
		cancel()
	}
	st.c.close()
	lw.close()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("mcp: stdio: read: %w", err)
	}
	return err
}

// stdioConn is the state of one ServeStdio call.
type stdioConn struct {
	srv     *Server
	c       *conn
	lw      *lineWriter
	sink    lineSink
	remote  string // the connection as calls name their client (call.remote)
	sem     chan struct{}
	wg      sync.WaitGroup
	gate    sync.Mutex  // orders wg.Add against stopping
	stopped atomic.Bool // set (under gate) when ServeStdio stops reading

	// The input, read by one goroutine at a time (read), and the
	// result of the last reader.
	lr       *lineReader
	readDone chan error
	// Requests the reader runs itself (stdio_inline.go).
	inliner

	// The request workers (stdio_workers.go).
	jobs    chan stdioJob
	idle    atomic.Int32 // workers committed to receive from jobs
	quit    chan struct{}
	workers sync.WaitGroup
}

// stop makes the reader drop whatever it reads from now on.
func (st *stdioConn) stop() {
	st.gate.Lock()
	st.stopped.Store(true)
	st.gate.Unlock()
}

// begin registers a handler goroutine; false once ServeStdio stopped.
func (st *stdioConn) begin() bool {
	st.gate.Lock()
	defer st.gate.Unlock()
	if st.stopped.Load() || st.srv.isDraining() {
		return false
	}
	st.wg.Add(1)
	return true
}

func (st *stdioConn) acquire() { st.sem <- struct{}{} }
func (st *stdioConn) release() { <-st.sem }

// acquireOut takes a slot for the reader; the output the reader holds
// (holder) is written before it waits for one.
func (st *stdioConn) acquireOut() {
	select {
	case st.sem <- struct{}{}:
	default:
		st.lw.unhold()
		st.sem <- struct{}{}
	}
}

// read reads and handles the input until it ends, and then sends the
// result to readDone; unless the watchdog takes the reader role over
// from a request this goroutine runs inline, and another goroutine reads
// from then on.
func (st *stdioConn) read() {
	if taken, err := st.readLoop(); !taken && !st.ended() {
		st.readDone <- err
	}
}

// ended reports whether ServeStdio stopped reading or the connection
// ended: the reader then reads no further (a request it ran inline may
// have run past that), and ServeStdio does not wait for it.
func (st *stdioConn) ended() bool { return st.stopped.Load() || st.c.ctx.Err() != nil }

func (st *stdioConn) readLoop() (taken bool, err error) {
	var h holder
	for !st.ended() {
		line, err := st.lr.next()
		if st.ended() {
			break
		}
		tooLong := errors.Is(err, errLineTooLong)
		// Hold the output while more input is buffered (stdio_inline.go).
		more := (err == nil || tooLong) && st.lr.lineBuffered()
		h.before(st, more)
		if tooLong {
			rf := &refusal{err: &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: message longer than %d bytes", st.srv.opts.MaxMessageBytes)}, reason: refusedTooLarge}
			st.writeError(jsonrpc.ID{}, st.srv.refuseUnread(time.Now(), nil, rf).err)
		} else if len(trimSpaceBytes(line)) > 0 && st.handleLine(line, err == nil) {
			return true, nil
		}
		h.after(st, more)
		if err != nil && !tooLong {
			if err == io.EOF {
				return false, nil
			}
			return false, err
		}
	}
	return false, nil
}

// endOfInput ends what cannot go on without input: listen streams end
// without a response and server-to-client requests fail.
func (st *stdioConn) endOfInput() {
	st.c.mu.Lock()
	var listens []*call
	for _, cl := range st.c.inflight {
		if cl.req.Method == methodListen {
			listens = append(listens, cl)
		}
	}
	st.c.mu.Unlock()
	for _, cl := range listens {
		cl.cancelByClient()
	}
	st.c.failPending()
}

// drain waits for the requests in flight, cancelling them after d
// (negative: no limit) or when the connection is cancelled.
func (st *stdioConn) drain(d time.Duration) {
	idle := make(chan struct{})
	go func() {
		st.wg.Wait()
		close(idle)
	}()
	timeout, stop := clock(d, false)
	defer stop()
	select {
	case <-idle:
		return
	case <-timeout:
	case <-st.c.ctx.Done():
	}
	st.c.cancel()
	<-idle
}

func (st *stdioConn) writeError(id jsonrpc.ID, e *jsonrpc.Error) {
	b := getBuf()
	*b = jsonrpc.AppendError((*b)[:0], id, e)
	_ = st.lw.writeMsg(*b)
	putBuf(b)
}

// handleLine handles one line; it is called by the reader only, which
// may run the request inline (stdio_inline.go) when inline is set. It
// reports whether the reader role was taken over meanwhile.
func (st *stdioConn) handleLine(line []byte, inline bool) (taken bool) {
	if jsonrpc.IsBatch(line) {
		st.handleBatch(line)
		return false
	}
	buf := getBuf()
	*buf = append((*buf)[:0], line...)
	kept, taken := st.handleMessage(*buf, buf, inline)
	if !kept {
		putBuf(buf)
	}
	return taken
}

// handleMessage admits one message and starts, answers or delivers it; it
// reports whether it kept buf (which holds body), and whether the reader
// role was taken over from the request it ran inline.
func (st *stdioConn) handleMessage(body []byte, buf *[]byte, inline bool) (kept, taken bool) {
	var m jsonrpc.Message
	var mi metaInfo
	in := inbound{c: st.c, draining: st.srv.isDraining()}
	rt, rf := st.srv.admitMessage(body, &in, &m, &mi)
	out := getBuf()
	resp, settled := settle(rt, rf, &m, &in, (*out)[:0])
	if len(resp) > 0 {
		_ = st.lw.writeMsg(resp)
	}
	*out = resp
	putBuf(out)
	if settled {
		return false, false
	}
	cl := st.srv.routeCall(rt, st.c, &m, &mi, st.sink)
	cl.remote = st.remote
	cl.slots = st
	st.acquireOut()
	if rf := st.srv.startCall(cl, st.c); rf != nil {
		st.release()
		st.writeError(m.ID, rf.err)
		return false, false
	}
	if !st.begin() {
		st.srv.releaseCall(cl)
		st.c.untrack(cl)
		st.release()
		cl.cancel()
		if !st.stopped.Load() {
			st.writeError(m.ID, errShuttingDown)
		}
		return false, false
	}
	j := stdioJob{cl: cl, buf: buf}
	if cl.req.Method != methodListen {
		j.t = st.targetOf(&cl.req)
		if inline && j.t.inlineAt(unixNow) {
			return true, st.runInline(j)
		}
	}
	st.dispatch(j)
	return true, false
}

// handleBatch serves a 2025-03-26 batch. The responses go out as one
// array once all its requests are done.
func (st *stdioConn) handleBatch(line []byte) {
	data := append([]byte(nil), line...)
	calls, immediate, rf := st.srv.admitBatch(data, &inbound{c: st.c, draining: st.srv.isDraining()}, func(m *jsonrpc.Message, mi *metaInfo) *call {
		return st.c.newLegacyCall(m, mi, st.sink)
	})
	if rf != nil {
		st.writeError(jsonrpc.ID{}, rf.err)
		return
	}
	if len(calls) == 0 {
		st.writeBatch(immediate)
		return
	}
	st.acquireOut()
	if !st.begin() {
		st.release()
		for _, cl := range calls {
			st.c.untrack(cl)
			st.srv.releaseCall(cl)
			cl.cancel()
		}
		return
	}
	go func() {
		defer st.wg.Done()
		defer st.release()
		out := runBatch(st.srv, st.c, calls)
		st.writeBatch(append(immediate, out...))
		_ = data // the calls alias data until here
	}()
}

func (st *stdioConn) writeBatch(msgs [][]byte) {
	if len(msgs) == 0 {
		return
	}
	_ = st.lw.writeMsg(joinBatch(msgs))
}

func trimSpaceBytes(b []byte) []byte {
	i, j := 0, len(b)
	for i < j && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	for j > i && (b[j-1] == ' ' || b[j-1] == '\t' || b[j-1] == '\r' || b[j-1] == '\n') {
		j--
	}
	return b[i:j]
}
