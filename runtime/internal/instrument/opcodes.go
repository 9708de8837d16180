package instrument

// Immediate kinds of single-byte opcodes.
const (
	kBad      = iota // not an instruction of api.CoreFeaturesV2
	kNone            // no immediate
	kBlock           // block, if: block type
	kLoop            // loop: block type, and a check after it
	kU32             // one u32 index
	kU32U32          // two u32 (call_indirect)
	kMemarg          // loads and stores
	kBrTable         // vec(label) label
	kSelectT         // select t*: vec(valtype)
	kI32             // i32.const: s32
	kI64             // i64.const: s64
	kF32             // f32.const: 4 bytes
	kF64             // f64.const: 8 bytes
	kHeapType        // ref.null: heap type (s33)
	kMisc            // 0xFC prefix
	kSIMD            // 0xFD prefix
	kEnd             // end: closes a block, if, loop or the body
)

// opKinds maps each opcode byte to its immediates.
var opKinds = func() (t [256]uint8) {
	set := func(lo, hi byte, k uint8) {
		for op := int(lo); op <= int(hi); op++ {
			t[op] = k
		}
	}
	set(0x00, 0x01, kNone) // unreachable, nop
	t[0x02] = kBlock       // block
	t[0x03] = kLoop        // loop
	t[0x04] = kBlock       // if
	t[0x05] = kNone        // else
	t[0x0b] = kEnd         // end
	set(0x0c, 0x0d, kU32)  // br, br_if
	t[0x0e] = kBrTable     // br_table
	t[0x0f] = kNone        // return
	t[0x10] = kU32         // call
	t[0x11] = kU32U32      // call_indirect: type index, table index
	set(0x1a, 0x1b, kNone) // drop, select
	t[0x1c] = kSelectT     // select t*
	set(0x20, 0x24, kU32)  // local.get/set/tee, global.get/set
	set(0x25, 0x26, kU32)  // table.get, table.set
	set(0x28, 0x3e, kMemarg)
	set(0x3f, 0x40, kU32) // memory.size, memory.grow: memory index (0x00)
	t[0x41] = kI32
	t[0x42] = kI64
	t[0x43] = kF32
	t[0x44] = kF64
	set(0x45, 0xc4, kNone) // numeric, including sign extension (0xc0–0xc4)
	t[0xd0] = kHeapType    // ref.null
	t[0xd1] = kNone        // ref.is_null
	t[0xd2] = kU32         // ref.func
	t[0xfc] = kMisc
	t[0xfd] = kSIMD
	return t
}()

// Immediate kinds of SIMD (0xFD) opcodes.
const (
	simdNone       = iota + 1
	simdMemarg     // v128.load*, v128.store, load*_splat, load*_zero
	simdBytes16    // v128.const, i8x16.shuffle
	simdLane       // extract_lane, replace_lane
	simdMemargLane // v128.load*_lane, v128.store*_lane
)

// simdKinds maps each SIMD opcode of the final SIMD proposal (as in the
// WebAssembly 2.0 spec, §5.4.8) to its immediates; kBad (0) marks the
// unassigned numbers.
var simdKinds = func() (t [256]uint8) {
	set := func(lo, hi int, k uint8) {
		for op := lo; op <= hi; op++ {
			t[op] = k
		}
	}
	set(0x00, 0x0b, simdMemarg)     // v128.load … v128.load64_splat, v128.store
	set(0x0c, 0x0d, simdBytes16)    // v128.const, i8x16.shuffle
	set(0x0e, 0x14, simdNone)       // i8x16.swizzle, splats
	set(0x15, 0x22, simdLane)       // extract_lane / replace_lane
	set(0x23, 0x53, simdNone)       // comparisons, v128 bitwise, v128.any_true
	set(0x54, 0x5b, simdMemargLane) // v128.load8_lane … v128.store64_lane
	set(0x5c, 0x5d, simdMemarg)     // v128.load32_zero, v128.load64_zero
	set(0x5e, 0xff, simdNone)       // arithmetic and conversions
	for _, op := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4,
		0xbb, 0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		t[op] = kBad // unassigned
	}
	return t
}()
