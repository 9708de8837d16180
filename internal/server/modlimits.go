package server

import (
	"time"

	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/runtime"
)

// moduleLimits are the [limits] module limits for the engine; zero fields
// take the runtime's defaults (config.Validate has checked the ranges).
func moduleLimits(l config.Limits) runtime.ModuleLimits {
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
		CompileTimeout: time.Duration(l.CompileTimeout),
	}
}
