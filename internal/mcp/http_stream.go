package mcp

import (
	"errors"
	"net/http"
	"strconv"
	"sync"
	"time"
)

var errStreamGone = errors.New("mcp: the HTTP response stream is gone")

// startSSE writes the headers of an SSE response.
func startSSE(w http.ResponseWriter) {
	hd := w.Header()
	hd["Content-Type"] = sseContentType
	hd["Cache-Control"] = noCache
	hd["X-Accel-Buffering"] = noBuffering
	w.WriteHeader(http.StatusOK)
}

// appendEvent appends one SSE event carrying msg; id may be empty.
func appendEvent(dst []byte, id string, msg []byte) []byte {
	if id != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, id...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "event: message\ndata: "...)
	dst = append(dst, msg...)
	return append(dst, "\n\n"...)
}

// directSink writes a stateless request's messages straight to its HTTP
// response: JSON when only the response comes, SSE from the first message
// sent before it.
type directSink struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu        sync.Mutex
	streaming bool
	dead      bool
}

func (d *directSink) send(msg []byte) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.writeLocked(msg)
}

func (d *directSink) writeLocked(msg []byte) error {
	if d.dead {
		return errStreamGone
	}
	if !d.streaming {
		startSSE(d.w)
		d.streaming = true
	}
	b := getBuf()
	*b = appendEvent((*b)[:0], "", msg)
	_, err := d.w.Write(*b)
	putBuf(b)
	if err == nil {
		err = d.rc.Flush()
	}
	if err != nil {
		d.dead = true
	}
	return err
}

func (d *directSink) keepAlive() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dead {
		return errStreamGone
	}
	if !d.streaming {
		startSSE(d.w)
		d.streaming = true
	}
	_, err := d.w.Write([]byte(": keepalive\n\n"))
	if err == nil {
		err = d.rc.Flush()
	}
	if err != nil {
		d.dead = true
	}
	return err
}

// finish writes the response: a final SSE event, or a JSON body with
// status.
func (d *directSink) finish(resp []byte, status int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.streaming {
		_ = d.writeLocked(resp)
		return
	}
	writeJSON(d.w, status, resp)
}

// sseEvent is one retained event of a legacy stream.
type sseEvent struct {
	seq  int64
	data []byte
	key  string // of a coalescing notification (notice), else ""
}

// sseStream is one legacy SSE stream of a session: the stream of a POSTed
// request, or the session's standalone stream (id 0) for messages not tied
// to a request. It keeps its last events so that a client can resume with
// Last-Event-ID ("<stream>.<seq>"); one HTTP response at a time writes it.
// As a sink it queues messages; for a POST stream the first message turns
// the response from JSON into SSE.
type sseStream struct {
	sess     *httpSession
	id       int64
	max      int // events retained
	maxBytes int // bytes of events retained

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every change
	events    []sseEvent
	bytes     int              // of events
	pending   map[string]int64 // seq of the retained event of each notice key
	nextSeq   int64
	sse       bool   // the response is (or must become) SSE
	final     []byte // the JSON response of a stream that never became SSE
	done      bool   // no more events: the response is queued (or abandoned)
	closeReq  int    // counts server-requested closes (SSE polling)
	writerGen int    // the attached writer; a new writer takes over
	delivered int64  // highest seq written to a client
	handed    int64  // highest seq handed to a writer (written or being written)
	detached  bool   // the POST response is gone and it never became SSE
	// finalStatus is final's HTTP status when it is not 200 (a
	// CodeForbidden error: 403), set before finish.
	finalStatus int
}

func newSSEStream(sess *httpSession, id int64, max, maxBytes int) *sseStream {
	return &sseStream{sess: sess, id: id, max: max, maxBytes: maxBytes, changed: make(chan struct{}), nextSeq: 1}
}

// signalLocked wakes the writer.
func (st *sseStream) signalLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

func (st *sseStream) send(msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return errStreamGone
	}
	st.sse = true
	st.appendLocked(msg, "")
	return nil
}

// notice queues a session notification: not again while the last one
// of the same key is retained and not delivered yet. It never blocks or
// drops (the retention bounds evict the oldest events).
func (st *sseStream) notice(key string, msg []byte) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return true
	}
	if seq, ok := st.pending[key]; ok && seq > st.handed {
		return true
	}
	st.sse = true
	st.appendLocked(msg, key)
	return true
}

func (st *sseStream) appendLocked(msg []byte, key string) {
	st.events = append(st.events, sseEvent{seq: st.nextSeq, data: append([]byte(nil), msg...), key: key})
	st.bytes += len(msg)
	if key != "" {
		if st.pending == nil {
			st.pending = map[string]int64{}
		}
		st.pending[key] = st.nextSeq
	}
	st.nextSeq++
	drop := 0
	for n, b := len(st.events), st.bytes; drop < n-1 && (n-drop > st.max || b > st.maxBytes); drop++ {
		b -= len(st.events[drop].data)
	}
	if drop > 0 {
		for _, ev := range st.events[:drop] {
			st.bytes -= len(ev.data)
			if ev.key != "" && st.pending[ev.key] == ev.seq {
				delete(st.pending, ev.key)
			}
		}
		n := copy(st.events, st.events[drop:])
		clear(st.events[n:])
		st.events = st.events[:n]
	}
	st.signalLocked()
}

func (st *sseStream) closeStream() {
	st.mu.Lock()
	st.sse = true
	st.closeReq++
	st.signalLocked()
	st.mu.Unlock()
}

// finish queues the response of the stream's request (resp nil: no
// response is due) and ends the stream.
func (st *sseStream) finish(resp []byte) {
	st.mu.Lock()
	if st.sse {
		if resp != nil {
			st.appendLocked(resp, "")
		}
	} else {
		st.final = resp
	}
	st.done = true
	detached := st.detached
	st.signalLocked()
	st.mu.Unlock()
	if detached {
		st.sess.dropStream(st)
	}
}

func (st *sseStream) eventID(seq int64) string {
	if st.sess != nil && st.sess.c.shared != nil {
		return st.sess.h.s.sharedEventID(st.sess.id, st.id, seq)
	}
	return strconv.FormatInt(st.id, 10) + "." + strconv.FormatInt(seq, 10)
}

// pump writes the events after cursor to w until the stream ends, the
// server asks to close this response, another writer takes over, the
// client goes away or the session ends. It reports whether the stream was
// written to its end.
//
// The writer of a POST response (first) honours closes requested before it
// started; a resuming writer only those requested while it runs. A closed
// drain ends the response too (nil: never).
func (st *sseStream) pump(w http.ResponseWriter, r *http.Request, cursor int64, keepAlive time.Duration, first bool, drain <-chan struct{}) bool {
	rc := http.NewResponseController(w)
	st.mu.Lock()
	st.writerGen++
	gen := st.writerGen
	st.signalLocked() // a previous writer sees it was replaced
	closeAt := st.closeReq
	if first {
		closeAt = 0
	}
	st.mu.Unlock()

	tick, stop := clock(keepAlive, true)
	defer stop()
	buf := getBuf()
	defer putBuf(buf)
	for {
		st.mu.Lock()
		if st.writerGen != gen || st.closeReq != closeAt {
			// Replaced, or the server closes this response: what is
			// queued stays for the client's Last-Event-ID resumption.
			st.mu.Unlock()
			return false
		}
		b := (*buf)[:0]
		last := cursor
		for _, ev := range st.events {
			if ev.seq > cursor {
				b = appendEvent(b, st.eventID(ev.seq), ev.data)
				last = ev.seq
			}
		}
		end := st.done && last >= st.nextSeq-1
		ch := st.changed
		if last > st.handed {
			st.handed = last
		}
		st.mu.Unlock()
		*buf = b
		if len(b) > 0 {
			if _, err := w.Write(b); err != nil {
				return false
			}
			if err := rc.Flush(); err != nil {
				return false
			}
			cursor = last
			st.mu.Lock()
			if last > st.delivered {
				st.delivered = last
			}
			st.mu.Unlock()
		}
		if end {
			return true
		}
		select {
		case <-ch:
		case <-tick:
			if _, err := w.Write([]byte(": keepalive\n\n")); err != nil {
				return false
			}
			if rc.Flush() != nil {
				return false
			}
		case <-r.Context().Done():
			return false
		case <-st.sess.done:
			return false
		case <-drain:
			return false
		}
	}
}
