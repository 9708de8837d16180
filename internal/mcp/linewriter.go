package mcp

import (
	"context"
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
	held     bool // hold: writes wait for unhold (up to holdBytes)
	err      error

	// Notifications (notice): queued bytes ever, bytes ever handed to
	// Write, and
	// the queued offset at which the last message of each key ends.
	noticeMax int
	queued    int64
	written   int64
	pending   map[string]int64
	pruneAt   int
}

// maxQueued is how much output may wait behind a blocked Write before
// writers block too (backpressure on a client that does not read).
const maxQueued = 8 << 20

func newLineWriter(w io.Writer, noticeMax int) *lineWriter {
	lw := &lineWriter{w: w, buf: make([]byte, 0, 4096), spare: make([]byte, 0, 4096), noticeMax: noticeMax}
	lw.drained = sync.NewCond(&lw.mu)
	return lw
}

// writeMsg queues msg plus a newline and makes sure it gets written. It
// returns once msg is written or handed to the goroutine writing, or
// queued behind a hold (which unhold writes).
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
	lw.appendLocked(msg)
	if lw.flushing || (lw.held && len(lw.buf) < holdBytes) {
		lw.mu.Unlock()
		return nil
	}
	lw.flushing = true
	return lw.flushLocked()
}

// holdBytes bounds what hold keeps back: past it, output is written.
const holdBytes = 32 << 10

// hold makes messages wait in the queue until unhold, or until holdBytes
// are queued (the stdio reader's holder).
func (lw *lineWriter) hold() {
	lw.mu.Lock()
	lw.held = true
	lw.mu.Unlock()
}

// unhold ends hold and writes what is queued (writeHeld).
func (lw *lineWriter) unhold() {
	lw.mu.Lock()
	lw.held = false
	lw.writeLocked()
}

// writeHeld writes what is queued, and keeps holding what comes after;
// unless a write is in progress, which then writes it.
func (lw *lineWriter) writeHeld() {
	lw.mu.Lock()
	lw.writeLocked()
}

// writeLocked writes what is queued unless a write is in progress; the
// caller holds mu, which writeLocked releases.
func (lw *lineWriter) writeLocked() {
	if lw.flushing || len(lw.buf) == 0 {
		lw.mu.Unlock()
		return
	}
	lw.flushing = true
	_ = lw.flushLocked()
}

// flush writes what is queued, held or not, and returns once it is
// written, or writing failed, or ctx ended: then a write in progress is
// left to finish (or block) on its own.
func (lw *lineWriter) flush(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() {
		lw.mu.Lock()
		lw.drained.Broadcast()
		lw.mu.Unlock()
	})
	defer stop()
	lw.mu.Lock()
	lw.held = false
	if !lw.flushing && len(lw.buf) > 0 && lw.err == nil {
		lw.flushing = true
		go func() { _ = lw.flushLocked() }() // it releases mu
		lw.mu.Lock()
	}
	for (lw.flushing || len(lw.buf) > 0) && lw.err == nil && ctx.Err() == nil {
		lw.drained.Wait()
	}
	lw.mu.Unlock()
}

func (lw *lineWriter) appendLocked(msg []byte) {
	lw.buf = append(lw.buf, msg...)
	lw.buf = append(lw.buf, '\n')
	lw.queued += int64(len(msg)) + 1
}

// notice queues a notification without blocking: it is dropped (false)
// when a write is in progress and more than noticeMax bytes would be
// queued, and not queued again (true) when the last message of the same
// key is not written yet. When no write is in progress, a goroutine
// writes what is queued.
func (lw *lineWriter) notice(key string, msg []byte) bool {
	lw.mu.Lock()
	if lw.err != nil {
		lw.mu.Unlock()
		return true // the connection is gone: nothing to count
	}
	if end, ok := lw.pending[key]; ok && key != "" {
		if end > lw.written {
			lw.mu.Unlock()
			return true
		}
		delete(lw.pending, key)
	}
	if lw.flushing && len(lw.buf)+len(msg)+1 > lw.noticeMax {
		lw.mu.Unlock()
		return false
	}
	lw.appendLocked(msg)
	if key != "" {
		if len(lw.pending) >= lw.pruneAt {
			lw.prunePendingLocked()
			lw.pruneAt = max(1024, 2*len(lw.pending))
		}
		lw.pending[key] = lw.queued
	}
	if lw.flushing {
		lw.mu.Unlock()
		return true
	}
	lw.flushing = true
	go func() { _ = lw.flushLocked() }()
	return true
}

// prunePendingLocked forgets the keys whose message is written.
func (lw *lineWriter) prunePendingLocked() {
	if lw.pending == nil {
		lw.pending = map[string]int64{}
		return
	}
	for k, end := range lw.pending {
		if end <= lw.written {
			delete(lw.pending, k)
		}
	}
}

// flushLocked writes what is queued until nothing is; the caller set
// flushing and holds mu, which flushLocked releases.
func (lw *lineWriter) flushLocked() error {
	var err error
	for len(lw.buf) > 0 && lw.err == nil {
		out := lw.buf
		lw.buf = lw.spare[:0]
		// Counted as written once handed to Write: the client may read
		// it before Write returns.
		lw.written += int64(len(out))
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

func (s lineSink) notice(key string, msg []byte) bool { return s.lw.notice(key, msg) }
