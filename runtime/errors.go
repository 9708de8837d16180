package runtime

import "time"

// Kind classifies why a call failed.
type Kind int

// Kinds of failure. Every error returned by Pool.Call is an *Error with one
// of these.
const (
	KindTrap      Kind = iota + 1 // a wasm trap, including a Go panic
	KindExit                      // proc_exit / os.Exit during a call
	KindMemory                    // out of linear memory
	KindDeadline                  // the call passed its Timeout
	KindCanceled                  // the caller's context was cancelled
	KindOutput                    // output over MaxOutput
	KindBusy                      // pool and queue full
	KindBadModule                 // the module cannot be run (missing export, bad start)
	KindClosed                    // the pool or engine is closed
	KindStatus                    // wasmcp_call returned a status other than 0 or 1 (ExitCode holds it)
)

var kindNames = [...]string{
	KindTrap:      "trap",
	KindExit:      "exit",
	KindMemory:    "memory",
	KindDeadline:  "deadline",
	KindCanceled:  "canceled",
	KindOutput:    "output",
	KindBusy:      "busy",
	KindBadModule: "bad_module",
	KindClosed:    "closed",
	KindStatus:    "status",
}

// String returns the snake_case name of k, for logs and metrics.
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "unknown"
}

// Error is a failed call. Message is short and safe to show a client (no
// host paths, no stack trace); Detail carries the full story for the server
// log.
type Error struct {
	Kind     Kind
	Message  string
	Detail   string
	ExitCode uint32        // KindExit (exit code) and KindStatus (status)
	Timeout  time.Duration // KindDeadline
	Err      error
}

// Error returns Message.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }
