//go:build !unix

package fetch

import "os"

// openNonblock opens path read-only (its type was checked before).
func openNonblock(path string) (*os.File, error) { return os.Open(path) }
