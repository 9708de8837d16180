//go:build unix

package testutil

import (
	"syscall"
	"time"
)

// CPUTime returns the CPU time (user and system) the process has used,
// or 0 where it is not known.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
