package server

import (
	"time"

	"github.com/wasmcp/wasmcp/internal/testutil"
)

// The tests expect every configured plugin at the first request: under the
// race detector, with a cold compilation cache, on a loaded machine, a Go
// plugin can take longer than the 30 s a real server waits at startup
// (TestSlotShareKeys saw its plugin still loading). Tests of slow loading
// set Options.LoadWait themselves.
// Likewise a cold compile of a 4-5 MB Go fixture under -race at load 15
// took longer than the runtime's default compile timeout of a minute
// (TestHostilePlugins and TestLoad failed so in a clean-clone run); the
// bound itself has its own test, which sets it.
func init() {
	defaultLoadWait = 3 * time.Minute
	defaultCompileTimeout = testutil.CompileTimeout
}
