//go:build unix

package main

import (
	"os"
	"syscall"
)

// pollable returns f, or a duplicate of its descriptor in non-blocking mode
// if f is a pipe or a socket, so that reads wait in the Go runtime's
// network poller instead of a blocking system call.
//
// Why: a goroutine that reads a blocking descriptor keeps its processor
// (P) while it waits in read(2). The stdio reader hands each request to a
// worker and goes back to read at once, so the worker sits in the run
// queue of a P that is stuck in a system call until the runtime's monitor
// takes the P back, 20 µs to 10 ms later. With a free processor, the
// runtime would have woken it to steal the worker; while a guest holds the
// other processor (a runaway plugin on 2 cores) there is none, and every
// request waited for the monitor: the p99 of a quick tool's calls went
// from 0.2 ms to 3.4 ms whatever the number of runaways. A reader parked
// in the poller gives its P up and the worker runs at once.
//
// Terminals and regular files are left alone (the poller cannot wait on a
// file, and O_NONBLOCK on a terminal would leak to the shell that shares
// it); so is any descriptor the flag cannot be set on. The flag is set on
// the open file description, shared with f and with the process that
// passed it: nothing else in the server reads f. For the same reason f is
// left alone when out is the same file (one socket for both directions,
// as inetd and socket activation pass it): the flag would make out's
// blocking writes fail with EAGAIN when the client reads slowly.
func pollable(f, out *os.File) *os.File {
	fi, err := f.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return f
	}
	if oi, err := out.Stat(); err != nil || os.SameFile(fi, oi) {
		return f
	}
	sc, err := f.SyscallConn()
	if err != nil {
		return f
	}
	fd := -1
	if err := sc.Control(func(s uintptr) { fd, err = syscall.Dup(int(s)) }); err != nil || fd < 0 {
		return f
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return f
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), f.Name())
}
