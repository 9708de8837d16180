package instrument

import "errors"

// LEB128 decoding is strict (WebAssembly spec §5.2.2): at most
// ceil(N/7) bytes for an N-bit integer, and the unused bits of the last
// byte must be zero (unsigned) or a sign extension (signed). Every
// function takes the whole buffer and an offset and returns the offset
// after the integer; it never reads past len(b).

var (
	errEOF      = errors.New("unexpected end of input")
	errOverflow = errors.New("integer representation too long or out of range")
)

// u32 decodes an unsigned 32-bit LEB128 integer at b[i:].
func u32(b []byte, i int) (uint32, int, error) {
	var v uint32
	for k := 0; k < 5; k++ {
		if i >= len(b) {
			return 0, i, errEOF
		}
		c := b[i]
		i++
		if k == 4 && c&0xf0 != 0 {
			return 0, i, errOverflow
		}
		v |= uint32(c&0x7f) << (7 * k)
		if c&0x80 == 0 {
			return v, i, nil
		}
	}
	return 0, i, errOverflow // unreachable: k == 4 returns above
}

// skipSigned skips a signed LEB128 integer of bits bits at b[i:]. last is
// the mask of the bits of the final (maxLen-th) byte that must all equal
// its sign bit, the sign bit included.
func skipSigned(b []byte, i, maxLen int, last byte) (int, error) {
	for k := 0; k < maxLen; k++ {
		if i >= len(b) {
			return i, errEOF
		}
		c := b[i]
		i++
		if k == maxLen-1 {
			if c&0x80 != 0 {
				return i, errOverflow
			}
			if s := c & last; s != 0 && s != last {
				return i, errOverflow
			}
			return i, nil
		}
		if c&0x80 == 0 {
			return i, nil
		}
	}
	return i, errOverflow
}

// skipS32 skips a signed 32-bit LEB128 integer (the last byte carries bits
// 28–31; bit 3 is the sign, bits 4–6 must copy it).
func skipS32(b []byte, i int) (int, error) { return skipSigned(b, i, 5, 0x78) }

// skipS64 skips a signed 64-bit LEB128 integer (the tenth byte carries bit
// 63 and six copies of it).
func skipS64(b []byte, i int) (int, error) { return skipSigned(b, i, 10, 0x7f) }

// s33 decodes a signed 33-bit LEB128 integer (block types and heap
// types): the fifth byte carries bits 28–32, bit 4 is the sign and bits
// 5–6 must copy it.
func s33(b []byte, i int) (int64, int, error) {
	end, err := skipSigned(b, i, 5, 0x70)
	if err != nil {
		return 0, end, err
	}
	var v int64
	for k, c := range b[i:end] {
		v |= int64(c&0x7f) << (7 * k)
	}
	shift := 64 - 7*(end-i) // skipSigned has checked that the bits above 32 copy bit 32
	return v << shift >> shift, end, nil
}

// appendU32 appends v as minimal unsigned LEB128.
func appendU32(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendS32 appends v as minimal signed LEB128.
func appendS32(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// lenU32 is the size of v as minimal unsigned LEB128.
func lenU32(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// lenS32 is the size of v as minimal signed LEB128.
func lenS32(v int32) int {
	n := 1
	for !(v >= -64 && v < 64) {
		v >>= 7
		n++
	}
	return n
}
