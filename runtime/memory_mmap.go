//go:build linux || darwin

package runtime

import "syscall"

// mmapSupported reports whether linear memories can be reserved outside
// the Go heap (see limitedMemory.reserve).
const mmapSupported = true

// mmapReserve maps n bytes of private, anonymous, zeroed memory without
// reserving swap: pages cost memory only once touched.
func mmapReserve(n uint64) ([]byte, error) {
	return syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|mapNoReserve)
}

// mmapRelease unmaps a mapping made by mmapReserve.
func mmapRelease(b []byte) { _ = syscall.Munmap(b) }
