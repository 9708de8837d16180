package instrument

// check is the code inserted at function entries and loop headers (see
// the package doc): prefix, the charge as an i32.const immediate, suffix.
// The slow path taken once per Refill is out of line, in an added
// function (slow is its body): inline, its blocks multiplied those of
// every loop, and wazero's compile time grows with the square of the
// blocks of nested loops (see BenchmarkCompileNested).
type check struct {
	prefix, suffix []byte
	slow           []byte // the body of the slow path's function, size excluded
	deep           []byte // the suffix of a deep loop's check (see deepCheck)
	charged        []byte // the suffix of a cut's charge (see plainCharge)
	charge         []byte // the body of the charging function, size excluded
	stack          uint32 // the stack budget's global (see stack.go)
}

// newCheck returns the check for the given globals; slowFn is the index
// of the slow path's function and slowFn+1 that of the charging function
// (see deepCheck).
func newCheck(flag, fuel, yield, stack, slowFn uint32) check {
	p := appendU32([]byte{0x23}, fuel) // global.get $fuel
	p = append(p, 0x41)                // i32.const <charge>
	s := []byte{0x6b, 0x24}            // i32.sub, global.set $fuel
	s = appendU32(s, fuel)
	charged := s
	s = appendU32(append(s, 0x23), fuel)               // global.get $fuel
	s = append(s, 0x41, 0x00, 0x48)                    // i32.const 0, i32.lt_s
	s = appendU32(append(s, 0x04, 0x40, 0x10), slowFn) // if, call $slow
	s = append(s, 0x0b)                                // end

	b := []byte{0x00, 0x41}                     // no locals; i32.const Refill
	b = appendS32(b, Refill)                    //
	b = appendU32(append(b, 0x24), fuel)        // global.set $fuel
	b = appendU32(append(b, 0x23), yield)       // global.get $yield
	b = append(b, 0x04, 0x40, 0x41, 0x02, 0x24) // if, i32.const 2, global.set $yield
	b = appendU32(b, yield)                     //
	b = append(b, 0x41, 0x01, 0x40, 0x00, 0x1a) // i32.const 1, memory.grow 0, drop
	b = append(b, 0x05)                         // else
	b = append(b, 0x41, 0x00, 0x40, 0x00, 0x1a) // i32.const 0, memory.grow 0, drop
	b = append(b, 0x0b)                         // end
	b = appendU32(append(b, 0x23), flag)        // global.get $flag
	b = append(b, 0x04, 0x40, 0x00, 0x0b)       // if, unreachable, end
	b = appendU32(append(b, 0x23), stack)       // global.get $stack
	b = append(b, 0x41, 0x00, 0x48)             // i32.const 0, i32.lt_s
	b = append(b, 0x04, 0x40, 0x00, 0x0b)       // if, unreachable, end
	b = append(b, 0x0b)                         // end of the function
	// The charging function, (param $charge i32): the check of deep loops.
	cf := []byte{0x00}                        // no locals
	cf = appendU32(append(cf, 0x23), fuel)    // global.get $fuel
	cf = append(cf, 0x20, 0x00)               // local.get $charge
	cf = append(cf, s...)                     // i32.sub, …, end
	cf = append(cf, 0x0b)                     // end of the function
	deep := appendU32([]byte{0x10}, slowFn+1) // call $charge
	return check{prefix: p, suffix: s, slow: b, deep: deep, charged: charged, charge: cf, stack: stack}
}

// plainCharge returns the charge of a loop's cut (see scanBody): it takes
// the fuel down and does not test it, which the next check does (the
// loop's, at its next iteration, or a callee's at its entry).
//
//	global.get $fuel
//	i32.const <charge>
//	i32.sub
//	global.set $fuel
func (c check) plainCharge() check {
	return check{prefix: c.prefix, suffix: c.charged}
}

// DeepLoops is the loop depth past which a loop's check is a call of the
// charging function (i32.const <charge>, call $charge) instead of inline
// code: inline, each check splits the loop into more blocks, and wazero's
// compile time grows with the square of the blocks of nested loops, so
// loops nested thousands deep took minutes to compile. A call per
// iteration costs a few nanoseconds, in loops that deep only.
const DeepLoops = 8

// deepCheck returns the check of a loop nested deeper than DeepLoops.
func (c check) deepCheck() check {
	return check{prefix: []byte{0x41}, suffix: c.deep}
}

// local returns the check of a loop that counts down the i32 local idx
// (the function's budget, zero on entry) in a register and, each time it
// goes negative, adds Budget to it and charges the fuel Budget:
//
//	local.get $budget
//	i32.const <charge>
//	i32.sub
//	local.tee $budget
//	i32.const 0
//	i32.lt_s
//	if
//	  local.get $budget
//	  i32.const Budget
//	  i32.add
//	  local.set $budget
//	  <c with charge Budget>
//	end
func (c check) local(idx uint32) check {
	p := appendU32([]byte{0x20}, idx)                       // local.get $budget
	p = append(p, 0x41)                                     // i32.const <charge>
	s := append([]byte{0x6b, 0x22}, appendU32(nil, idx)...) // i32.sub, local.tee $budget
	s = append(s, 0x41, 0x00, 0x48, 0x04, 0x40)             // i32.const 0, i32.lt_s, if
	s = appendU32(append(s, 0x20), idx)                     // local.get $budget
	s = appendS32(append(s, 0x41), Budget)                  // i32.const Budget
	s = appendU32(append(s, 0x6a, 0x21), idx)               // i32.add, local.set $budget
	s = c.append(s, Budget)
	s = append(s, 0x0b) // end
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
