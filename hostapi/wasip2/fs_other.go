//go:build !linux

package wasip2

import (
	"io/fs"
	"time"
)

func statExtra(fs.FileInfo) (atime, ctime time.Time, nlink uint64) {
	return time.Time{}, time.Time{}, 1
}

func fileID(fs.FileInfo) (uint64, uint64) { return 0, 0 }
