//go:build unix

package telemetry

import (
	"net"
	"syscall"
)

// peerClosed reports whether the peer of the idle connection c has
// closed it (its end of stream or a reset is waiting), or, when strict,
// sent anything at all (an HTTP server says something unasked, such as
// a 408, only before it closes), without waiting and without consuming
// what is there.
func peerClosed(c net.Conn, strict bool) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	_ = rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		closed = err == nil && (n == 0 || strict) || err == syscall.ECONNRESET
		return true // never wait
	})
	return closed
}

const peekable = true // peerClosed sees a closed connection
