package instrument

// check is the code inserted at function entries and loop headers (see
// the package doc): prefix, the charge as an i32.const immediate, suffix.
type check struct {
	prefix, suffix []byte
}

func newCheck(flag, fuel uint32) check {
	p := appendU32([]byte{0x23}, fuel) // global.get $fuel
	p = append(p, 0x41)                // i32.const <charge>
	s := []byte{0x6b, 0x24}            // i32.sub, global.set $fuel
	s = appendU32(s, fuel)
	s = appendU32(append(s, 0x23), fuel)        // global.get $fuel
	s = append(s, 0x41, 0x00, 0x48)             // i32.const 0, i32.lt_s
	s = append(s, 0x04, 0x40, 0x41)             // if, i32.const Refill
	s = appendS32(s, Refill)                    //
	s = appendU32(append(s, 0x24), fuel)        // global.set $fuel
	s = append(s, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow 0, drop
	s = appendU32(append(s, 0x23), flag)        // global.get $flag
	s = append(s, 0x04, 0x40, 0x00, 0x0b)       // if, unreachable, end
	s = append(s, 0x0b)                         // end
	return check{prefix: p, suffix: s}
}

// len is the size of the check with the given charge.
func (c check) len(charge int32) int {
	return len(c.prefix) + lenS32(charge) + len(c.suffix)
}

// append appends the check with the given charge.
func (c check) append(out []byte, charge int32) []byte {
	out = append(out, c.prefix...)
	out = appendS32(out, charge)
	return append(out, c.suffix...)
}
