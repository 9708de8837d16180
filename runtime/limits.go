package runtime

import (
	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// ModuleLimits bounds what a module may declare, checked by
// Engine.Compile before wazero decodes it, and how long compiling it may
// take, so that loading a hostile module costs bounded memory and time.
// Zero fields take the defaults of DefaultModuleLimits. A module past a
// limit is refused with a KindBadModule error naming the limit, the value
// and the [limits] key.
//
// It is the instrumenter's own Limits, so that the checks and their
// configuration are one struct: its fields (TableElements, ModuleSize,
// Functions, FunctionSize, Locals, Nesting, BrTable, Globals, Segments,
// CompileTimeout), their [limits] keys and their defaults are documented
// in runtime/internal/instrument/limits.go.
type ModuleLimits = instrument.Limits

// DefaultModuleLimits are the limits used for zero fields of ModuleLimits.
func DefaultModuleLimits() ModuleLimits { return instrument.DefaultLimits() }

// MaxModuleSize is the module-size limit Compile applies, in bytes: a
// loader reads no more of a file than this (and one byte to tell).
func (e *Engine) MaxModuleSize() uint64 { return e.cfg.Modules.ModuleSize }
