package instrument

import (
	"errors"
	"fmt"
)

// The instrumented module has more globals (the flag and the fuel) and
// more locals (a function's budget and scratch) than the original, so an
// index past the original's would become valid and let guest code read
// and write the host's counters (storing a large fuel in a loop would
// never exit to Go nor see the flag). Instrument therefore validates every
// index it passes through against the original module's index spaces and
// refuses an out-of-range one with ErrMalformed, whatever wazero would
// have said about the original.

// indexError reports index v of an index space of n entries.
func indexError(what string, v, n uint32) error {
	return fmt.Errorf("%s index %d out of range (the module has %d)", what, v, n)
}

// index checks v < n.
func index(what string, v, n uint32) error {
	if v >= n {
		return indexError(what, v, n)
	}
	return nil
}

func (m *module) types() uint32   { return uint32(len(m.params)) }
func (m *module) funcs() uint32   { return m.importFuncs + uint32(len(m.funcTypes)) }
func (m *module) globals() uint32 { return m.importGlobals + m.definedGlobals }
func (m *module) tables() uint32  { return m.importTables + uint32(len(m.tableLimits)) }

// constExpr skips a constant expression at p[i:] up to and including its
// end, checking its global and function indices.
func (m *module) constExpr(p []byte, i int) (int, error) {
	for {
		if i >= len(p) {
			return i, errEOF
		}
		op := p[i]
		i++
		var err error
		switch op {
		case 0x0b: // end
			return i, nil
		case 0x41:
			i, err = skipS32(p, i)
		case 0x42:
			i, err = skipS64(p, i)
		case 0x43:
			i, err = skipBytes(p, i, 4)
		case 0x44:
			i, err = skipBytes(p, i, 8)
		case 0xd0: // ref.null
			_, i, err = s33(p, i)
		case 0xd2, 0x23: // ref.func, global.get
			var v uint32
			if v, i, err = u32(p, i); err == nil {
				if op == 0x23 {
					err = index("global", v, m.globals())
				} else if err = index("function", v, m.funcs()); err == nil {
					m.taken = append(m.taken, v)
				}
			}
		case 0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e: // extended constants: add, sub, mul
		case 0xfd: // v128.const
			var sub uint32
			if sub, i, err = u32(p, i); err == nil {
				if sub != 12 {
					return i, fmt.Errorf("constant expression opcode 0xfd %d: %w", sub, ErrUnsupported)
				}
				i, err = skipBytes(p, i, 16)
			}
		default:
			return i - 1, fmt.Errorf("constant expression opcode %#02x: %w", op, ErrUnsupported)
		}
		if err != nil {
			return i, err
		}
	}
}

// endOf returns i, or an error if section payload p goes on after it.
func endOf(p []byte, i int) (int, error) {
	if i != len(p) {
		return i, errors.New("trailing bytes")
	}
	return i, nil
}

// readGlobals parses the global section.
func (m *module) readGlobals(p []byte) (int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return i, err
	}
	m.definedGlobals = n
	for k := uint32(0); k < n; k++ {
		if i, err = skipValType(p, i); err != nil {
			return i, err
		}
		if i, err = skipBytes(p, i, 1); err != nil { // mutability
			return i, err
		}
		if i, err = m.constExpr(p, i); err != nil {
			return i, err
		}
	}
	return endOf(p, i)
}

// readTables parses the table section and records each table's limits
// (rewritten by appendTable).
func (m *module) readTables(p []byte) (int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return i, err
	}
	for k := uint32(0); k < n; k++ {
		var t tableLimits
		t.at = i
		if i, err = skipValType(p, i); err != nil {
			return i, err
		}
		if i >= len(p) {
			return i, errEOF
		}
		flags := p[i]
		if flags > 1 {
			return i, fmt.Errorf("table limits flags %#x: %w", flags, ErrUnsupported)
		}
		t.limits = i
		if t.min, i, err = u32(p, i+1); err != nil {
			return i, err
		}
		if flags == 1 {
			t.hasMax = true
			if t.max, i, err = u32(p, i); err != nil {
				return i, err
			}
		}
		t.end = i
		m.tableLimits = append(m.tableLimits, t)
	}
	return endOf(p, i)
}

// tableLimits is one defined table: its entry at p[at:end] of the table
// section, its limits from p[limits:end].
type tableLimits struct {
	at, limits, end int
	min, max        uint32
	hasMax          bool
	newMax          uint32 // the maximum in the output (see checkTables)
}

// readElems parses the element section (the eight forms of the spec,
// §5.5.12), checking table, function and global indices.
func (m *module) readElems(p []byte) (int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return i, err
	}
	m.elems = n
	for k := uint32(0); k < n; k++ {
		var flags uint32
		at := i
		if flags, i, err = u32(p, i); err != nil {
			return i, err
		}
		if flags > 7 {
			return at, fmt.Errorf("element segment flags %d: %w", flags, ErrUnsupported)
		}
		if flags&3 == 2 { // explicit table index
			var t uint32
			if t, i, err = u32(p, i); err == nil {
				err = index("table", t, m.tables())
			}
		} else if flags&1 == 0 { // active on table 0
			err = index("table", 0, m.tables())
		}
		if err != nil {
			return i, err
		}
		if flags&1 == 0 { // active: the offset
			if i, err = m.constExpr(p, i); err != nil {
				return i, err
			}
		}
		if flags&3 != 0 { // element kind or reference type
			if flags&4 == 0 {
				i, err = skipBytes(p, i, 1)
			} else {
				i, err = skipValType(p, i)
			}
			if err != nil {
				return i, err
			}
		}
		var c uint32
		if c, i, err = u32(p, i); err != nil {
			return i, err
		}
		for e := uint32(0); e < c; e++ {
			if flags&4 == 0 {
				var f uint32
				if f, i, err = u32(p, i); err == nil {
					if err = index("function", f, m.funcs()); err == nil {
						m.taken = append(m.taken, f)
					}
				}
			} else {
				i, err = m.constExpr(p, i)
			}
			if err != nil {
				return i, err
			}
		}
	}
	return endOf(p, i)
}

// readData parses the data section, checking memory and global indices
// and the data count.
func (m *module) readData(p []byte) (int, error) {
	n, i, err := u32(p, 0)
	if err != nil {
		return i, err
	}
	if m.hasDataCount && n != m.dataCount {
		return i, fmt.Errorf("%d data segments, the data count section says %d", n, m.dataCount)
	}
	m.datas = n
	for k := uint32(0); k < n; k++ {
		var flags uint32
		at := i
		if flags, i, err = u32(p, i); err != nil {
			return i, err
		}
		switch flags {
		case 0:
			err = index("memory", 0, m.memories)
		case 1:
		case 2:
			var mem uint32
			if mem, i, err = u32(p, i); err == nil {
				err = index("memory", mem, m.memories)
			}
		default:
			return at, fmt.Errorf("data segment flags %d: %w", flags, ErrUnsupported)
		}
		if err != nil {
			return i, err
		}
		if flags != 1 {
			if i, err = m.constExpr(p, i); err != nil {
				return i, err
			}
		}
		if _, i, err = skipName(p, i); err != nil { // the bytes: a vec(byte) like a name
			return i, err
		}
	}
	return endOf(p, i)
}

// checkExport checks the index of an export of the given kind.
func (m *module) checkExport(kind byte, v uint32) error {
	switch kind {
	case 0:
		return index("function", v, m.funcs())
	case 1:
		return index("table", v, m.tables())
	case 2:
		return index("memory", v, m.memories)
	case 3:
		return index("global", v, m.globals())
	}
	return fmt.Errorf("export kind %#x: %w", kind, ErrUnsupported)
}
