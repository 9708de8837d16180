package testutil

import "time"

// CompileTimeout is the compile_timeout that engines built by tests use in
// place of the runtime's one-minute default: a cold compilation of a Go
// guest (4–5 MB) under the race detector on a loaded 2-core machine has
// taken longer than a minute, which failed clean-clone CI runs. Tests of
// the timeout itself set their own.
const CompileTimeout = 10 * time.Minute
