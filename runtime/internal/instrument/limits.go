package instrument

import (
	"fmt"
	"math"
)

// Limits bounds what a module may declare, so that loading it (decoding,
// compiling, instantiating) costs the host a bounded amount of memory and
// time. A zero field is not checked. Each field names the [limits] key of
// the server's configuration that sets it, which LimitError reports.
type Limits struct {
	// TableElements (max_table_elements) bounds the entries of the
	// module's tables, summed: a module whose minimums add up to more is
	// refused, and every defined table's maximum is rewritten so that the
	// tables can never grow past it together (table.grow beyond returns
	// -1, as the spec has it for a declared maximum).
	TableElements uint32
	// ModuleSize (max_module_size) bounds the module's size in bytes.
	ModuleSize uint64
	// Functions (max_functions) bounds the functions, imported and
	// defined, and the types and the exports, each (wazero keeps about
	// 200 bytes of heap for each type or export, and each takes 3 bytes).
	Functions uint32
	// FunctionSize (max_function_size) bounds the size of one function
	// body in bytes.
	FunctionSize uint32
	// Locals (max_locals) bounds the locals of one function, parameters
	// included.
	Locals uint32
	// Nesting (max_nesting) bounds the depth of blocks, loops and ifs in
	// one function.
	Nesting uint32
	// BrTable (max_br_table) bounds the targets of one br_table.
	BrTable uint32
	// Globals (max_globals) bounds the globals, imported and defined.
	Globals uint32
	// Segments (max_segments) bounds the data and element segments,
	// together.
	Segments uint32
	// LinkedTables lets a module import tables, left as they are, when
	// TableElements is set (otherwise refused, since an imported table
	// cannot be bounded): for the core modules of a component, whose
	// imported tables are defined, and bounded, by another of them.
	LinkedTables bool
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
// shared evenly).
func (m *module) checkTables(lim Limits) error {
	if n := uint64(m.tables()); n > MaxTables {
		return &LimitError{What: "tables", Value: n, Max: MaxTables}
	}
	if lim.TableElements == 0 {
		return nil
	}
	if m.importTables > 0 && !lim.LinkedTables {
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
