package instrument

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// appendCode appends the instrumented code section (payload p at offset
// base in the module), header included, to out. A first pass decodes every
// body and finds where its checks go; the second writes the section with
// exact sizes, copying the original code between the checks.
func appendCode(out, p []byte, base int, m *module, c check, slow bool, info *Info) ([]byte, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return nil, fmt.Errorf("code section at %#x: %w: %w", base, err, ErrMalformed)
	}
	var bodies []body
	var points []point // all bodies' checks, in order
	var frames []frame // scratch for scanBody
	total := uint64(lenU32(n))
	for k := uint32(0); k < n; k++ {
		size, j, err := u32(p, i)
		if err != nil {
			return nil, fmt.Errorf("code section: function %d at %#x: %w: %w", k, base+i, err, ErrMalformed)
		}
		if uint64(size) > uint64(len(p)-j) {
			return nil, fmt.Errorf("code section: function %d at %#x: size %d past the end: %w", k, base+i, size, ErrMalformed)
		}
		if err := over(fmt.Sprintf("function %d's size in bytes", k), uint64(size), uint64(m.lim.FunctionSize), "max_function_size"); err != nil {
			return nil, err
		}
		info.MaxFunctionSize = max(info.MaxFunctionSize, uint64(size))
		if k >= uint32(len(m.funcTypes)) {
			return nil, fmt.Errorf("code section: function %d at %#x: more bodies than the function section declares (%d): %w", k, base+i, len(m.funcTypes), ErrMalformed)
		}
		bd := body{start: j, end: j + int(size), first: len(points), params: m.params[m.funcTypes[k]]}
		points, frames, err = scanBody(points, frames[:0], p[:bd.end], &bd, m, info)
		if err != nil {
			var be *bodyError
			if errors.As(err, &be) {
				err = fmt.Errorf("code section: function %d: offset %#x: %w", k, base+be.off, be.err)
			} else {
				err = fmt.Errorf("code section: function %d: %w", k, err)
			}
			return nil, err
		}
		bodies = append(bodies, bd)
		i = bd.end
	}
	if i != len(p) {
		return nil, fmt.Errorf("code section at %#x: trailing bytes: %w", base+i, ErrMalformed)
	}
	if n != uint32(len(m.funcTypes)) {
		return nil, fmt.Errorf("code section: %d bodies, the function section declares %d: %w", n, len(m.funcTypes), ErrMalformed)
	}
	if slow {
		chargeSites(m, bodies)
	}
	info.Calls = len(m.sites)
	for _, s := range m.sites {
		if s.charged {
			info.StackCalls++
		}
	}
	for k := range bodies {
		bd := &bodies[k]
		if err := bd.plan(points, m.sites, c); err != nil {
			return nil, fmt.Errorf("code section: function %d: %w", k, err)
		}
		if bd.size > math.MaxUint32 {
			return nil, fmt.Errorf("code section: function %d too large: %w", k, ErrUnsupported)
		}
		total += uint64(lenU32(uint32(bd.size))) + bd.size
		info.Functions++
	}
	count := n
	if slow { // the slow path's and the charging functions, after every body
		count += 2
		total += uint64(lenU32(count)-lenU32(n)) + uint64(lenU32(uint32(len(c.slow)))+len(c.slow)) +
			uint64(lenU32(uint32(len(c.charge)))+len(c.charge))
	}
	if total > math.MaxUint32 {
		return nil, fmt.Errorf("instrumented code section too large: %w", ErrUnsupported)
	}
	out = slices.Grow(out, 6+int(total))
	out = append(out, secCode)
	out = appendU32(out, uint32(total))
	payload := len(out) // code offsets (DWARF addresses) count from here
	out = appendU32(out, count)
	for k := range bodies {
		out = bodies[k].append(out, p, points, m.sites, c, payload, m.anchors)
	}
	if m.anchors != nil {
		m.codeEnd = len(out) - payload // the original code's end (the added functions follow)
	}
	if slow {
		out = appendU32(out, uint32(len(c.slow)))
		out = append(out, c.slow...)
		out = appendU32(out, uint32(len(c.charge)))
		out = append(out, c.charge...)
	}
	return out, nil
}

// body is one function body of the code section and its plan.
type body struct {
	start, end int    // the body in p, without its size
	countEnd   int    // end of the locals count
	localsEnd  int    // end of the local declarations
	decls      uint32 // local declarations
	locals     uint64 // declared locals
	params     uint32 // parameters of the function's type
	first      int    // index of the body's first check (the entry) in points
	n          int    // checks: the entry, then the loops and bulk instructions
	bulk       bool   // the body has a bulk instruction (see bulkCheck)
	budget     bool   // loops count down a local budget (see check.local)
	loop       check  // the loop check, if budget
	extra      uint32 // i32 locals added: the budget, then the scratch
	scratch    uint32 // the scratch local's index, if bulk
	size       uint64 // instrumented size
	firstSite  int    // index of the body's first call in module.sites
	nSites     int    // calls
	frame      int32  // the stack budget its charged calls take (see stack.go)
}

// plan decides how b's loops are checked and computes its instrumented
// size. A loop whose code up to the next check is shorter than Budget
// counts down a new i32 local (the budget) in a register and charges the
// global fuel Budget at a time; longer loops, and functions whose local
// index would overflow, charge the fuel directly.
func (b *body) plan(points []point, sites []site, c check) error {
	idx := uint64(b.params) + b.locals // the first added local's index
	if idx+2 > math.MaxUint32 || b.decls == math.MaxUint32 {
		if b.bulk {
			return fmt.Errorf("%d locals: %w", idx, ErrUnsupported)
		}
	} else if b.n > 1 {
		for q := b.first + 1; q < b.first+b.n; q++ {
			if pt := points[q]; !pt.bulk && !pt.deep && !pt.cut && !pt.cuts && !pt.dead && pt.charge < Budget {
				b.budget = true
				b.loop = c.local(uint32(idx))
				b.extra++
				break
			}
		}
	}
	if b.bulk {
		b.scratch = uint32(idx) + b.extra
		b.extra++
	}
	for _, s := range sites[b.firstSite : b.firstSite+b.nSites] {
		if s.charged { // b can recur: its entry pays for its charge too (see stack.go)
			e := &points[b.first]
			e.charge = int32(min(int64(e.charge)+int64(b.frame+StackPerFuel-1)/StackPerFuel, math.MaxInt32))
			break
		}
	}
	b.size = uint64(b.end - b.start)
	if b.extra > 0 {
		b.size += uint64(lenU32(b.decls+1)-(b.countEnd-b.start)) + 2
	}
	for q := b.first; q < b.first+b.n; q++ {
		if points[q].dead {
			continue
		}
		if points[q].bulk {
			b.size += uint64(bulkLen(c, b.scratch))
		} else {
			b.size += uint64(b.check(q, c, points).len(points[q].charge))
		}
	}
	pre, post := stackCode(c.stack, b.frame)
	for _, s := range sites[b.firstSite : b.firstSite+b.nSites] {
		if s.charged {
			b.size += uint64(len(pre) + len(post))
		}
	}
	return nil
}

// check returns the check for points[q] (not a bulk one).
func (b *body) check(q int, c check, points []point) check {
	switch {
	case points[q].deep:
		return c.deepCheck()
	case points[q].cut:
		return c.plainCharge()
	case points[q].cuts:
		return c
	}
	if q > b.first && b.budget && points[q].charge < Budget {
		return b.loop
	}
	return c
}

// append appends the instrumented body, size included: the checks and
// the charged calls merged in the order of their offsets (a check at a
// call's offset, after a loop's block type, goes first). If anchors is
// not nil it records where the original code goes (see anchor), the
// output's code section payload starting at out[payload].
func (b *body) append(out, p []byte, points []point, sites []site, c check, payload int, anchors *[]anchor) []byte {
	mark := func(orig int) {
		if anchors != nil {
			*anchors = append(*anchors, anchor{orig: orig, out: len(out) - payload})
		}
	}
	out = appendU32(out, uint32(b.size))
	mark(b.start)
	from := b.start
	if b.extra > 0 { // one more declaration: (local i32 …)
		out = appendU32(out, b.decls+1)
		out = append(out, p[b.countEnd:b.localsEnd]...)
		out = append(out, byte(b.extra), 0x7f)
		from = b.localsEnd
		mark(from)
	}
	pre, post := stackCode(c.stack, b.frame)
	// call appends the code up to the end of call s, with the stack
	// budget's charge around it if s is charged.
	call := func(s site) {
		if s.charged {
			out = append(out, p[from:s.at]...)
			out = append(out, pre...)
			mark(s.at)
			out = append(out, p[s.at:s.end]...)
			out = append(out, post...)
			from = s.end
			mark(from)
		}
	}
	sites = sites[b.firstSite : b.firstSite+b.nSites]
	for q := b.first; q < b.first+b.n; q++ {
		if points[q].dead {
			continue
		}
		for len(sites) > 0 && sites[0].at < points[q].at {
			call(sites[0])
			sites = sites[1:]
		}
		out = append(out, p[from:points[q].at]...)
		if pt := points[q]; pt.bulk {
			out = appendBulk(out, c, b.scratch, pt.shift)
		} else {
			out = b.check(q, c, points).append(out, pt.charge)
		}
		from = points[q].at
		mark(from)
	}
	for _, s := range sites {
		call(s)
	}
	return append(out, p[from:b.end]...)
}

// point is where a check goes (an offset in the code section payload) and
// what it charges: the size of the code it pays for, at least 1 (see
// scanBody); or, for bulk, where a bulk instruction's charge goes and by
// how much its length is shifted (see bulkCheck).
type point struct {
	at     int
	charge int32
	bulk   bool
	shift  uint8
	deep   bool // a loop nested deeper than DeepLoops
	cut    bool // a cut: its charge is not tested (see check.plainCharge)
	cuts   bool // a loop with cuts: its check is on the fuel, never the budget
	dead   bool // a cut merged back into its loop's check: none goes here
}

// frame is an open block, if or loop while scanning a body: the check
// that pays for the code in it (the innermost loop's, the entry's, or the
// loop's latest cut).
type frame struct {
	scope int // index in points
	loop  bool
	// For a loop: its check (in points) and where its cuts start in the
	// cuts scratch. For a block: its end is a cut (see scanBody).
	head, cuts int
	cut        bool
}

// CutMin is the size of a loop's code (outside nested loops) from which
// its body is cut at the ends of its blocks (see scanBody): a loop
// shorter than that pays for all of its body at its header.
const CutMin = Budget

// bodyError is a decoding error at an offset in a function body.
type bodyError struct {
	off int
	err error
}

func (e *bodyError) Error() string { return fmt.Sprintf("offset %#x: %v", e.off, e.err) }
func (e *bodyError) Unwrap() error { return e.err }

func malformed(off int, err error) error {
	return &bodyError{off: off, err: fmt.Errorf("%w: %w", err, ErrMalformed)}
}

func unsupported(off int, format string, args ...any) error {
	return &bodyError{off: off, err: fmt.Errorf(format+": %w", append(args, ErrUnsupported)...)}
}

// scanBody decodes the function body b[bd.start:] (locals and code,
// without its size), records its locals in bd and appends its checks to
// points: after the locals and after every loop's block type. Each byte of
// code is charged to the check of its innermost enclosing loop, or to the
// entry's outside loops: one pass through a loop body (one iteration) or
// through a function's code outside loops runs each of those bytes at most
// once, since only branches to loop headers go backwards. frames is
// scratch space.
//
// A loop of CutMin bytes or more (outside nested loops) is also cut after
// the end of every block of its body that no if encloses within the loop
// (a block whose enclosing constructs up to the loop are all blocks): a
// check there pays for the loop's code from it to the next cut, so an
// iteration pays for the parts of the body it reaches rather than for all
// of it. Go's compiler puts each function's body in one such loop (a
// br_table dispatch to the blocks after its calls), so without cuts every
// resumption paid for the whole function. It stays sound: the only
// forward jumps are to the end of a block or if that encloses the jump
// (or to an else), and a jump that skips a cut lands on a cut too,
// since the block it leaves encloses the skipped cut's block and so is
// itself a block that no if encloses; the jumps of an if (to its else and
// end) skip no cut, since none is inside an if.
//
// A cut only takes its charge off the fuel, without testing it (a test
// is an if block, and wazero's compile of a Go plugin took twice as long
// with one at every cut): the loop's own check, on the fuel rather than
// on a local budget, tests it at the next iteration, and a callee's entry
// check at the next call. So between two tests the code run is still at
// most one pass through the loop body, as when the loop paid for all of
// it up front.
func scanBody(points []point, frames []frame, b []byte, bd *body, m *module, info *Info) ([]point, []frame, error) {
	n, i, err := u32(b, bd.start)
	if err != nil {
		return nil, nil, malformed(i, err)
	}
	bd.decls, bd.countEnd = n, i
	bd.firstSite = len(m.sites)
	defer func() { bd.nSites = len(m.sites) - bd.firstSite }()
	for k := uint32(0); k < n; k++ {
		var c uint32
		if c, i, err = u32(b, i); err != nil {
			return nil, nil, malformed(i, err)
		}
		bd.locals += uint64(c)
		if i, err = skipValType(b, i); err != nil {
			return nil, nil, malformed(i, err)
		}
	}
	bd.localsEnd = i
	locals := uint64(bd.params) + bd.locals
	if err := over("locals", locals, uint64(m.lim.Locals), "max_locals"); err != nil {
		return nil, nil, err
	}
	info.MaxLocals = max(info.MaxLocals, locals)
	if locals > math.MaxUint32 {
		return nil, nil, malformed(i, fmt.Errorf("%d locals", locals))
	}
	nlocals := uint32(locals)
	var brTargets uint64 // br_table targets so far, summed (see Limits.BrTable)
	loops := 0           // open loops
	var cuts []int       // the open loops' cuts (indices in points), innermost last
	cur := len(points)   // the check paying for the code being scanned
	points = append(points, point{at: i})
	frames = append(frames, frame{scope: cur}) // the function's own block
	mark := i                                  // code since mark is not charged yet
	charge := func(end int) {
		points[cur].charge = int32(min(int64(points[cur].charge)+int64(end-mark), math.MaxInt32))
		mark = end
	}
	for i < len(b) {
		at := i
		op := b[i]
		i++
		switch opKinds[op] {
		case kNone:
		case kEnd:
			if len(frames) == 0 {
				return nil, nil, malformed(at, errors.New("end outside any block"))
			}
			f := frames[len(frames)-1]
			frames = frames[:len(frames)-1]
			switch {
			case f.loop:
				loops--
				charge(i)
				mergeCuts(points, f.head, cuts[f.cuts:])
				cuts = cuts[:f.cuts]
				cur = bd.first // after the body's last end only malformed code follows
				if len(frames) > 0 {
					cur = frames[len(frames)-1].scope
				}
			case f.cut:
				charge(i)
				cur = len(points)
				cuts = append(cuts, cur)
				points = append(points, point{at: i, cut: true})
				for k := len(frames) - 1; k >= 0; k-- {
					frames[k].scope = cur
					if frames[k].loop {
						break
					}
				}
			}
		case kLoop:
			if i, err = m.blockType(b, i); err == nil {
				charge(i)
				cur = len(points)
				loops++
				points = append(points, point{at: i, deep: loops > DeepLoops})
				frames = append(frames, frame{scope: cur, loop: true, head: cur, cuts: len(cuts)})
				if err := m.nesting(len(frames)-1, info); err != nil {
					return nil, nil, err
				}
				info.Loops++
			}
		case kBlock:
			if i, err = m.blockType(b, i); err == nil {
				// A block (not an if) directly in a loop's body, or in such
				// a block, ends in a cut.
				var up frame
				if len(frames) > 0 {
					up = frames[len(frames)-1]
				}
				frames = append(frames, frame{scope: cur, cut: op == 0x02 && loops > 0 && (up.loop || up.cut)})
				if err := m.nesting(len(frames)-1, info); err != nil {
					return nil, nil, err
				}
			}
		case kU32:
			var v uint32
			if v, i, err = u32(b, i); err == nil {
				if err = m.checkU32(op, v, nlocals, len(frames)); err == nil {
					switch op {
					case 0x10: // call
						m.sites = append(m.sites, site{at: at, end: i, callee: v})
					case 0xd2: // ref.func
						m.taken = append(m.taken, v)
					}
				}
			}
		case kU32U32: // call_indirect
			var t, tab uint32
			if t, i, err = u32(b, i); err == nil {
				if tab, i, err = u32(b, i); err == nil {
					if err = index("type", t, m.types()); err == nil {
						if err = index("table", tab, m.tables()); err == nil {
							m.sites = append(m.sites, site{at: at, end: i, indirect: true})
						}
					}
				}
			}
		case kMemarg:
			i, err = skipMemarg(b, i)
		case kBrTable:
			var targets uint32
			if targets, i, err = u32(b, i); err != nil {
				break
			}
			brTargets += uint64(targets)
			if err := over("br_table targets in the function", brTargets, uint64(m.lim.BrTable), "max_br_table"); err != nil {
				return nil, nil, err
			}
			info.MaxBrTable = max(info.MaxBrTable, brTargets)
			for t := uint64(0); t <= uint64(targets) && err == nil; t++ { // targets, then the default
				var l uint32
				if l, i, err = u32(b, i); err == nil {
					err = index("label", l, uint32(len(frames)))
				}
			}
		case kSelectT:
			var types uint32
			if types, i, err = u32(b, i); err != nil {
				break
			}
			for t := uint32(0); t < types && err == nil; t++ {
				i, err = skipValType(b, i)
			}
		case kI32:
			i, err = skipS32(b, i)
		case kI64:
			i, err = skipS64(b, i)
		case kF32:
			i, err = skipBytes(b, i, 4)
		case kF64:
			i, err = skipBytes(b, i, 8)
		case kHeapType:
			_, i, err = s33(b, i)
		case kMisc:
			if sub, _, _ := u32(b, i); sub < uint32(len(bulkShift)) && bulkShift[sub] != 0 {
				points = append(points, point{at: at, bulk: true, shift: bulkShift[sub]})
				bd.bulk = true
			}
			i, err = m.skipMisc(b, at, i)
		case kSIMD:
			i, err = skipSIMD(b, at, i)
		default:
			return nil, nil, unsupported(at, "opcode %#02x", op)
		}
		if err != nil {
			var be *bodyError
			if errors.As(err, &be) {
				return nil, nil, err
			}
			if errors.Is(err, ErrUnsupported) {
				return nil, nil, &bodyError{off: at, err: err}
			}
			return nil, nil, malformed(at, err)
		}
	}
	charge(len(b))
	for q := bd.first; q < len(points); q++ {
		if !points[q].dead {
			points[q].charge = max(points[q].charge, 1)
		}
	}
	bd.n = len(points) - bd.first
	return points, frames, nil
}

// mergeCuts charges the cuts of the loop whose check is points[head] back
// to that check, as dead points, if the loop's code (outside nested loops)
// is shorter than CutMin.
func mergeCuts(points []point, head int, cuts []int) {
	total := int64(points[head].charge)
	for _, q := range cuts {
		total += int64(points[q].charge)
	}
	if total >= CutMin {
		points[head].cuts = len(cuts) > 0
		return
	}
	for _, q := range cuts {
		points[head].charge += points[q].charge
		points[q].charge, points[q].dead = 0, true
	}
}

func skipBytes(b []byte, i, n int) (int, error) {
	if len(b)-i < n {
		return len(b), errEOF
	}
	return i + n, nil
}

// skipValType skips a value type: one byte, or 0x63/0x64 (ref null ht,
// ref ht) and a heap type, which wazero's decoder also accepts.
func skipValType(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errEOF
	}
	c := b[i]
	i++
	if c == 0x63 || c == 0x64 {
		_, i, err := s33(b, i)
		return i, err
	}
	return i, nil
}

// blockType skips a block type: an s33 that is 0x40 (empty), a value
// type, or a type index (multi-value); the reference forms 0x63/0x64 are
// followed by a heap type.
func (m *module) blockType(b []byte, i int) (int, error) {
	v, i, err := s33(b, i)
	switch {
	case err != nil:
	case v == -29 || v == -28: // 0x63, 0x64
		_, i, err = s33(b, i)
	case v >= 0:
		err = index("type", uint32(min(v, math.MaxUint32)), m.types())
	}
	return i, err
}

// checkU32 checks the index immediate v of opcode op (of kind kU32) in a
// function with nlocals locals (parameters included), depth labels deep.
func (m *module) checkU32(op byte, v, nlocals uint32, depth int) error {
	switch op {
	case 0x0c, 0x0d: // br, br_if
		return index("label", v, uint32(depth))
	case 0x10, 0xd2: // call, ref.func
		return index("function", v, m.funcs())
	case 0x20, 0x21, 0x22:
		return index("local", v, nlocals)
	case 0x23, 0x24:
		return index("global", v, m.globals())
	case 0x25, 0x26: // table.get, table.set
		return index("table", v, m.tables())
	case 0x3f, 0x40: // memory.size, memory.grow
		return index("memory", v, m.memories)
	}
	return nil
}

// skipMemarg skips a memory argument: alignment and offset. An alignment
// with bit 6 set (multi-memory: a memory index follows) is unsupported.
func skipMemarg(b []byte, i int) (int, error) {
	at := i
	align, i, err := u32(b, i)
	if err != nil {
		return i, err
	}
	if align >= 64 {
		return i, unsupported(at, "memarg alignment %#x (multiple memories)", align)
	}
	_, i, err = u32(b, i)
	return i, err
}

// skipMisc skips a 0xFC-prefixed instruction: saturating truncation
// (0–7), bulk memory (8–11) and table operations (12–17).
func (m *module) skipMisc(b []byte, at, i int) (int, error) {
	sub, i, err := u32(b, i)
	if err != nil {
		return i, err
	}
	if sub > 17 {
		return i, unsupported(at, "opcode 0xfc %d", sub)
	}
	// The index spaces of the immediates (none for the saturating
	// truncations, 0–7).
	const data, mem, elem, table = 1, 2, 3, 4
	spaces := [18][2]int{8: {data, mem}, 9: {data}, 10: {mem, mem}, 11: {mem},
		12: {elem, table}, 13: {elem}, 14: {table, table}, 15: {table}, 16: {table}, 17: {table}}[sub]
	for _, sp := range spaces {
		if sp == 0 {
			break
		}
		var v uint32
		if v, i, err = u32(b, i); err != nil {
			return i, err
		}
		switch sp {
		case data:
			if !m.hasDataCount {
				return i, fmt.Errorf("opcode 0xfc %d without a data count section", sub)
			}
			err = index("data segment", v, m.dataCount)
		case mem:
			err = index("memory", v, m.memories)
		case elem:
			err = index("element segment", v, m.elems)
		case table:
			err = index("table", v, m.tables())
		}
		if err != nil {
			return i, err
		}
	}
	return i, nil
}

// skipSIMD skips a 0xFD-prefixed instruction.
func skipSIMD(b []byte, at, i int) (int, error) {
	sub, i, err := u32(b, i)
	if err != nil {
		return i, err
	}
	if sub >= uint32(len(simdKinds)) || simdKinds[sub] == kBad {
		return i, unsupported(at, "opcode 0xfd %d", sub)
	}
	switch simdKinds[sub] {
	case simdMemarg:
		return skipMemarg(b, i)
	case simdBytes16:
		return skipBytes(b, i, 16)
	case simdLane:
		return skipBytes(b, i, 1)
	case simdMemargLane:
		if i, err = skipMemarg(b, i); err != nil {
			return i, err
		}
		return skipBytes(b, i, 1)
	}
	return i, nil
}

// nesting checks a depth of blocks, loops and ifs.
func (m *module) nesting(depth int, info *Info) error {
	info.MaxNesting = max(info.MaxNesting, uint64(depth))
	return over("nesting of blocks, loops and ifs", uint64(depth), uint64(m.lim.Nesting), "max_nesting")
}
