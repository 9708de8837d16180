//go:build !linux

package runtime

import (
	"os"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// futimens is not implemented here: setting an open file's times needs
// the platform's futimens, and reopening by path is what a mount must
// not do.
func futimens(*os.File, int64, int64) experimentalsys.Errno {
	return experimentalsys.ENOSYS
}
