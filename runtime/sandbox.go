package runtime

import (
	"crypto/rand"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

const (
	// maxSleep caps one guest sleep (poll_oneoff): long sleeps become many
	// short ones, so the call's deadline still fires (WithSysNanosleep would
	// ignore it).
	maxSleep = 10 * time.Millisecond
	// stdioCap is how many bytes of stdout and of stderr one call may send
	// to Sandbox.Output; the rest is dropped.
	stdioCap = 64 << 10
	// stderrKeep is how much of a call's stderr is kept for classifying a
	// failure (Go panics and fatal errors print their reason first).
	stderrKeep = 4 << 10
)

func cappedSleep(ns int64) {
	time.Sleep(min(time.Duration(ns), maxSleep))
}

// moduleConfig builds the sandbox every instance of a pool starts from:
// no arguments, only the granted environment and mounts (and outsideFS at
// "/" around them), empty stdin,
// crypto randomness, real clocks, capped sleep.
func moduleConfig(sb Sandbox, start string) (wazero.ModuleConfig, error) {
	mc := wazero.NewModuleConfig().
		WithName("").
		WithRandSource(rand.Reader).
		WithSysWalltime().
		WithSysNanotime().
		WithNanosleep(cappedSleep)
	if start != "" {
		mc = mc.WithStartFunctions(start)
	} else {
		mc = mc.WithStartFunctions()
	}
	for _, k := range slices.Sorted(maps.Keys(sb.Env)) {
		mc = mc.WithEnv(k, sb.Env[k])
	}
	fc := wazero.NewFSConfig()
	var guestPaths []string
	for _, mt := range sb.Mounts {
		st, err := os.Stat(mt.HostPath)
		if err != nil {
			return nil, fmt.Errorf("mount %s: %w", mt.GuestPath, err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("mount %s: host path is not a directory", mt.GuestPath)
		}
		if mt.GuestPath == "" || mt.GuestPath[0] != '/' {
			return nil, fmt.Errorf("mount %q: guest path must be absolute", mt.GuestPath)
		}
		mfs, err := mountFS(mt)
		if err != nil {
			return nil, err
		}
		fc = fc.(sysfs.FSConfig).WithSysFSMount(mfs, mt.GuestPath)
		guestPaths = append(guestPaths, mt.GuestPath)
	}
	if !slices.ContainsFunc(guestPaths, func(gp string) bool { return path.Clean(gp) == "/" }) {
		// Last, so that the mounts keep descriptors 3, 4, …
		fc = fc.(sysfs.FSConfig).WithSysFSMount(newOutsideFS(guestPaths), "/")
	}
	return mc.WithFSConfig(fc), nil
}

// lockedWriter serialises a pool's instances writing to Sandbox.Output.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	if l == nil || l.w == nil {
		return len(p), nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// stdioSink is an instance's stdout or stderr: it forwards up to stdioCap
// bytes per call to the pool's output and, for stderr, keeps the first
// stderrKeep bytes for classification. It never fails and never blocks the
// guest on a slow reader beyond the writer's own cost.
type stdioSink struct {
	out  *lockedWriter
	n    int    // bytes seen this call
	keep []byte // stderr head, nil for stdout
	head bool
}

func (s *stdioSink) reset() {
	s.n = 0
	if s.head {
		s.keep = s.keep[:0]
	}
}

func (s *stdioSink) Write(p []byte) (int, error) {
	if s.head && len(s.keep) < stderrKeep {
		s.keep = append(s.keep, p[:min(len(p), stderrKeep-len(s.keep))]...)
	}
	if s.n < stdioCap {
		q := p[:min(len(p), stdioCap-s.n)]
		_, _ = s.out.Write(q)
	}
	s.n += len(p)
	return len(p), nil
}

// stdoutOutput is a command-mode instance's stdout: the response. It panics
// with errOutputTooLarge on the first byte over the cap, which aborts the
// guest call (guests ignore write errors).
type stdoutOutput struct{ st *callState }

func (w stdoutOutput) Write(p []byte) (int, error) {
	if len(w.st.out)+len(p) > w.st.maxOut {
		panic(&importTrap{fn: "stdout", err: errOutputTooLarge})
	}
	w.st.out = append(w.st.out, p...)
	return len(p), nil
}
