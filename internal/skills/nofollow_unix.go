//go:build unix

package skills

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW
