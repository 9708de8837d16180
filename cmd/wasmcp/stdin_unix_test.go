//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestPollable: serve's standard input, when it is a pipe or a socket,
// is read through the runtime's poller (a read deadline works, which it
// does only for a pollable file) and still delivers what is written; a
// regular file is returned as it is.
func TestPollable(t *testing.T) {
	blockingPipe := func(t *testing.T) (*os.File, *os.File) {
		var fds [2]int
		if err := syscall.Pipe(fds[:]); err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "pipe-r"), os.NewFile(uintptr(fds[1]), "pipe-w")
	}
	socketPair := func(t *testing.T) (*os.File, *os.File) {
		fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		return os.NewFile(uintptr(fds[0]), "sock-r"), os.NewFile(uintptr(fds[1]), "sock-w")
	}
	for _, tc := range []struct {
		name string
		open func(*testing.T) (*os.File, *os.File)
	}{
		{"blocking pipe", blockingPipe},
		{"socket pair", socketPair},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, w := tc.open(t)
			defer r.Close()
			defer w.Close()
			if err := r.SetReadDeadline(time.Now()); !errors.Is(err, os.ErrNoDeadline) {
				t.Fatalf("the test's own descriptor is already pollable (SetReadDeadline: %v)", err)
			}
			p := pollable(r, os.Stdout)
			if p == r {
				t.Fatal("pollable returned the blocking file")
			}
			defer p.Close()
			if err := p.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
				t.Fatalf("SetReadDeadline: %v (not pollable)", err)
			}
			buf := make([]byte, 16)
			if _, err := p.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read of an empty pipe past its deadline: %v", err)
			}
			if err := p.SetReadDeadline(time.Time{}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.Write([]byte("hello\n")); err != nil {
				t.Fatal(err)
			}
			n, err := p.Read(buf)
			if err != nil || string(buf[:n]) != "hello\n" {
				t.Fatalf("read %q, %v", buf[:n], err)
			}
		})
	}
	t.Run("regular file", func(t *testing.T) {
		f, err := os.Create(filepath.Join(t.TempDir(), "in"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if p := pollable(f, os.Stdout); p != f {
			t.Fatal("a regular file was replaced")
		}
	})
	t.Run("one socket for both directions", func(t *testing.T) {
		r, w := socketPair(t)
		defer r.Close()
		defer w.Close()
		if p := pollable(r, r); p != r {
			p.Close()
			t.Fatal("a socket that is also the output was made non-blocking")
		}
	})
}
