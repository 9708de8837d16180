package wasip2

import (
	"bytes"
	"io"
	"sync"

	"github.com/wasmcp/wasmcp/hostapi"
)

const (
	defaultLogLines    = hostapi.MaxLogLines
	defaultLogLineText = hostapi.MaxLogLineText
)

// logStream is stdout or stderr: bytes cut into lines, each written in
// one Write, at most LogLines per call, each cut to LogLineText bytes.
// What is over the bounds is dropped and counted. Every get-stdout
// handle of an instance shares its one logStream, so a line written in
// pieces stays one line.
type logStream struct {
	mu      sync.Mutex
	w       io.Writer
	lim     Limits
	buf     []byte // the unfinished line
	cut     bool   // the unfinished line was cut: drop until its newline
	lines   int    // lines written in this call
	dropped int64
}

func newLogStream(w io.Writer, lim Limits) *logStream {
	return &logStream{w: w, lim: lim}
}

func (l *logStream) newCall() {
	l.mu.Lock()
	l.lines = 0
	l.mu.Unlock()
}

func (l *logStream) droppedBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}

func (l *logStream) write(b []byte) *streamErr {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(b) > 0 {
		line, rest, nl := bytes.Cut(b, []byte{'\n'})
		b = rest
		if l.cut {
			l.dropped += int64(len(line))
		} else {
			room := l.lim.LogLineText - len(l.buf)
			if len(line) > room {
				l.dropped += int64(len(line) - room)
				l.buf = append(l.buf, line[:room]...)
				l.emit()
				l.cut = true
			} else {
				l.buf = append(l.buf, line...)
			}
		}
		if nl {
			if !l.cut {
				l.emit()
			}
			l.cut = false
		}
	}
	return nil
}

func (l *logStream) flush() *streamErr { return nil }

// emit writes the unfinished line out, or drops it past the line bound.
func (l *logStream) emit() {
	line := bytes.TrimSuffix(l.buf, []byte{'\r'})
	l.buf = l.buf[:0]
	if l.lines >= l.lim.LogLines {
		l.dropped += int64(len(line))
		return
	}
	l.lines++
	if l.w != nil {
		_, _ = l.w.Write(line)
	}
}

// flushPartial writes out an unfinished line (at Close).
func (l *logStream) flushPartial() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.buf) > 0 {
		l.emit()
	}
}
