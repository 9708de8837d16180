package mcp

import (
	"bytes"
	"io"
	"sync"
	"testing"
)

// slowWriter blocks every Write until released.
type slowWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
	writes  int
}

func (w *slowWriter) Write(p []byte) (int, error) {
	<-w.release
	w.mu.Lock()
	defer w.mu.Unlock()
	w.writes++
	return w.buf.Write(p)
}

func TestLineWriterCoalescesAndKeepsOrder(t *testing.T) {
	sw := &slowWriter{release: make(chan struct{})}
	lw := newLineWriter(sw, 1<<20)
	first := make(chan struct{})
	go func() {
		lw.writeMsg([]byte("0"))
		close(first)
	}()
	// While the first Write is blocked, the others queue behind it.
	for !lw.flushingNow() {
	}
	for i := 1; i <= 100; i++ {
		if err := lw.writeMsg([]byte{byte('0' + i%10)}); err != nil {
			t.Fatal(err)
		}
	}
	close(sw.release)
	<-first
	var want bytes.Buffer
	for i := 0; i <= 100; i++ {
		want.WriteByte(byte('0' + i%10))
		want.WriteByte('\n')
	}
	if sw.buf.String() != want.String() {
		t.Fatalf("output out of order:\n%q", sw.buf.String())
	}
	if sw.writes != 2 {
		t.Fatalf("%d writes, want 2 (the first, then everything queued)", sw.writes)
	}
	lw.close()
	if err := lw.writeMsg([]byte("x")); err == nil {
		t.Fatal("write after close succeeded")
	}
}

func TestLineWriterBackpressure(t *testing.T) {
	pr, pw := io.Pipe()
	lw := newLineWriter(pw, 1<<20)
	big := bytes.Repeat([]byte("x"), 1<<20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20 { // 20 MiB > maxQueued: writers must wait for the reader
			if lw.writeMsg(big) != nil {
				return
			}
		}
	}()
	n, _ := io.Copy(io.Discard, io.LimitReader(pr, 20*(1<<20+1)))
	<-done
	if n != 20*(1<<20+1) {
		t.Fatalf("read %d bytes", n)
	}
}

// flushingNow reports whether a Write is in progress (for tests).
func (lw *lineWriter) flushingNow() bool {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.flushing
}
