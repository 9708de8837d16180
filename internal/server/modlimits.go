package server

import (
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/runtime"
)

// defaultCompileTimeout, when set, replaces the runtime's default compile
// timeout for a config that gives none (a variable for the tests, whose cold
// compiles of the Go fixtures under -race can pass the runtime's minute).
var defaultCompileTimeout time.Duration

// moduleLimits are the [limits] module limits for the engine; zero fields
// take the runtime's defaults (config.Validate has checked the ranges).
func moduleLimits(l config.Limits) runtime.ModuleLimits {
	compile := time.Duration(l.CompileTimeout)
	if compile == 0 {
		compile = defaultCompileTimeout
	}
	return runtime.ModuleLimits{
		TableElements:  uint32(l.MaxTableElements),
		ModuleSize:     uint64(l.MaxModuleSize),
		Functions:      uint32(l.MaxFunctions),
		FunctionSize:   uint32(l.MaxFunctionSize),
		Locals:         uint32(l.MaxLocals),
		Nesting:        uint32(l.MaxNesting),
		BrTable:        uint32(l.MaxBrTable),
		Globals:        uint32(l.MaxGlobals),
		Segments:       uint32(l.MaxSegments),
		CompileTimeout: compile,
	}
}
