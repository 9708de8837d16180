//go:build !linux

package runtime

// osYield does nothing outside Linux (see sched_linux.go): the Go
// scheduler's yield remains.
func osYield() {}
