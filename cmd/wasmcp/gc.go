package main

import "os"

// ballastSize is the collector's floor for wasmcp serve: the heap a
// serving process holds is small (a few MiB: the plugins' linear memories
// are outside the Go heap), so at the default GOGC=100 the collector
// would run every time a few MiB were allocated, about 30 times a second
// under a load of small calls, and spend some 15 % of the server's CPU
// on it. A ballast of 16 MiB moves the first collection to about 36 MiB
// and the rate down by about 7x.
const ballastSize = 16 << 20

// ballast holds the floor (setHeapFloor). It is never written, so the
// kernel never gives it pages: it costs address space, not memory.
var ballast []byte

// setHeapFloor gives the collector its floor, unless the operator tuned
// the collector with GOGC or GOMEMLIMIT, which are then left to act
// alone.
func setHeapFloor() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	ballast = make([]byte, ballastSize)
}
