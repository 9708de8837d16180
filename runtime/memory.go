package runtime

import (
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

// limitedMemory backs one instance's linear memory with a Go slice that
// refuses to grow past limit: memory.grow then returns -1, as at a runtime
// limit, and the guest decides (C malloc returns NULL, Go dies with "out of
// memory"). It is the per-plugin memory limit (see Engine). It remembers a
// refusal so that the trap that usually follows is classified KindMemory.
//
// It is also where the scheduler gets control (see sched.go): a grow
// while the instance's yield switch reads 2 is the instrumentation's probe,
// not the guest's; it is handed to task and refused without a trace. And
// it enforces the maximum that instrumentation removed from the module's
// memory declaration (declMax).
type limitedMemory struct {
	buf     []byte
	limit   uint64
	declMax int64 // the module's declared maximum in bytes; -1 for none
	refused bool

	yield api.MutableGlobal // the yield switch; nil without scheduling
	task  *task

	// mmap selects a mapping of limit bytes outside the Go heap, made on
	// the first allocation, that buf then grows inside without a copy
	// (pages cost memory once touched): a growing memory never holds
	// twice its size, and the garbage collector neither scans it nor
	// waits for its copies. Only for instrumented modules: Free unmaps it,
	// so no code may touch the memory after the module is closed, and
	// wazero's own close on a deadline (the fallback runtime) frees the
	// memory of a guest that is still running.
	mmap   bool
	mapped []byte

	acct *atomic.Int64 // the pool's total of live linear memory; may be nil

	// comp is the allocator of a component instance this memory is one
	// of: limit bounds the sum of its memories (total), and its probes
	// may come through any of its core instances' yield switches.
	comp *componentMemory
}

// account adds the change from the current size to n bytes to acct.
func (m *limitedMemory) account(n int) {
	if m.acct != nil {
		m.acct.Add(int64(n - len(m.buf)))
	}
	if m.comp != nil {
		m.comp.total = m.comp.total + uint64(n) - uint64(len(m.buf))
	}
}

// Allocate returns m itself: each instantiation gets its own limitedMemory
// as its allocator.
func (m *limitedMemory) Allocate(_, _ uint64) experimental.LinearMemory { return m }

// Reallocate grows the memory to size bytes, keeping its contents; it
// returns nil past the limit. The initial allocation (the module's declared
// minimum, checked against the limit by NewPool) always succeeds, since
// wazero cannot handle a failure there.
func (m *limitedMemory) Reallocate(size uint64) []byte {
	if m.comp != nil {
		if m.comp.probe() {
			return nil
		}
	} else if m.yield != nil && m.yield.Get() == 2 {
		m.yield.Set(1)
		m.task.probe()
		return nil
	}
	if m.buf != nil && m.declMax >= 0 && size > uint64(m.declMax) {
		return nil // the guest's own maximum: memory.grow fails as declared
	}
	if m.buf != nil && m.over(size) {
		m.refused = true
		return nil
	}
	if m.mmap && m.reserve(size) {
		m.account(int(size))
		m.buf = m.mapped[:size]
		return m.buf
	}
	m.account(int(size))
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

// over reports whether growing to size bytes takes the memory past its
// limit (a component's memories: their sum).
func (m *limitedMemory) over(size uint64) bool {
	if m.comp != nil {
		return m.comp.total-uint64(len(m.buf))+size > m.limit
	}
	return size > m.limit
}

// reserve makes sure the mapping of at least size bytes exists; false if
// it cannot be made (the caller falls back to the Go heap).
func (m *limitedMemory) reserve(size uint64) bool {
	if m.mapped != nil {
		return uint64(len(m.mapped)) >= size
	}
	if m.buf != nil || !mmapSupported {
		return false // already on the Go heap
	}
	b, err := mmapReserve(max(m.limit, size))
	if err != nil {
		m.mmap = false
		return false
	}
	m.mapped = b
	return true
}

// Free drops the backing slice for the garbage collector, or unmaps it.
func (m *limitedMemory) Free() {
	m.account(0)
	if m.mapped != nil {
		mmapRelease(m.mapped)
		m.mapped = nil
	}
	m.buf = nil
}
