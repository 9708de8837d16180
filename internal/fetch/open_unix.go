//go:build unix

package fetch

import (
	"os"
	"syscall"
)

// openNonblock opens path read-only with O_NONBLOCK: opening a FIFO with
// no writer returns at once instead of waiting for one.
func openNonblock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
