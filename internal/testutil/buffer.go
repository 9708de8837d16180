// Package testutil holds what the tests of several packages share. Only
// tests import it.
package testutil

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent use: a test collects in it
// what a server or a guest writes (a log, stderr) while reading it. The
// zero value is empty and ready.
type Buffer struct {
	// Max, if positive, bounds the bytes kept: the rest is dropped (Write
	// still reports it written), so a flood cannot exhaust the test.
	Max int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p (up to Max) and reports len(p) written.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if b.Max > 0 {
		p = p[:min(n, max(0, b.Max-b.b.Len()))]
	}
	b.b.Write(p)
	return n, nil
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
