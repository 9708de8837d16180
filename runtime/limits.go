package runtime

import "github.com/wasmcp/wasmcp/runtime/internal/instrument"

// ModuleLimits bounds what a module may declare, checked by
// Engine.Compile before wazero decodes it, so that loading a hostile
// module costs bounded memory and time. Zero fields take the defaults of
// DefaultModuleLimits. A module past a limit is refused with a
// KindBadModule error naming the limit, the value and the [limits] key.
type ModuleLimits struct {
	// TableElements bounds the entries of a module's tables, summed over
	// them ([limits] max_table_elements): a module whose minimums add up
	// to more is refused, and the tables' maxima are rewritten so that
	// table.grow past it returns -1. Tables are outside the memory limit,
	// so this is what bounds them (8 bytes or more per entry, per
	// instance).
	TableElements uint32
}

// DefaultModuleLimits are the limits used for zero fields of ModuleLimits.
func DefaultModuleLimits() ModuleLimits {
	return ModuleLimits{TableElements: 1 << 20}
}

// withDefaults returns l with zero fields set to the defaults.
func (l ModuleLimits) withDefaults() ModuleLimits {
	d := DefaultModuleLimits()
	if l.TableElements == 0 {
		l.TableElements = d.TableElements
	}
	return l
}

// instrumentLimits are the limits the instrumenter checks.
func (l ModuleLimits) instrumentLimits() instrument.Limits {
	return instrument.Limits{TableElements: l.TableElements}
}
