package runtime

import (
	"time"

	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// ModuleLimits bounds what a module may declare, checked by
// Engine.Compile before wazero decodes it, and how long compiling it may
// take, so that loading a hostile module costs bounded memory and time.
// Zero fields take the defaults of DefaultModuleLimits. A module past a
// limit is refused with a KindBadModule error naming the limit, the value
// and the [limits] key.
//
// The defaults leave every plugin in the repository (Go ones are 3–5 MB,
// with about 3,000 functions, 53,000 data segments, blocks nested 616
// deep and br_tables of 1,144 targets per function) far inside them, and
// bound what wazero's compiler does superlinearly: its time grows with the
// square of the nesting depth and of the branch targets to one block.
type ModuleLimits struct {
	// TableElements bounds the entries of a module's tables, summed over
	// them ([limits] max_table_elements): a module whose minimums add up
	// to more is refused, and the tables' maxima are rewritten so that
	// table.grow past it returns -1. Tables are outside the memory limit,
	// so this is what bounds them (8 bytes or more per entry, per
	// instance).
	TableElements uint32
	// ModuleSize bounds the module's size in bytes (max_module_size).
	ModuleSize uint64
	// Functions bounds the functions, imported and defined, and the
	// types and the exports, each (max_functions): about 400 bytes of
	// host memory per function, and compile time; 200 per type or
	// export (500,000 types in 1.5 MB cost 90 MiB of heap).
	Functions uint32
	// FunctionSize bounds one function body, in bytes
	// (max_function_size).
	FunctionSize uint32
	// Locals bounds the locals of one function, parameters included
	// (max_locals): a few bytes declare billions.
	Locals uint32
	// Nesting bounds the depth of blocks, loops and ifs in one function
	// (max_nesting).
	Nesting uint32
	// BrTable bounds the br_table targets of one function, summed
	// (max_br_table).
	BrTable uint32
	// Globals bounds the globals, imported and defined (max_globals):
	// about 250 bytes of host memory each, plus some per instance.
	Globals uint32
	// Segments bounds the data and element segments together
	// (max_segments): about 80 bytes each.
	Segments uint32
	// CompileTimeout bounds the compilation of one module
	// (compile_timeout); past it Compile gives up with an error. wazero
	// stops the abandoned compilation at its next function boundary (it
	// checks the context between functions, with two workers or more,
	// which Compile always uses), so the limits above are what bound the
	// CPU it still spends on the function at hand.
	CompileTimeout time.Duration
}

// DefaultModuleLimits are the limits used for zero fields of ModuleLimits.
func DefaultModuleLimits() ModuleLimits {
	return ModuleLimits{
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

// withDefaults returns l with zero fields set to the defaults.
func (l ModuleLimits) withDefaults() ModuleLimits {
	d := DefaultModuleLimits()
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

// MaxModuleSize is the module-size limit Compile applies, in bytes: a
// loader reads no more of a file than this (and one byte to tell).
func (e *Engine) MaxModuleSize() uint64 { return e.cfg.Modules.withDefaults().ModuleSize }

// instrumentLimits are the limits the instrumenter checks.
func (l ModuleLimits) instrumentLimits() instrument.Limits {
	return instrument.Limits{
		TableElements: l.TableElements,
		ModuleSize:    l.ModuleSize,
		Functions:     l.Functions,
		FunctionSize:  l.FunctionSize,
		Locals:        l.Locals,
		Nesting:       l.Nesting,
		BrTable:       l.BrTable,
		Globals:       l.Globals,
		Segments:      l.Segments,
	}
}
