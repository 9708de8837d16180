//go:build !(linux || darwin)

package runtime

import "errors"

const mmapSupported = false

func mmapReserve(uint64) ([]byte, error) { return nil, errors.New("mmap not supported") }

func mmapRelease([]byte) {}
