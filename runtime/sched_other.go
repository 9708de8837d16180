//go:build !linux

package runtime

// osYield does nothing outside Linux (see sched_linux.go), so there a
// background call does not yield at its probes at all; foreground calls
// still yield to the Go scheduler (see scheduler's doc).
func osYield() {}
