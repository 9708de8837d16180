package instrument

// Bulk memory and table instructions run in time proportional to their
// length operand, not their size: a 15-byte loop around memory.fill of
// 16 MiB would run thousands of times per fuel period, and native code
// cannot be preempted, so it would hold up the deadline and every
// stop-the-world phase of the Go runtime for seconds. Before each of them
// (memory.init, memory.copy, memory.fill, table.init, table.copy,
// table.grow, table.fill) Instrument charges the fuel with the length
// shifted right (the i32 on top of the stack, kept there):
//
//	local.tee $scratch      ;; the length stays on the stack
//	global.get $fuel
//	local.get $scratch
//	i32.const <shift>
//	i32.shr_u
//	i32.sub
//	<the check's suffix>    ;; global.set $fuel, and the slow path if negative
//
// The subtraction cannot wrap: the fuel before it is at most Refill and
// above -2^30 (a cut before the instruction may have taken it below zero
// without testing it, by at most the rest of its loop's body, under 2^30
// for a function body under 1 GiB), and every shift is at least 2, so the
// shifted length is below 2^30. A shift of 1 wraps: after a cut that left
// the fuel at -2, table.grow by 2^32-1 charged 2^31-1 and left about 2^31
// of fuel, 8,192 periods without an exit (TestBulkAfterCut). The shifts
// were measured (see BenchmarkBulk): MemoryShift makes Refill fuel about
// 2 MiB of memory work, a few hundred microseconds at most; TableShift
// makes it 256 Ki table entries.
const (
	// MemoryShift: one unit of fuel pays for 2^MemoryShift bytes of
	// memory.init, memory.copy or memory.fill.
	MemoryShift = 5
	// TableShift: one unit of fuel pays for 2^TableShift entries of
	// table.init, table.copy, table.grow or table.fill.
	TableShift = 2
)

// bulkShift is the shift of each 0xFC sub-opcode charged by length (0:
// not charged).
var bulkShift = [18]uint8{
	8: MemoryShift, 10: MemoryShift, 11: MemoryShift, // memory.init, memory.copy, memory.fill
	12: TableShift, 14: TableShift, 15: TableShift, 17: TableShift, // table.init, table.copy, table.grow, table.fill
}

// appendBulk appends the charge inserted before a bulk instruction, built
// from the check c: its prefix ends with the i32.const of the charge,
// replaced by the shifted length, and its suffix starts with i32.sub.
func appendBulk(out []byte, c check, scratch uint32, shift uint8) []byte {
	out = appendU32(append(out, 0x22), scratch)      // local.tee $scratch
	out = append(out, c.prefix[:len(c.prefix)-1]...) // global.get $fuel
	out = appendU32(append(out, 0x20), scratch)      // local.get $scratch
	out = append(out, 0x41, shift, 0x76)             // i32.const shift, i32.shr_u
	return append(out, c.suffix...)                  // i32.sub, …
}

// bulkLen is the size of appendBulk's output.
func bulkLen(c check, scratch uint32) int {
	return 2*(1+lenU32(scratch)) + len(c.prefix) - 1 + 3 + len(c.suffix)
}
