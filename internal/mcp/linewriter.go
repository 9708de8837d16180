package mcp

import (
	"errors"
	"io"
	"sync"
)

var errWriterClosed = errors.New("mcp: connection closed")

// lineWriter writes newline-terminated messages to w from many goroutines.
// Messages queue in a buffer; whoever finds no write in progress becomes
// the flusher and writes everything queued, including what others add
// meanwhile, so under load many messages share one Write (one syscall)
// and no goroutine is needed. Order is the order of write calls.
type lineWriter struct {
	w io.Writer

	mu       sync.Mutex
	drained  *sync.Cond // signalled after each Write
	buf      []byte     // queued, not yet written
	spare    []byte     // the other buffer, reused
	flushing bool
	err      error
}

// maxQueued is how much output may wait behind a blocked Write before
// writers block too (backpressure on a client that does not read).
const maxQueued = 8 << 20

func newLineWriter(w io.Writer) *lineWriter {
	lw := &lineWriter{w: w, buf: make([]byte, 0, 4096), spare: make([]byte, 0, 4096)}
	lw.drained = sync.NewCond(&lw.mu)
	return lw
}

// writeMsg queues msg plus a newline and makes sure it gets written. It
// returns once msg is written or handed to the goroutine writing.
func (lw *lineWriter) writeMsg(msg []byte) error {
	lw.mu.Lock()
	for lw.flushing && lw.err == nil && len(lw.buf) > maxQueued {
		lw.drained.Wait()
	}
	if lw.err != nil {
		err := lw.err
		lw.mu.Unlock()
		return err
	}
	lw.buf = append(lw.buf, msg...)
	lw.buf = append(lw.buf, '\n')
	if lw.flushing {
		lw.mu.Unlock()
		return nil
	}
	lw.flushing = true
	var err error
	for len(lw.buf) > 0 && lw.err == nil {
		out := lw.buf
		lw.buf = lw.spare[:0]
		lw.mu.Unlock()
		_, err = lw.w.Write(out)
		lw.mu.Lock()
		if cap(out) <= 1<<20 {
			lw.spare = out[:0]
		} else {
			lw.spare = make([]byte, 0, 4096)
		}
		if err != nil && lw.err == nil {
			lw.err = err
		}
		lw.drained.Broadcast()
	}
	lw.flushing = false
	err = lw.err
	lw.mu.Unlock()
	return err
}

// close makes further writes fail.
func (lw *lineWriter) close() {
	lw.mu.Lock()
	if lw.err == nil {
		lw.err = errWriterClosed
	}
	lw.drained.Broadcast()
	lw.mu.Unlock()
}

// lineSink sends request messages over a lineWriter (stdio).
type lineSink struct{ lw *lineWriter }

func (s lineSink) send(msg []byte) error { return s.lw.writeMsg(msg) }
