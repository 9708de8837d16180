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
	"github.com/wasmcp/wasmcp/internal/jsonscan"
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
		jobs: make(chan stdioJob), quit: make(chan struct{})}
	st.c = s.newConn(s.ctx, st.sink)
	stop := context.AfterFunc(ctx, st.c.cancel)
	defer stop()

	readDone := make(chan error, 1)
	go func() { readDone <- st.readLoop(r) }()
	var err error
	select {
	case err = <-readDone:
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
	}
	st.wg.Wait()
	close(st.quit)
	st.workers.Wait()
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
	sem     chan struct{}
	wg      sync.WaitGroup
	gate    sync.Mutex  // orders wg.Add against stopping
	stopped atomic.Bool // set (under gate) when ServeStdio stops reading

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

func (st *stdioConn) readLoop(r io.Reader) error {
	lr := newLineReader(r, st.srv.opts.MaxMessageBytes)
	for {
		line, err := lr.next()
		if st.stopped.Load() {
			return nil
		}
		if errors.Is(err, errLineTooLong) {
			st.writeError(jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("invalid request: message longer than %d bytes", st.srv.opts.MaxMessageBytes)})
			continue
		}
		if len(trimSpaceBytes(line)) > 0 {
			st.handleLine(line)
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
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
	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
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

func (st *stdioConn) writeResult(id jsonrpc.ID, res []byte) {
	b := getBuf()
	*b = jsonrpc.AppendResult((*b)[:0], id, res)
	_ = st.lw.writeMsg(*b)
	putBuf(b)
}

// handleLine handles one line; it is called by the reader only.
func (st *stdioConn) handleLine(line []byte) {
	if jsonrpc.IsBatch(line) {
		st.handleBatch(line)
		return
	}
	buf := getBuf()
	*buf = append((*buf)[:0], line...)
	m, perr := jsonrpc.Parse(*buf)
	switch {
	case perr != nil:
		st.writeError(m.ID, perr)
	case m.IsResponse():
		st.c.handleResponse(&m)
	case m.IsNotification():
		st.c.handleNotification(&m)
	default:
		if st.handleRequest(&m, buf) {
			return // buf now belongs to the request
		}
	}
	putBuf(buf)
}

// prepare routes request m: it answers what needs no handler goroutine and
// returns the call to run otherwise.
func (st *stdioConn) prepare(m *jsonrpc.Message, out sink) *call {
	var mi metaInfo
	scanMeta(m.Params, &mi)
	c := st.c
	if st.srv.isDraining() {
		st.writeError(m.ID, errShuttingDown)
		return nil
	}
	if mi.modern || isModernOnlyMethod(m.Method) {
		if e := checkModern(m, &mi); e != nil {
			st.writeError(m.ID, e)
			return nil
		}
		return st.srv.newModernCall(context.Background(), m, &mi, out)
	}
	if m.Method == methodInitialize {
		res, e := c.initialize(m)
		if e != nil {
			st.writeError(m.ID, e)
		} else {
			st.writeResult(m.ID, res)
		}
		return nil
	}
	if ok, _, _, _ := c.snapshot(); ok {
		return c.newLegacyCall(m, &mi, out)
	}
	if m.Method == methodPing {
		st.writeResult(m.ID, []byte("{}"))
		return nil
	}
	st.writeError(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
		Message: "invalid request: send initialize first (or per-request _meta for protocol version 2026-07-28)"})
	return nil
}

// handleRequest starts request m; it reports whether it kept buf.
func (st *stdioConn) handleRequest(m *jsonrpc.Message, buf *[]byte) bool {
	cl := st.prepare(m, st.sink)
	if cl == nil {
		return false
	}
	st.acquire()
	if !st.c.track(cl) {
		st.release()
		cl.cancel()
		st.writeError(m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "invalid request: a request with this id is already running"})
		return false
	}
	cl.slots = st
	cl.remote = "stdio " + st.c.id
	if rf := st.srv.admitCall(cl); rf != nil {
		st.c.untrack(cl)
		st.release()
		cl.cancel()
		st.writeError(m.ID, rf.err)
		return false
	}
	if !st.begin() {
		st.srv.releaseCall(cl)
		st.c.untrack(cl)
		st.release()
		cl.cancel()
		if !st.stopped.Load() {
			st.writeError(m.ID, errShuttingDown)
		}
		return false
	}
	st.dispatch(stdioJob{cl: cl, buf: buf})
	return true
}

// handleBatch serves a JSON-RPC batch, accepted only in a 2025-03-26
// session. The responses go out as one array once all requests are done.
func (st *stdioConn) handleBatch(line []byte) {
	ok, version, _, _ := st.c.snapshot()
	if !jsonscan.Valid(line) {
		st.writeError(jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: invalid JSON"})
		return
	}
	if !ok || version != version20250326 {
		st.writeError(jsonrpc.ID{}, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
			Message: "invalid request: batches are only accepted in a 2025-03-26 session"})
		return
	}
	if st.srv.isDraining() {
		st.writeError(jsonrpc.ID{}, errShuttingDown)
		return
	}
	data := append([]byte(nil), line...)
	elems, perr := jsonrpc.ParseBatch(data)
	if perr == nil {
		perr = st.srv.batchTooLong(len(elems))
	}
	if perr != nil {
		st.writeError(jsonrpc.ID{}, perr)
		return
	}
	var calls []*call
	var immediate [][]byte
	for _, e := range elems {
		m, perr := jsonrpc.Parse(e)
		switch {
		case perr != nil:
			immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, perr))
		case m.IsResponse():
			st.c.handleResponse(&m)
		case m.IsNotification():
			st.c.handleNotification(&m)
		case m.Method == methodInitialize:
			immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: "invalid request: initialize must not be part of a batch"}))
		default:
			var mi metaInfo
			scanMeta(m.Params, &mi)
			if mi.modern || isModernOnlyMethod(m.Method) {
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
					Message: "invalid request: 2026-07-28 requests cannot be batched"}))
				continue
			}
			cl := st.c.newLegacyCall(&m, &mi, st.sink)
			if !st.c.track(cl) {
				cl.cancel()
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
					Message: "invalid request: a request with this id is already running"}))
				continue
			}
			if rf := st.srv.admitCall(cl); rf != nil {
				st.c.untrack(cl)
				cl.cancel()
				immediate = append(immediate, jsonrpc.AppendError(nil, m.ID, rf.err))
				continue
			}
			calls = append(calls, cl)
		}
	}
	if len(calls) == 0 {
		st.writeBatch(immediate)
		return
	}
	st.acquire()
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
