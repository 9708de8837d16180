package runtime

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/tetratelabs/wazero/sys"
)

// maxMessage bounds the guest-supplied part of an Error's Message.
const maxMessage = 200

var errExitedAtStart = errors.New("module exited during its start function")

// startError is a failure to instantiate or initialise an instance.
type startError struct {
	err     error
	stderr  string
	refused bool // a memory.grow was refused
}

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// ctxError turns a failure to get a call slot into an *Error.
func (p *Pool) ctxError(ctx, cctx context.Context, start time.Time, timeout time.Duration, err error) *Error {
	var re *Error
	if errors.As(err, &re) {
		return re
	}
	return p.classify(ctx, cctx, start, timeout, err, false, "")
}

// classify turns what a guest call (or instantiation) returned into an
// *Error. Order matters: the output cap and the contexts first (a deadline
// also shows up as a sys.ExitError, or as an unreachable trap in an
// instrumented module), then a closed engine, then memory (Go reports OOM as a trap
// or an exit), then exits, start failures, bad pointers and other traps.
func (p *Pool) classify(ctx, cctx context.Context, start time.Time, timeout time.Duration, err error, refused bool, stderr string) *Error {
	settle(cctx, time.Time{}) // a guest stopped at its deadline is a deadline, whatever it trapped with
	starting := false
	var se *startError
	if errors.As(err, &se) {
		starting, stderr, refused = true, se.stderr, se.refused
	}
	e := &Error{Err: err, Detail: err.Error()}
	if stderr != "" {
		e.Detail += "\nstderr: " + stderr
	}
	var ee *sys.ExitError
	var it *importTrap
	switch {
	case errors.Is(err, errOutputTooLarge):
		e.Kind = KindOutput
		e.Message = fmt.Sprintf("plugin output exceeds %d bytes", p.lim.MaxOutput)
	case ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded):
		e.Kind, e.Message = KindCanceled, "call canceled"
	case cctx.Err() != nil:
		e.Kind = KindDeadline
		e.Timeout = timeout
		if d, ok := cctx.Deadline(); ok && d.Sub(start) < e.Timeout {
			e.Timeout = d.Sub(start).Round(time.Millisecond)
		}
		e.Message = fmt.Sprintf("plugin timed out after %s", e.Timeout)
	case p.m.e.closed.Load():
		e.Kind, e.Message = KindClosed, "plugin is closed" // Engine.Close interrupted the call
	case outOfMemory(stderr) || refused:
		e.Kind = KindMemory
		e.Message = fmt.Sprintf("plugin ran out of memory (limit %s)", formatBytes(p.lim.Memory))
	case errors.As(err, &ee):
		e.Kind, e.ExitCode = KindExit, ee.ExitCode()
		e.Message = fmt.Sprintf("plugin exited with code %d", ee.ExitCode())
		if starting {
			e.Message = "plugin failed to start: " + e.Message
		}
	case starting:
		e.Kind = KindBadModule
		e.Message = "plugin failed to start: " + p.reason(err, stderr)
	case errors.As(err, &it) && errors.Is(it.err, errBadMemory):
		e.Kind = KindTrap
		e.Message = "plugin crashed: invalid memory range passed to " + it.fn
	case errors.As(err, &it):
		e.Kind = KindTrap // an Extism kernel function refused (http_request)
		e.Message = "plugin call failed: " + p.clean(it.Error())
	default:
		e.Kind = KindTrap
		e.Message = "plugin crashed: " + p.reason(err, stderr)
	}
	return e
}

// outOfMemory reports whether a guest's stderr says it ran out of memory
// (Go: "fatal error: out of memory", "runtime: out of memory: ..."). A
// refused memory.grow is the other sign (C: malloc returned NULL, then
// abort).
func outOfMemory(stderr string) bool {
	return strings.Contains(stderr, "out of memory")
}

// reason picks the line that explains a crash: the guest's own panic or
// fatal error line from stderr when there is one, else the first line of
// the wasm error; it is cleaned of host paths and trimmed.
func (p *Pool) reason(err error, stderr string) string {
	for line := range strings.Lines(stderr) {
		line = strings.TrimSpace(line)
		for _, pre := range []string{"panic: ", "fatal error: ", "runtime: ", "error: "} {
			if strings.HasPrefix(line, pre) {
				return p.clean(line)
			}
		}
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSuffix(msg, " (recovered by wazero)")
	msg = strings.TrimPrefix(msg, "wasm error: ")
	if msg == "" {
		msg = "unknown error"
	}
	return p.clean(msg)
}

// clean removes host paths (mounts, working and home directories) and
// control characters from s and trims it to maxMessage bytes.
func (p *Pool) clean(s string) string {
	for _, hp := range p.paths {
		if hp != "" && hp != "/" {
			s = strings.ReplaceAll(s, hp, "…")
		}
	}
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if len(s) > maxMessage {
		cut := maxMessage
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// hostPaths lists the host paths a message must not show, longest first so
// that a mount inside the working directory is replaced whole.
func hostPaths(sb Sandbox) []string {
	var ps []string
	for _, m := range sb.Mounts {
		ps = append(ps, m.HostPath)
	}
	if wd, err := os.Getwd(); err == nil {
		ps = append(ps, wd)
	}
	if h, err := os.UserHomeDir(); err == nil {
		ps = append(ps, h)
	}
	if c, err := os.UserCacheDir(); err == nil {
		ps = append(ps, c)
	}
	ps = append(ps, os.TempDir())
	slices.SortFunc(ps, func(a, b string) int { return len(b) - len(a) })
	return ps
}

func formatBytes(n uint64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
