package instrument

import (
	"fmt"
	"math"
	"time"
)

// Limits bounds what a module may declare, so that loading it (decoding,
// compiling, instantiating) costs the host a bounded amount of memory and
// time. It is also runtime.ModuleLimits (an alias): the engine's
// configuration, whose zero fields the engine sets from DefaultLimits
// (WithDefaults) before it checks a module; Instrument and Bound, given a
// zero field, do not check it. Each field names the [limits] key of the
// server's configuration that sets it, which LimitError reports.
//
// The defaults leave every plugin in the repository (Go ones are 3–5 MB,
// with about 3,000 functions, 53,000 data segments, blocks nested 616
// deep and br_tables of 1,144 targets per function) far inside them, and
// bound what wazero's compiler does superlinearly: its time grows with the
// square of the nesting depth and of the branch targets to one block.
type Limits struct {
	// TableElements (max_table_elements) bounds the entries of the
	// module's tables, summed: a module whose minimums add up to more is
	// refused, and every defined table's maximum is rewritten so that the
	// tables can never grow past it together (table.grow beyond returns
	// -1, as the spec has it for a declared maximum). Tables are outside
	// the memory limit, so this is what bounds them (8 bytes or more per
	// entry, per instance).
	TableElements uint32
	// ModuleSize (max_module_size) bounds the module's size in bytes.
	ModuleSize uint64
	// Functions (max_functions) bounds the functions, imported and
	// defined, and the types and the exports, each: about 400 bytes of
	// host memory per function, and compile time; 200 per type or export,
	// which takes 3 bytes (500,000 types in 1.5 MB cost 90 MiB of heap).
	Functions uint32
	// FunctionSize (max_function_size) bounds the size of one function
	// body in bytes.
	FunctionSize uint32
	// Locals (max_locals) bounds the locals of one function, parameters
	// included: a few bytes declare billions.
	Locals uint32
	// Nesting (max_nesting) bounds the depth of blocks, loops and ifs in
	// one function.
	Nesting uint32
	// BrTable (max_br_table) bounds the br_table targets of one function,
	// summed.
	BrTable uint32
	// Globals (max_globals) bounds the globals, imported and defined:
	// about 250 bytes of host memory each, plus some per instance.
	Globals uint32
	// Segments (max_segments) bounds the data and element segments,
	// together: about 80 bytes each.
	Segments uint32
	// CompileTimeout (compile_timeout) bounds the compilation of one
	// module, which the runtime applies (Instrument and Bound do not look
	// at it): past it the runtime's Compile gives up with an error.
	// wazero stops the abandoned compilation at its next function
	// boundary (it checks the context between functions, with two
	// workers or more, which the runtime always uses), so the limits
	// above are what bound the CPU it still spends on the function at
	// hand.
	CompileTimeout time.Duration
}

// DefaultLimits are the limits used for zero fields of Limits.
func DefaultLimits() Limits {
	return Limits{
		TableElements:  1 << 20,
		ModuleSize:     32 << 20,
		Functions:      100_000,
		FunctionSize:   1 << 20,
		Locals:         50_000,
		Nesting:        2048,
		BrTable:        32768,
		Globals:        10_000,
		Segments:       500_000,
		CompileTimeout: time.Minute,
	}
}

// WithDefaults returns l with its zero fields set from DefaultLimits.
func WithDefaults(l Limits) Limits {
	d := DefaultLimits()
	set := func(v *uint32, d uint32) {
		if *v == 0 {
			*v = d
		}
	}
	set(&l.TableElements, d.TableElements)
	set(&l.Functions, d.Functions)
	set(&l.FunctionSize, d.FunctionSize)
	set(&l.Locals, d.Locals)
	set(&l.Nesting, d.Nesting)
	set(&l.BrTable, d.BrTable)
	set(&l.Globals, d.Globals)
	set(&l.Segments, d.Segments)
	if l.ModuleSize == 0 {
		l.ModuleSize = d.ModuleSize
	}
	if l.CompileTimeout == 0 {
		l.CompileTimeout = d.CompileTimeout
	}
	return l
}

// MaxTables bounds the number of tables a module may define or import.
const MaxTables = 64

// LimitError is returned for a module past one of its Limits.
type LimitError struct {
	What  string // what is over the limit, e.g. "function 12's locals"
	Value uint64 // its value
	Max   uint64 // the limit
	Key   string // the [limits] key that sets the limit; "" for a fixed one
}

// Error names the value, the limit and its key.
func (e *LimitError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %d, over the fixed limit of %d", e.What, e.Value, e.Max)
	}
	return fmt.Sprintf("%s: %d, over the limit of %d ([limits] %s)", e.What, e.Value, e.Max, e.Key)
}

// over returns a *LimitError if v > max and max is set.
func over(what string, v, max uint64, key string) error {
	if max != 0 && v > max {
		return &LimitError{What: what, Value: v, Max: max, Key: key}
	}
	return nil
}

// checkTables checks the tables against lim and decides each defined
// table's new maximum: its declared maximum, or less so that the maxima
// add up to at most lim.TableElements (the room above the minimums is
// shared evenly). With TableElements set, an imported table is refused
// unless linked (see InstrumentLinked).
func (m *module) checkTables(lim Limits, linked bool) error {
	if n := uint64(m.tables()); n > MaxTables {
		return &LimitError{What: "tables", Value: n, Max: MaxTables}
	}
	if lim.TableElements == 0 {
		return nil
	}
	if m.importTables > 0 && !linked {
		return fmt.Errorf("an imported table cannot be bounded by max_table_elements: %w", ErrUnsupported)
	}
	var sum uint64
	for _, t := range m.tableLimits {
		sum += uint64(t.min)
	}
	if err := over("the tables' minimum entries", sum, uint64(lim.TableElements), "max_table_elements"); err != nil {
		return err
	}
	if len(m.tableLimits) == 0 {
		return nil
	}
	share := (uint64(lim.TableElements) - sum) / uint64(len(m.tableLimits))
	for k := range m.tableLimits {
		t := &m.tableLimits[k]
		max := min(uint64(t.min)+share, math.MaxUint32)
		if t.hasMax && uint64(t.max) < max {
			max = uint64(t.max)
		}
		t.newMax = uint32(max)
	}
	return nil
}

// appendTable appends the table section with the maxima checkTables
// decided (the payload as is without a limit).
func (m *module) appendTable(out, payload []byte, lim Limits) []byte {
	if lim.TableElements == 0 {
		out = append(out, secTable)
		out = appendU32(out, uint32(len(payload)))
		return append(out, payload...)
	}
	var body []byte
	body = appendU32(body, uint32(len(m.tableLimits)))
	for _, t := range m.tableLimits {
		body = append(body, payload[t.at:t.limits]...) // the reference type
		body = append(body, 0x01)
		body = appendU32(body, t.min)
		body = appendU32(body, t.newMax)
	}
	out = append(out, secTable)
	out = appendU32(out, uint32(len(body)))
	return append(out, body...)
}

// checkCounts checks the module-wide counts against lim (the code is
// checked as it is decoded, see scanBody). Imports count as what they
// import; more than one memory (multiple memories, outside
// api.CoreFeaturesV2) is unsupported, whatever the limits.
func (m *module) checkCounts(lim Limits) error {
	if m.memories > 1 {
		return fmt.Errorf("%d memories: %w", m.memories, ErrUnsupported)
	}
	for _, c := range []struct {
		what string
		v    uint64
		max  uint32
		key  string
	}{
		{"functions", uint64(m.importFuncs) + uint64(len(m.funcTypes)), lim.Functions, "max_functions"},
		{"types", uint64(len(m.params)), lim.Functions, "max_functions"},
		{"exports", uint64(m.exports), lim.Functions, "max_functions"},
		{"globals", uint64(m.importGlobals) + uint64(m.definedGlobals), lim.Globals, "max_globals"},
		{"data and element segments", uint64(m.elems) + uint64(m.datas), lim.Segments, "max_segments"},
	} {
		if err := over(c.what, c.v, uint64(c.max), c.key); err != nil {
			return err
		}
	}
	return nil
}
