package testutil

import (
	"os"
	"path/filepath"
)

// CacheDir is the compilation cache the tests share:
// $WASMCP_TEST_CACHE (scripts/test.sh points every package at one
// directory, so that each guest compiles once), else wasmcp-test-cache in
// the temporary directory.
func CacheDir() string {
	if d := os.Getenv("WASMCP_TEST_CACHE"); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "wasmcp-test-cache")
}
