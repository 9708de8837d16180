package plugins

import (
	"fmt"
	"io/fs"
	"syscall"
	"time"
)

// settled is how long ago a file must have last changed to have an
// identity (a variable for the tests, whose files are new).
var settled = 2 * time.Second

// fileIdentity names the file fi describes as it is now: its device and
// inode, size, and modification and change times. Every write or chmod
// sets the change time, which only the kernel sets, so a file with the
// same identity later has the same content, as git's index and build
// tools assume. It is "" for a file changed in the last two seconds
// (timestamps are coarser than writes: a second write within the same
// tick would keep the identity) and for a FileInfo without these fields.
func fileIdentity(fi fs.FileInfo, now time.Time) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	if now.Sub(time.Unix(st.Ctim.Sec, st.Ctim.Nsec)) < settled {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d.%09d:%d.%09d", st.Dev, st.Ino, fi.Size(), st.Mtim.Sec, st.Mtim.Nsec, st.Ctim.Sec, st.Ctim.Nsec)
}
