//go:build !unix

package testutil

import "time"

// CPUTime returns the CPU time the process has used, or 0 where it is
// not known (here).
func CPUTime() time.Duration { return 0 }
