package server

import (
	"github.com/wasmcp/wasmcp/internal/config"
	"github.com/wasmcp/wasmcp/runtime"
)

// moduleLimits are the [limits] module limits for the engine; zero fields
// take the runtime's defaults (config.Validate has checked the ranges).
func moduleLimits(l config.Limits) runtime.ModuleLimits {
	return runtime.ModuleLimits{
		TableElements: uint32(l.MaxTableElements),
	}
}
