// Package instrument rewrites a WebAssembly module so that the host can
// interrupt its running code cheaply, without wazero's
// WithCloseOnContextDone (which makes every loop back-edge exit to Go).
//
// Instrument adds four mutable i32 globals after every imported and
// defined global (so no existing index moves): a flag, exported as
// GlobalName, a fuel counter, exported as FuelName, a probe switch,
// exported as YieldName (see below), and a stack budget, exported as
// StackName, which the calls that can recur charge and the slow path
// checks (see stack.go). At the entry of every function
// body it inserts a check that charges the fuel with the size of the code
// it pays for (the function's code outside loops):
//
//	global.get $fuel
//	i32.const  <bytes of code paid for>
//	i32.sub
//	global.set $fuel
//	global.get $fuel
//	i32.const 0
//	i32.lt_s
//	if                       ;; every Refill bytes of code run:
//	  call $slow
//	end
//
// where $slow is a function Instrument adds after every function (of a
// type () -> () added after every type, so no index moves), out of line
// so that a check adds two blocks, not eight, to wazero's compile of
// every loop (its compile time grows with the square of the blocks of
// nested loops):
//
//	i32.const Refill
//	global.set $fuel
//	global.get $yield
//	if                       ;; the host asked for probes:
//	  i32.const 2
//	  global.set $yield      ;; mark the grow below as a probe
//	  i32.const 1
//	  memory.grow 0          ;; exit to Go through the host's allocator
//	  drop
//	else
//	  i32.const 0
//	  memory.grow 0          ;; exit to Go (a point where the Go runtime
//	  drop                   ;; can preempt the goroutine, e.g. for GC)
//	end
//	global.get $flag
//	if
//	  unreachable            ;; the host set the flag: stop
//	end
//	global.get $stack
//	i32.const 0
//	i32.lt_s
//	if
//	  unreachable            ;; out of stack budget
//	end
//
// At the start of every loop body it inserts the same check, paying for the
// loop body outside nested loops, or, for bodies shorter than Budget, a
// cheaper one that counts a new local (the
// function's budget) down in a register and charges the fuel Budget bytes
// at a time (see check.local): the fuel is a global in memory, and a
// load-subtract-store per iteration costs tight loops about twice their
// time. A loop body of CutMin bytes or more is also cut after the ends of
// its blocks that no if encloses, each cut taking the fuel down for the
// code up to the next one without testing it, and the loop's check pays
// for the code up to the first cut only: an iteration pays for the parts
// it runs (Go's compiler puts every function in such a loop, resumed
// through a br_table, which paid for the whole function each time; see
// scanBody).
//
// The host stores 1 into the flag to stop the instance, which then traps
// within about Refill bytes of executed code, in loops and recursion
// alike; storing 0 into the fuel as well makes that the next fuel check (a
// store racing with the guest's own update of the fuel may be lost, which
// only delays the stop to the next period). The periodic exit matters as
// much as the flag: wazero's native code cannot be preempted, so a guest
// that never left it would stall every stop-the-world phase of the Go
// garbage collector, and with it the goroutine that was to set the flag.
// Since only branches to loop headers go backwards, one iteration of a
// loop (or one run of a function's code outside loops) runs each byte it
// pays for at most once, so the code run between exits is bounded by
// Refill plus what the charges paid just before it (one region per active
// frame), even for long straight-line functions.
//
// Bulk memory and table instructions (memory.fill and the like) run in
// time proportional to their length, so each is charged its length
// shifted by MemoryShift or TableShift, with the same slow path (see
// bulk.go).
//
// Every index Instrument passes through (functions, types, tables,
// memories, globals, locals, labels, element and data segments, in code,
// constant expressions, exports and the start section) is checked against
// the original module: one past the module's own globals or locals would
// name the flag, the fuel or the budget once instrumented (see index.go),
// so an out-of-range index is an error wrapping ErrMalformed.
//
// The probe is how the host schedules guest CPU: a host that stores 1
// into the yield global makes every exit a memory.grow of one page with
// the global at 2, which wazero hands to the instance's memory allocator
// (experimental.WithMemoryAllocator); the allocator recognises the probe
// by the 2, stores 1 back, may block the goroutine there (to park a
// runaway call), and refuses the growth, so memory.grow returns -1 and
// nothing changes. For the probe to reach the allocator even when memory
// is at its declared maximum, Instrument removes the maximum of the
// module's memory and reports it in Info.MemoryMax: the host must refuse
// growth past it itself. A host that never sets the yield global gets the
// plain exits.
//
// A start section is turned into an export named StartName (the host
// calls it after instantiation, when it can interrupt it). The name
// section is kept (function indices do not move). Custom sections named
// .debug_* are dropped, since the code offsets they refer to change; in
// their place, if they hold a line table debug/dwarf can read and are at
// most MaxDebugSections, go three new ones (.debug_abbrev, .debug_info,
// .debug_line) with that table's rows moved to the instrumented code, so
// that wazero's stack traces still give each frame's file:line:column
// (inlined frames, variables and types are not carried over; see
// dwarf.go). Bound keeps the .debug_* sections as they are (the code does
// not move) under the same bound.
//
// The decoder knows the immediates of every instruction of wazero's
// api.CoreFeaturesV2 (MVP, sign extension, non-trapping float-to-int,
// bulk memory and table operations, reference types, multi-value and
// SIMD). Anything else, and a module without a memory, is an error
// wrapping ErrUnsupported; the caller is expected to fall back to another
// way of interrupting the module. Instrument never panics, whatever its
// input, and its output is a pure function of its input (the compilation
// cache depends on it).
package instrument

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Reserved export names. A module that already exports one is refused with
// ErrReserved.
const (
	// GlobalName is the export name of the interrupt flag: a mutable i32
	// global, 0 to run, 1 to stop.
	GlobalName = "__wasmcp_interrupt"
	// FuelName is the export name of the fuel: a mutable i32 global, the
	// bytes of code left to run before the next exit to Go.
	FuelName = "__wasmcp_fuel"
	// StartName is the export name of the function of a module's start
	// section, which Instrument removes.
	StartName = "__wasmcp_start"
	// YieldName is the export name of the probe switch: a mutable i32
	// global, 0 for plain exits, 1 to make every exit a probe of the
	// memory allocator, which sees it at 2 during the probe.
	YieldName = "__wasmcp_yield"
	// StackName is the export name of the stack budget: a mutable i32
	// global, the estimated bytes of wasm stack the guest's recursion may
	// still use (see the package doc); negative after a trap for running
	// out of it.
	StackName = "__wasmcp_stack"
	// Stack is the stack budget's initial value, and the value the host
	// stores before each call: 16 MiB of estimated frames (see stack.go).
	Stack = 16 << 20
	// Refill is the fuel of one period between exits to Go, in bytes of
	// original code. An exit is where the Go runtime can preempt the
	// goroutine (a stop-the-world phase waits for it) and the scheduler's
	// probe, which also delivers the deadline. Typical code runs 64 KiB
	// in tens of microseconds, but code whose every load misses the
	// caches and the TLB takes about 3.5 ms (BenchmarkPeriod: 53 ns per
	// byte). 256 KiB saved about 0.1 µs per exit, 2 or 3% of a C echo
	// call, and made that worst case 14 ms, and a GC's wait for such a
	// guest 63 ms at the median instead of 21: not kept.
	Refill = 1 << 16
	// MaxNameSection bounds the name section kept: a larger one is
	// dropped (it only names functions in stack traces, and wazero
	// decodes every entry, tens of bytes of heap each).
	MaxNameSection = 1 << 20
	// Budget is how many bytes of loop code a function runs on its local
	// budget before charging the fuel again.
	Budget = 1 << 10
)

var (
	// ErrMalformed wraps errors about input that is not a well-formed
	// WebAssembly binary module.
	ErrMalformed = errors.New("malformed module")
	// ErrUnsupported wraps errors about a feature outside
	// api.CoreFeaturesV2 (an unknown opcode, section or encoding).
	ErrUnsupported = errors.New("unsupported feature")
	// ErrReserved is returned for a module that exports GlobalName,
	// FuelName, YieldName, StackName or StartName itself.
	ErrReserved = errors.New("module exports a name reserved for the host")
	// ErrNoMemory is returned for a module without a memory, which the
	// instrumentation needs (see Bound).
	ErrNoMemory = errors.New("module has no memory")
)

// Info describes what Instrument did.
type Info struct {
	Functions int  // function bodies given an entry check
	Loops     int  // loops given a check
	Start     bool // the start section became the StartName export
	Dropped   int  // custom sections dropped (.debug_* ones, and a name section over MaxNameSection)
	Lines     bool // a line table for the instrumented code replaces the DWARF (see the package doc)
	// Calls is the number of calls in the code, StackCalls of those that
	// can recur and so charge the stack budget (see stack.go).
	Calls, StackCalls int
	// MemoryMax is the declared maximum of the module's memory in pages,
	// which Instrument removed (see the package doc), or -1 if it had
	// none.
	MemoryMax int64
	// The largest of each per-function quantity that Limits bounds.
	MaxFunctionSize, MaxLocals, MaxNesting, MaxBrTable uint64
}

// Section ids and their position in the required order.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// rank is a known section's position in the order the spec requires (the
// data count section comes before code); 0 for unknown ids.
func rank(id byte) int {
	switch {
	case id >= 1 && id <= 9:
		return int(id)
	case id == secDataCount:
		return 10
	case id == secCode:
		return 11
	case id == 11: // data
		return 12
	}
	return 0
}

type section struct {
	id         byte
	head       int // offset of the id byte
	start, end int // payload
}

// module is what the first pass learns about the input.
type module struct {
	wasm           []byte
	secs           []section
	importGlobals  uint32
	definedGlobals uint32
	importFuncs    uint32
	importTables   uint32
	tableLimits    []tableLimits // defined tables
	memories       uint32        // imported and defined
	params         []uint32      // parameter count of each type
	funcTypes      []uint32      // type index of each defined function
	exports        uint32
	memMax         int64  // declared maximum of the defined memory, -1 if none
	reserved       string // the first export with a reserved name
	lim            Limits
	datas          uint32 // data segments (the data count, or the data section's)
	start          uint32
	hasStart       bool
	elems          uint32 // element segments
	dataCount      uint32 // the data count section's, if hasDataCount
	hasDataCount   bool
	anchors        *[]anchor // where appendCode moved the code, if the DWARF is carried over
	codeEnd        int       // the output's code offset where the original functions end
	// The call graph (see stack.go): every call in the code, in order,
	// the functions whose references the module takes (element segments,
	// ref.func) and the exported functions.
	sites       []site
	taken       []uint32
	exportFuncs []uint32
}

// Instrument returns the instrumented module (see the package doc) and a
// summary of the changes. Errors wrap ErrMalformed, ErrUnsupported or
// ErrReserved and give the offset in the input.
func Instrument(wasm []byte, lim Limits) ([]byte, Info, error) {
	return rewrite(wasm, lim, true, false)
}

// InstrumentLinked is Instrument for a core module of a component, whose
// imported tables are defined, and bounded, by another of them: they are
// left as they are, where Instrument refuses an imported table when
// lim.TableElements is set (it cannot be bounded).
func InstrumentLinked(wasm []byte, lim Limits) ([]byte, Info, error) {
	return rewrite(wasm, lim, true, true)
}

// Bound returns wasm with lim applied but not instrumented (for a module
// that Instrument refuses with ErrReserved or ErrNoMemory and that the
// caller runs some other way): the same checks as Instrument, and the
// tables' maxima rewritten, but no reserved names refused and nothing
// added.
func Bound(wasm []byte, lim Limits) ([]byte, error) {
	out, _, err := rewrite(wasm, lim, false, false)
	return out, err
}

// rewrite is Instrument or InstrumentLinked (instrument; linked for the
// latter) or Bound.
func rewrite(wasm []byte, lim Limits, instrument, linked bool) ([]byte, Info, error) {
	info := Info{MemoryMax: -1}
	if err := over("module size in bytes", uint64(len(wasm)), lim.ModuleSize, "max_module_size"); err != nil {
		return nil, info, err
	}
	m, err := scan(wasm, lim)
	if err != nil {
		return nil, info, err
	}
	if err := m.checkTables(lim, linked); err != nil {
		return nil, info, err
	}
	if instrument && m.reserved != "" {
		return nil, info, fmt.Errorf("export %q: %w", m.reserved, ErrReserved)
	}
	if instrument && m.memories == 0 {
		return nil, info, fmt.Errorf("needed to exit to Go: %w: %w", ErrNoMemory, ErrUnsupported)
	}
	g := uint64(m.importGlobals) + uint64(m.definedGlobals)
	if g >= math.MaxUint32-3 || m.definedGlobals >= math.MaxUint32-3 || m.exports > math.MaxUint32-5 {
		return nil, info, fmt.Errorf("too many globals or exports: %w", ErrUnsupported)
	}
	if uint64(m.funcs()) >= math.MaxUint32-2 || m.types() >= math.MaxUint32-2 {
		return nil, info, fmt.Errorf("too many functions or types: %w", ErrUnsupported)
	}
	// The slow path's function and the charging function go after every
	// function, of new types () -> () and (i32) -> () after every type
	// (no index moves), if there is code.
	slow := instrument && len(m.funcTypes) > 0
	check := newCheck(uint32(g), uint32(g+1), uint32(g+2), uint32(g+3), m.funcs())
	if instrument {
		info.MemoryMax = m.memMax
	}

	out := make([]byte, 0, len(wasm)+len(wasm)/8+64)
	out = append(out, wasm[:8]...)
	// A module without a global or export section gets one right after the
	// last section that must precede it, so that trailing custom sections
	// stay trailing (wazero reads a malformed name section past its end,
	// which it only tolerates at the end of the module).
	hasGlobal, hasExport := false, false
	globalAfter, exportAfter := -1, -1 // index in m.secs; -1: the header
	for k, s := range m.secs {
		switch {
		case s.id == secGlobal:
			hasGlobal = true
		case s.id == secExport:
			hasExport = true
		}
		if s.id != secCustom && rank(s.id) < rank(secGlobal) {
			globalAfter = k
		}
		if s.id != secCustom && rank(s.id) < rank(secExport) {
			exportAfter = k
		}
	}
	missing := func(k int) {
		if !instrument {
			return
		}
		if !hasGlobal && k == globalAfter {
			out = m.appendGlobal(out, nil)
		}
		if !hasExport && k == exportAfter {
			out = m.appendExport(out, nil, uint32(g))
		}
	}
	missing(-1)
	debug := m.debugSections()
	if instrument && debug != nil {
		m.anchors = &[]anchor{}
	}
	coded := false // the code section is written; its lines go before the next custom section
	lines := func() {
		if coded && m.anchors != nil {
			if d := rebuildLines(debug, *m.anchors, m.codeEnd); d != nil {
				out = append(out, d...)
				info.Lines = true
			}
			m.anchors = nil
		}
	}
	for k, s := range m.secs {
		payload := wasm[s.start:s.end]
		switch s.id {
		case secCustom:
			lines()
			name, _ := customName(payload)
			switch {
			case strings.HasPrefix(name, ".debug_") && (instrument || debug == nil),
				name == "name" && len(payload) > MaxNameSection:
				info.Dropped++
			default:
				out = append(out, wasm[s.head:s.end]...)
			}
		case secTable:
			out = m.appendTable(out, payload, lim)
		case secType:
			if !slow {
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			out = appendVec(out, secType, payload, []byte{0x60, 0x00, 0x00, 0x60, 0x01, 0x7f, 0x00}, 2)
		case secFunction:
			if !slow {
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			out = appendVec(out, secFunction, payload, appendU32(appendU32(nil, m.types()), m.types()+1), 2)
		case secGlobal:
			if !instrument {
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			out = m.appendGlobal(out, payload)
		case secExport:
			if !instrument {
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			out = m.appendExport(out, payload, uint32(g))
		case secStart:
			if !instrument {
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			info.Start = true // the export replaces it
		case secMemory:
			if !instrument { // the maximum stays: there is no probe
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			out = appendMemory(out, payload)
		case secCode:
			if !instrument { // decoded and checked only
				if _, err = appendCode(nil, payload, s.start, m, check, false, &info); err != nil {
					return nil, Info{}, err
				}
				out = append(out, wasm[s.head:s.end]...)
				break
			}
			if out, err = appendCode(out, payload, s.start, m, check, slow, &info); err != nil {
				return nil, Info{}, err
			}
			coded = true
		default:
			out = append(out, wasm[s.head:s.end]...)
		}
		missing(k)
	}
	lines()
	return out, info, nil
}

// debugSections returns the module's .debug_* custom sections by name, or
// nil if there are none, if they lack a line table, or if together they
// exceed MaxDebugSections.
func (m *module) debugSections() debugSections {
	var d debugSections
	for _, s := range m.secs {
		if s.id != secCustom {
			continue
		}
		p := m.wasm[s.start:s.end]
		name, _ := customName(p)
		if strings.HasPrefix(name, ".debug_") {
			if d == nil {
				d = debugSections{}
			}
			d[name] = p[lenU32(uint32(len(name)))+len(name):]
		}
	}
	if d[".debug_line"] == nil || d[".debug_info"] == nil || d.size() > MaxDebugSections {
		return nil
	}
	return d
}

// scan splits the module into sections, checks their order, and reads the
// import, global, export and start sections.
func scan(wasm []byte, lim Limits) (*module, error) {
	if len(wasm) < 8 || string(wasm[:4]) != "\x00asm" {
		return nil, fmt.Errorf("not a wasm binary: %w", ErrMalformed)
	}
	if string(wasm[4:8]) != "\x01\x00\x00\x00" {
		return nil, fmt.Errorf("binary version %x: %w", wasm[4:8], ErrUnsupported)
	}
	m := &module{wasm: wasm, memMax: -1, lim: lim}
	last := 0
	for i := 8; i < len(wasm); {
		id := wasm[i]
		size, j, err := u32(wasm, i+1)
		if err != nil {
			return nil, fmt.Errorf("section header at %#x: %w: %w", i, err, ErrMalformed)
		}
		if uint64(size) > uint64(len(wasm)-j) {
			return nil, fmt.Errorf("section %d at %#x: size %d past the end: %w", id, i, size, ErrMalformed)
		}
		if id != secCustom {
			r := rank(id)
			if r == 0 {
				return nil, fmt.Errorf("section id %d at %#x: %w", id, i, ErrUnsupported)
			}
			if r <= last {
				return nil, fmt.Errorf("section %d at %#x out of order or repeated: %w", id, i, ErrMalformed)
			}
			last = r
		}
		s := section{id: id, head: i, start: j, end: j + int(size)}
		m.secs = append(m.secs, s)
		if err := m.read(s); err != nil {
			return nil, err
		}
		if err := m.checkCounts(lim); err != nil {
			return nil, err
		}
		i = s.end
	}
	return m, nil
}

// read reads what Instrument needs from one section.
func (m *module) read(s section) error {
	p := m.wasm[s.start:s.end]
	wrap := func(what string, off int, err error) error {
		if !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrReserved) {
			err = fmt.Errorf("%w: %w", err, ErrMalformed)
		}
		return fmt.Errorf("%s section at %#x: %w", what, s.start+off, err)
	}
	switch s.id {
	case secCustom:
		if _, err := customName(p); err != nil {
			return wrap("custom", 0, err)
		}
	case secType:
		params, off, err := typeParams(p)
		if err != nil {
			return wrap("type", off, err)
		}
		m.params = params
	case secFunction:
		n, i, err := u32(p, 0)
		for k := uint32(0); k < n && err == nil; k++ {
			var t uint32
			if t, i, err = u32(p, i); err == nil {
				if err = index("type", t, m.types()); err == nil {
					m.funcTypes = append(m.funcTypes, t)
				}
			}
		}
		if err == nil && i != len(p) {
			err = errors.New("trailing bytes")
		}
		if err != nil {
			return wrap("function", i, err)
		}
	case secImport:
		off, err := m.readImports(p)
		if err != nil {
			return wrap("import", off, err)
		}
	case secTable:
		if off, err := m.readTables(p); err != nil {
			return wrap("table", off, err)
		}
	case secMemory:
		n, max, off, err := readMemory(p)
		if err != nil {
			return wrap("memory", off, err)
		}
		m.memories += n
		m.memMax = max
	case secGlobal:
		if off, err := m.readGlobals(p); err != nil {
			return wrap("global", off, err)
		}
	case secExport:
		n, off, err := m.checkExports(p)
		if err != nil {
			return wrap("export", off, err)
		}
		m.exports = n
	case secStart:
		f, i, err := u32(p, 0)
		if err == nil && i != len(p) {
			err = errors.New("trailing bytes")
		}
		if err == nil {
			err = index("function", f, m.funcs())
		}
		if err != nil {
			return wrap("start", 0, err)
		}
		m.start, m.hasStart = f, true
	case secElement:
		if off, err := m.readElems(p); err != nil {
			return wrap("element", off, err)
		}
	case secDataCount:
		n, i, err := u32(p, 0)
		if err == nil && i != len(p) {
			err = errors.New("trailing bytes")
		}
		if err != nil {
			return wrap("data count", 0, err)
		}
		m.dataCount, m.hasDataCount, m.datas = n, true, n
	case secData:
		if off, err := m.readData(p); err != nil {
			return wrap("data", off, err)
		}
	}
	return nil
}

// customName returns a custom section's name.
func customName(p []byte) (string, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return "", err
	}
	if uint64(n) > uint64(len(p)-i) {
		return "", errEOF
	}
	return string(p[i : i+int(n)]), nil
}

// skipName skips a length-prefixed name and returns it.
func skipName(p []byte, i int) ([]byte, int, error) {
	n, i, err := u32(p, i)
	if err != nil {
		return nil, i, err
	}
	if uint64(n) > uint64(len(p)-i) {
		return nil, i, errEOF
	}
	return p[i : i+int(n)], i + int(n), nil
}

// typeParams parses the type section and returns each type's number of
// parameters. Only function types (0x60) are supported.
func typeParams(p []byte) ([]uint32, int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return nil, i, err
	}
	var params []uint32
	for k := uint32(0); k < n; k++ {
		if i >= len(p) {
			return nil, i, errEOF
		}
		if p[i] != 0x60 {
			return nil, i, fmt.Errorf("type form %#x: %w", p[i], ErrUnsupported)
		}
		i++
		var np uint32
		for vec := 0; vec < 2; vec++ { // parameters, results
			var c uint32
			if c, i, err = u32(p, i); err != nil {
				return nil, i, err
			}
			for t := uint32(0); t < c; t++ {
				if i, err = skipValType(p, i); err != nil {
					return nil, i, err
				}
			}
			if vec == 0 {
				np = c
			}
		}
		params = append(params, np)
	}
	if i != len(p) {
		return nil, i, errors.New("trailing bytes")
	}
	return params, i, nil
}

// readImports parses the import section and counts the imports of each
// kind.
func (m *module) readImports(p []byte) (off int, err error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return i, err
	}
	for k := uint32(0); k < n; k++ {
		if _, i, err = skipName(p, i); err != nil {
			return i, err
		}
		if _, i, err = skipName(p, i); err != nil {
			return i, err
		}
		if i >= len(p) {
			return i, errEOF
		}
		kind := p[i]
		i++
		switch kind {
		case 0: // func: type index
			var t uint32
			if t, i, err = u32(p, i); err == nil {
				err = index("type", t, m.types())
			}
			m.importFuncs++
		case 1: // table: reference type, limits
			if i, err = skipValType(p, i); err == nil {
				i, err = skipLimits(p, i)
			}
			m.importTables++
		case 2: // memory: limits
			i, err = skipLimits(p, i)
			m.memories++
		case 3: // global: value type, mutability
			if i, err = skipValType(p, i); err == nil {
				if i >= len(p) {
					err = errEOF
				}
				i++
				m.importGlobals++
			}
		default:
			return i - 1, fmt.Errorf("import kind %#x: %w", kind, ErrUnsupported)
		}
		if err != nil {
			return i, err
		}
	}
	if i != len(p) {
		return i, errors.New("trailing bytes")
	}
	return i, nil
}

// skipLimits skips table or memory limits: a flags byte (bit 0: a maximum
// follows; bit 1: shared memory), the minimum and maybe the maximum.
func skipLimits(p []byte, i int) (int, error) {
	if i >= len(p) {
		return i, errEOF
	}
	flags := p[i]
	if flags > 3 {
		return i, fmt.Errorf("limits flags %#x: %w", flags, ErrUnsupported)
	}
	_, i, err := u32(p, i+1)
	if err == nil && flags&1 != 0 {
		_, i, err = u32(p, i)
	}
	return i, err
}

// checkExports parses the export section, refusing the reserved names,
// and returns the number of exports.
func (m *module) checkExports(p []byte) (uint32, int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return 0, i, err
	}
	for k := uint32(0); k < n; k++ {
		var name []byte
		at := i
		if name, i, err = skipName(p, i); err != nil {
			return 0, i, err
		}
		if (string(name) == GlobalName || string(name) == FuelName || string(name) == StartName || string(name) == YieldName || string(name) == StackName) && m.reserved == "" {
			m.reserved = string(name)
		}
		if i >= len(p) {
			return 0, i, errEOF
		}
		kind := p[i]
		var v uint32
		if v, i, err = u32(p, i+1); err != nil {
			return 0, i, err
		}
		if err = m.checkExport(kind, v); err != nil {
			return 0, at, err
		}
		if kind == 0 {
			m.exportFuncs = append(m.exportFuncs, v)
		}
	}
	if i != len(p) {
		return 0, i, errors.New("trailing bytes")
	}
	return n, i, nil
}

// appendGlobal appends the global section: the module's globals (payload,
// nil if it has none) plus the flag, (mut i32) = 0, the fuel,
// (mut i32) = Refill, the yield switch, (mut i32) = 0, and the stack
// budget, (mut i32) = Stack.
func (m *module) appendGlobal(out, payload []byte) []byte {
	body := []byte(nil)
	if payload != nil {
		_, i, _ := u32(payload, 0) // read by scan
		body = payload[i:]
	}
	count := appendU32(nil, m.definedGlobals+4)
	entry := []byte{0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01}
	entry = appendS32(append(entry, 0x41), Refill)
	entry = append(entry, 0x0b, 0x7f, 0x01, 0x41, 0x00, 0x0b, 0x7f, 0x01)
	entry = appendS32(append(entry, 0x41), Stack)
	entry = append(entry, 0x0b)
	out = append(out, secGlobal)
	out = appendU32(out, uint32(len(count)+len(body)+len(entry)))
	out = append(out, count...)
	out = append(out, body...)
	return append(out, entry...)
}

// appendExport appends the export section: the module's exports (payload,
// nil if it has none) plus the flag, the fuel, the yield switch, the
// stack budget and, for a module with a start section, its function.
func (m *module) appendExport(out, payload []byte, global uint32) []byte {
	body := []byte(nil)
	if payload != nil {
		_, i, _ := u32(payload, 0) // read by scan
		body = payload[i:]
	}
	n := m.exports + 4
	var extra []byte
	extra = appendU32(extra, uint32(len(GlobalName)))
	extra = append(extra, GlobalName...)
	extra = append(extra, 0x03)
	extra = appendU32(extra, global)
	extra = appendU32(extra, uint32(len(FuelName)))
	extra = append(extra, FuelName...)
	extra = append(extra, 0x03)
	extra = appendU32(extra, global+1)
	extra = appendU32(extra, uint32(len(YieldName)))
	extra = append(extra, YieldName...)
	extra = append(extra, 0x03)
	extra = appendU32(extra, global+2)
	extra = appendU32(extra, uint32(len(StackName)))
	extra = append(extra, StackName...)
	extra = append(extra, 0x03)
	extra = appendU32(extra, global+3)
	if m.hasStart {
		n++
		extra = appendU32(extra, uint32(len(StartName)))
		extra = append(extra, StartName...)
		extra = append(extra, 0x00)
		extra = appendU32(extra, m.start)
	}
	count := appendU32(nil, n)
	out = append(out, secExport)
	out = appendU32(out, uint32(len(count)+len(body)+len(extra)))
	out = append(out, count...)
	out = append(out, body...)
	return append(out, extra...)
}

// readMemory parses the memory section: the number of memories and the
// declared maximum of the first, -1 if it has none.
func readMemory(p []byte) (n uint32, max int64, off int, err error) {
	max = -1
	n, i, err := u32(p, 0)
	if err != nil {
		return 0, max, i, err
	}
	for k := uint32(0); k < n; k++ {
		if i >= len(p) {
			return 0, max, i, errEOF
		}
		flags := p[i]
		if flags > 1 {
			return 0, max, i, fmt.Errorf("memory limits flags %#x: %w", flags, ErrUnsupported)
		}
		var v uint32
		if _, i, err = u32(p, i+1); err != nil {
			return 0, max, i, err
		}
		if flags == 1 {
			if v, i, err = u32(p, i); err != nil {
				return 0, max, i, err
			}
			if k == 0 {
				max = int64(v)
			}
		}
	}
	if i != len(p) {
		return 0, max, i, errors.New("trailing bytes")
	}
	return n, max, i, nil
}

// appendMemory appends the memory section with every declared maximum
// removed (see the package doc); readMemory has checked the payload.
func appendMemory(out, payload []byte) []byte {
	n, i, _ := u32(payload, 0)
	body := appendU32(nil, n)
	for k := uint32(0); k < n; k++ {
		flags := payload[i]
		var min uint32
		min, i, _ = u32(payload, i+1)
		if flags == 1 {
			_, i, _ = u32(payload, i)
		}
		body = appendU32(append(body, 0x00), min)
	}
	out = append(out, secMemory)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

// appendVec appends section id whose payload is a vector (read by scan),
// with k more elements, entries, at its end.
func appendVec(out []byte, id byte, payload, entries []byte, k uint32) []byte {
	n, i, _ := u32(payload, 0)
	count := appendU32(nil, n+k)
	out = append(out, id)
	out = appendU32(out, uint32(len(count)+len(payload)-i+len(entries)))
	out = append(out, count...)
	out = append(out, payload[i:]...)
	return append(out, entries...)
}
