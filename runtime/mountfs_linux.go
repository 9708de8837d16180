package runtime

import (
	"os"
	"syscall"
	"unsafe"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// futimens sets f's times through its descriptor: utimensat with a NULL
// path, which is how Linux spells futimens.
func futimens(f *os.File, atim, mtim int64) experimentalsys.Errno {
	ts := [2]unix.Timespec{timespec(atim), timespec(mtim)}
	rc, err := f.SyscallConn()
	if err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall6(unix.SYS_UTIMENSAT, fd, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	}); err != nil {
		return experimentalsys.UnwrapOSError(err)
	}
	if errno != 0 {
		return experimentalsys.UnwrapOSError(errno)
	}
	return 0
}

func timespec(ns int64) unix.Timespec {
	if ns == experimentalsys.UTIME_OMIT {
		return unix.Timespec{Nsec: unix.UTIME_OMIT}
	}
	return unix.NsecToTimespec(ns)
}
