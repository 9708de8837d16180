// Package extism is the memory side of the Extism kernel, natively in Go:
// the blocks that an Extism plugin allocates, loads and stores through
// extism:host/env (alloc, free, length, load_u8/u64, store_u8/u64), the
// call's input, its error, and the plugin's vars. The host functions that
// wire it to wazero are in package runtime; this package knows nothing of
// Wasm.
//
// The kernel's memory is a Go byte slice that the guest can reach only
// through these functions: it is never part of the guest's linear memory.
// A handle is an offset into it; 0 is null. Every function checks its
// handle against the live blocks, and a hostile handle (out of range,
// freed, inside no block, a length running past its block, alloc(2^63))
// gets the kernel's documented answer, 0 or a no-op, and can never read or
// write outside the block it names. The memory is bounded by Limit bytes.
package extism

import (
	"encoding/binary"
	"slices"
)

// base is the handle of the first block. It is non-zero (0 is null) and
// 8-aligned, as are all blocks, because PDKs load and store in 8-byte words
// from a block's start.
const base = 8

// DefaultMaxVarBytes bounds the vars of one kernel (keys and values) when
// MaxVarBytes is zero.
const DefaultMaxVarBytes = 1 << 20

// keepArena is the arena capacity kept across Reset; a larger arena is
// released.
const keepArena = 1 << 20

// The arena is made of chunks that never move: a block lies in one
// chunk, and a chunk that is full is followed by a new one, so that the
// arena never copies itself as it grows (a slice grown by append would
// hold its old and new copies at once, twice the limit and more). A
// chunk is as large as the arena so far, from minChunk up to maxChunk
// bytes; a larger block gets a chunk of its own size.
const (
	minChunk = 4 << 10
	maxChunk = 1 << 20
)

// Kernel is the kernel state of one plugin instance. It is used by one
// call at a time.
type Kernel struct {
	// Limit bounds the bytes of the arena (its chunks, live and freed
	// blocks of the current call, and the blocks' records); an alloc past
	// it returns 0.
	Limit uint64
	// MaxVarBytes bounds the vars (keys plus values); a var_set past it
	// is a no-op. Zero means DefaultMaxVarBytes.
	MaxVarBytes int

	chunks [][]byte // the arena; each chunk's length is what its blocks use
	full   uint64   // the capacities of every chunk but the last
	blocks []block  // sorted by off
	frees  []int    // indices of some freed blocks, for reuse
	last   int      // index of the block found last (loads run through a block)
	input  []byte
	err    []byte
	hasErr bool

	vars     map[string][]byte
	varBytes int
}

type block struct {
	off   uint64 // handle
	cap   uint64 // bytes reserved (8-aligned)
	n     uint64 // length asked for
	pos   uint64 // of its bytes in its chunk
	chunk int32
	free  bool
}

// Reset frees every block and sets the input and error of a new call;
// vars are kept. input is not copied: it must stay unchanged until the
// next Reset.
func (k *Kernel) Reset(input []byte) {
	if len(k.chunks) > 0 {
		first := k.chunks[0]
		clear(k.chunks)
		k.chunks = k.chunks[:0]
		if cap(first) <= keepArena {
			k.chunks = append(k.chunks, first[:0])
		}
	}
	k.full = 0
	if cap(k.blocks) > keepArena/blockCost {
		k.blocks = nil
	}
	k.blocks = k.blocks[:0]
	k.frees = k.frees[:0]
	k.last = 0
	k.input = input
	k.err = k.err[:0]
	k.hasErr = false
}

// blockCost is what one block costs beyond its bytes (its record), so
// that many tiny blocks are bounded by Limit too.
const blockCost = 48

// maxBlock bounds one block whatever Limit says (no overflow below it).
const maxBlock = 1 << 40

// maxFrees bounds the freed blocks remembered for reuse.
const maxFrees = 64

// Used returns the bytes the arena costs: its chunks (the last one up to
// what its blocks use: the rest of it is what the next blocks take) and
// its blocks' records.
func (k *Kernel) Used() uint64 {
	u := k.full + blockCost*uint64(len(k.blocks))
	if n := len(k.chunks); n > 0 {
		u += uint64(len(k.chunks[n-1]))
	}
	return u
}

// Alloc allocates n bytes (zeroed) and returns their handle, or 0 if n is
// 0 or the arena would pass Limit. A freed block that fits is reused.
func (k *Kernel) Alloc(n uint64) uint64 {
	if n == 0 || n > k.Limit || n > maxBlock {
		return 0
	}
	c := (n + 7) &^ 7
	for j, i := range k.frees {
		b := &k.blocks[i]
		if b.cap >= c && b.cap <= 2*c {
			b.free, b.n = false, n
			clear(k.bytes(b))
			k.frees = slices.Delete(k.frees, j, j+1)
			return b.off
		}
	}
	used := k.Used()
	if c+blockCost > k.Limit || used > k.Limit-c-blockCost {
		return 0
	}
	last := len(k.chunks) - 1
	if last < 0 || uint64(cap(k.chunks[last])-len(k.chunks[last])) < c {
		// A new chunk: the rest of the last one is spent (and counted).
		tail := uint64(0)
		if last >= 0 {
			tail = uint64(cap(k.chunks[last]) - len(k.chunks[last]))
		}
		if tail > k.Limit-c-blockCost-used {
			return 0
		}
		size := min(max(k.full+k.capOfLast(), minChunk), maxChunk)
		size = max(c, min(size, (k.Limit-used-tail-blockCost)&^7))
		if last >= 0 {
			k.full += uint64(cap(k.chunks[last]))
		}
		k.chunks = append(k.chunks, make([]byte, 0, size))
		last++
	}
	ch := k.chunks[last]
	pos := uint64(len(ch))
	k.chunks[last] = ch[:pos+c]
	clear(k.chunks[last][pos:])
	off := base + k.full + pos
	k.blocks = append(k.blocks, block{off: off, cap: c, n: n, pos: pos, chunk: int32(last)})
	return off
}

// capOfLast is the capacity of the last chunk, 0 without one.
func (k *Kernel) capOfLast() uint64 {
	if n := len(k.chunks); n > 0 {
		return uint64(cap(k.chunks[n-1]))
	}
	return 0
}

// AllocBytes allocates a block holding a copy of b and returns its handle,
// or 0 if b is empty or the arena is full.
func (k *Kernel) AllocBytes(b []byte) uint64 {
	h := k.Alloc(uint64(len(b)))
	if h != 0 {
		copy(k.Bytes(h), b)
	}
	return h
}

// find returns the live block containing handle h, or nil.
func (k *Kernel) find(h uint64) *block {
	if k.last < len(k.blocks) {
		if b := &k.blocks[k.last]; h >= b.off && h-b.off < b.n && !b.free {
			return b
		}
	}
	i, found := slices.BinarySearchFunc(k.blocks, h, func(b block, h uint64) int {
		switch {
		case b.off > h:
			return 1
		case b.off < h:
			return -1
		}
		return 0
	})
	if !found {
		i-- // the block starting before h, if any
	}
	if i < 0 || i >= len(k.blocks) {
		return nil
	}
	b := &k.blocks[i]
	if b.free || h-b.off >= b.n {
		return nil
	}
	k.last = i
	return b
}

// start returns the live block starting at handle h, or nil.
func (k *Kernel) start(h uint64) *block {
	b := k.find(h)
	if b == nil || b.off != h {
		return nil
	}
	return b
}

func (k *Kernel) bytes(b *block) []byte {
	return k.chunks[b.chunk][b.pos : b.pos+b.n : b.pos+b.n]
}

// at returns the n bytes at h in block b (which contains h and them).
func (k *Kernel) at(b *block, h, n uint64) []byte {
	i := b.pos + (h - b.off)
	return k.chunks[b.chunk][i : i+n : i+n]
}

// Free frees the block starting at h; any other handle is a no-op.
func (k *Kernel) Free(h uint64) {
	if b := k.start(h); b != nil {
		b.free = true
		if len(k.frees) < maxFrees {
			k.frees = append(k.frees, k.last)
		}
	}
}

// Length returns the length of the block starting at h, or 0.
func (k *Kernel) Length(h uint64) uint64 {
	if b := k.start(h); b != nil {
		return b.n
	}
	return 0
}

// Bytes returns the bytes of the block starting at h (nil if none). They
// alias the arena (which never moves): valid until the next Reset.
func (k *Kernel) Bytes(h uint64) []byte {
	if b := k.start(h); b != nil {
		return k.bytes(b)
	}
	return nil
}

// Range returns n bytes from h, which must lie in one live block (nil
// otherwise; an empty slice for n 0 inside a block). They alias the
// arena (which never moves): valid until the next Reset.
func (k *Kernel) Range(h, n uint64) []byte {
	b := k.find(h)
	if b == nil || n > b.n-(h-b.off) {
		return nil
	}
	return k.at(b, h, n)
}

// LoadU8 returns the byte at h, or 0 if h is in no live block.
func (k *Kernel) LoadU8(h uint64) uint8 {
	if b := k.find(h); b != nil {
		return k.at(b, h, 1)[0]
	}
	return 0
}

// LoadU64 returns the little-endian word at h, or 0 unless its 8 bytes lie
// in one live block.
func (k *Kernel) LoadU64(h uint64) uint64 {
	if w := k.Range(h, 8); w != nil {
		return binary.LittleEndian.Uint64(w)
	}
	return 0
}

// StoreU8 stores v at h; a no-op if h is in no live block.
func (k *Kernel) StoreU8(h uint64, v uint8) {
	if b := k.find(h); b != nil {
		k.at(b, h, 1)[0] = v
	}
}

// StoreU64 stores v little-endian at h; a no-op unless its 8 bytes lie in
// one live block.
func (k *Kernel) StoreU64(h uint64, v uint64) {
	if w := k.Range(h, 8); w != nil {
		binary.LittleEndian.PutUint64(w, v)
	}
}

// InputLength returns the length of the call's input.
func (k *Kernel) InputLength() uint64 { return uint64(len(k.input)) }

// Input returns the call's input.
func (k *Kernel) Input() []byte { return k.input }

// InputLoadU8 returns the input byte at offset i, or 0 past the end.
func (k *Kernel) InputLoadU8(i uint64) uint8 {
	if i < uint64(len(k.input)) {
		return k.input[i]
	}
	return 0
}

// InputLoadU64 returns the little-endian input word at offset i; bytes
// past the end read as 0.
func (k *Kernel) InputLoadU64(i uint64) uint64 {
	n := uint64(len(k.input))
	if i >= n {
		return 0
	}
	if n-i >= 8 {
		return binary.LittleEndian.Uint64(k.input[i:])
	}
	var w [8]byte
	copy(w[:], k.input[i:])
	return binary.LittleEndian.Uint64(w[:])
}

// SetError sets the call's error to a copy of the block at h, cut to max
// bytes; h 0 (or no block) clears it.
func (k *Kernel) SetError(h uint64, max int) {
	b := k.Bytes(h)
	if b == nil {
		k.err, k.hasErr = k.err[:0], false
		return
	}
	if len(b) > max {
		b = b[:max]
	}
	k.err, k.hasErr = append(k.err[:0], b...), true
}

// Error returns the call's error and whether one is set.
func (k *Kernel) Error() ([]byte, bool) { return k.err, k.hasErr }

// Var returns the value of var key, or nil.
func (k *Kernel) Var(key []byte) []byte { return k.vars[string(key)] }

// SetVar sets var key to a copy of value; a nil value deletes it. It
// reports false (and changes nothing) if the vars would pass MaxVarBytes.
func (k *Kernel) SetVar(key, value []byte) bool {
	max := k.MaxVarBytes
	if max <= 0 {
		max = DefaultMaxVarBytes
	}
	old, had := k.vars[string(key)]
	size := k.varBytes
	if had {
		size -= len(key) + len(old)
	}
	if value == nil {
		if had {
			delete(k.vars, string(key))
			k.varBytes = size
		}
		return true
	}
	if size+len(key)+len(value) > max {
		return false
	}
	if k.vars == nil {
		k.vars = map[string][]byte{}
	}
	k.vars[string(key)] = append([]byte(nil), value...)
	k.varBytes = size + len(key) + len(value)
	return true
}

// VarBytes returns the bytes the vars hold (keys plus values).
func (k *Kernel) VarBytes() int { return k.varBytes }
