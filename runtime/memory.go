package runtime

import "github.com/tetratelabs/wazero/experimental"

// limitedMemory backs one instance's linear memory with a Go slice that
// refuses to grow past limit: memory.grow then returns -1, as at a runtime
// limit, and the guest decides (C malloc returns NULL, Go dies with "out of
// memory"). It is the per-plugin memory limit (see Engine). It remembers a
// refusal so that the trap that usually follows is classified KindMemory.
type limitedMemory struct {
	buf     []byte
	limit   uint64
	refused bool
}

// Allocate returns m itself: each instantiation gets its own limitedMemory
// as its allocator.
func (m *limitedMemory) Allocate(_, _ uint64) experimental.LinearMemory { return m }

// Reallocate grows the memory to size bytes, keeping its contents; it
// returns nil past the limit. The initial allocation (the module's declared
// minimum, checked against the limit by NewPool) always succeeds, since
// wazero cannot handle a failure there.
func (m *limitedMemory) Reallocate(size uint64) []byte {
	if m.buf != nil && size > m.limit {
		m.refused = true
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		// Bytes past len were zeroed by make and never exposed: wasm
		// memory does not shrink.
		m.buf = m.buf[:size]
		return m.buf
	}
	// Grow by at least a quarter to amortise copying, never past the limit.
	c := max(size, uint64(cap(m.buf))+uint64(cap(m.buf))/4)
	if c > m.limit && size <= m.limit {
		c = m.limit
	}
	nb := make([]byte, size, c)
	copy(nb, m.buf)
	m.buf = nb
	return m.buf
}

// Free drops the backing slice for the garbage collector.
func (m *limitedMemory) Free() { m.buf = nil }
