package instrument

import "math"

// check is the code inserted at function entries and loop headers (see
// the package doc), with a placeholder for the charge: a five-byte
// i32.const at offset charge, patched once the size of the code up to the
// next check is known.
type check struct {
	code   []byte
	charge int
}

func newCheck(flag, fuel uint32) check {
	c := appendU32([]byte{0x23}, fuel) // global.get $fuel
	c = append(c, 0x41)                // i32.const <charge>
	charge := len(c)
	c = append(c, 0, 0, 0, 0, 0)
	c = append(c, 0x6b, 0x24)            // i32.sub, global.set
	c = appendU32(c, fuel)               // $fuel
	c = appendU32(append(c, 0x23), fuel) // global.get $fuel
	c = append(c, 0x41, 0x00, 0x48)      // i32.const 0, i32.lt_s
	c = append(c, 0x04, 0x40, 0x41)      // if, i32.const Refill
	c = appendS32(c, Refill)
	c = appendU32(append(c, 0x24), fuel)        // global.set $fuel
	c = append(c, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow 0, drop
	c = appendU32(append(c, 0x23), flag)        // global.get $flag
	c = append(c, 0x04, 0x40, 0x00, 0x0b)       // if, unreachable, end
	c = append(c, 0x0b)                         // end
	putS32Padded(c[charge:], 1)
	return check{code: c, charge: charge}
}

// region tracks the check whose charge is still open: it covers the
// original code from start up to the next check or the end of the body.
type region struct {
	at    int // offset of the charge in the output, -1 if none
	start int // offset in the original body
}

// close patches the open charge with the size of the code since start.
func (r *region) close(dst []byte, end int) {
	if r.at < 0 {
		return
	}
	n := max(end-r.start, 1)
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	putS32Padded(dst[r.at:], int32(n))
	r.at = -1
}

// emit appends the check and opens its charge at original offset start.
func (r *region) emit(dst []byte, c check, start int) []byte {
	r.close(dst, start)
	r.at = len(dst) + c.charge
	r.start = start
	return append(dst, c.code...)
}
