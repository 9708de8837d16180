package runtime

import "syscall"

// osYield gives the processor up to the other threads the kernel has
// ready for it (sched_yield(2)), if any; it returns at once when there is
// none. A raw system call: it never blocks, so the Go scheduler need not
// hand the P to another thread meanwhile.
func osYield() { syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0) }
