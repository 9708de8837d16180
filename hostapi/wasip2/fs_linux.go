//go:build linux

package wasip2

import (
	"io/fs"
	"syscall"
	"time"
)

// statExtra returns what fs.FileInfo lacks: access and status-change
// times and the link count.
func statExtra(fi fs.FileInfo) (atime, ctime time.Time, nlink uint64) {
	s, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return time.Time{}, time.Time{}, 1
	}
	return time.Unix(s.Atim.Unix()), time.Unix(s.Ctim.Unix()), uint64(s.Nlink)
}

// fileID returns the device and inode of a file.
func fileID(fi fs.FileInfo) (uint64, uint64) {
	if s, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(s.Dev), uint64(s.Ino)
	}
	return 0, 0
}
