//go:build !unix

package main

import "os"

// pollable returns f: only Unix pipes and sockets are made pollable (see
// stdin_unix.go).
func pollable(f, _ *os.File) *os.File { return f }
