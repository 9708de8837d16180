package testutil

import (
	"os"
	"testing"
)

// WallClockEnv names the environment variable that picks out the
// wall-clock tests (WallClock): set to "skip", it skips them.
const WallClockEnv = "WASMCP_WALLCLOCK"

// WallClock marks t as a wall-clock test: one whose assertion depends on
// elapsed real time and that cannot run on testing/synctest's fake clock,
// because what it times runs outside a bubble's reach (guest code
// spinning in wazero's native code, a real process, socket or Redis).
// Tests of clock-driven logic that a bubble can hold (limiters,
// deadlines, expiry, strikes) run on the fake clock instead.
//
// WallClock must be the test function's first statement:
// scripts/test.sh finds the wall-clock tests by it. The script runs the
// other tests with $WASMCP_WALLCLOCK=skip, then the wall-clock ones
// alone, in its "wall-clock tests" step, so that each test runs once and
// a timing failure is reported apart. A plain go test runs them all.
func WallClock(t testing.TB) {
	t.Helper()
	if os.Getenv(WallClockEnv) == "skip" {
		t.Skip("a wall-clock test: scripts/test.sh runs it in its \"wall-clock tests\" step")
	}
}
