package tasks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Status is the state of a task, as both protocol designs name it.
type Status string

// The statuses of a task. Working and InputRequired are live; the other
// three are terminal and never change again.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Cancelled     Status = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Cancelled
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	return s == Working || s == InputRequired || s.Terminal()
}

// Task is the record of one task. It is plain data: a Store keeps a copy
// and hands out copies, and it encodes to JSON and back unchanged.
type Task struct {
	// ID is the task id, assigned by Store.Create (NewID).
	ID string `json:"id"`
	// Principal is who the task is bound to: only requests of the same
	// principal see it. The engine chooses the names.
	Principal string `json:"principal"`
	// Status is the current status; StatusMessage optionally explains it.
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and UpdatedAt are set by the Store (UTC, millisecond
	// precision); UpdatedAt changes with every Update.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTL is how long the task is kept after CreatedAt; ExpiresAt is
	// CreatedAt+TTL (set by Create). Once ExpiresAt passes the task is
	// gone, whatever its status.
	TTL       time.Duration `json:"ttl"`
	ExpiresAt time.Time     `json:"expiresAt"`
	// PollInterval is the interval the server suggests between polls.
	PollInterval time.Duration `json:"pollInterval,omitempty"`
	// LeaseUntil, when set on a live task, is how long the process
	// running it vouches for it: that process renews it while the call
	// runs. A shared store shows a live task whose lease passed as failed
	// (Lapse), so that a replica that died does not leave its tasks
	// working for their whole ttl. The in-process store ignores it (its
	// tasks end with their process).
	LeaseUntil time.Time `json:"leaseUntil,omitzero"`

	// Method and Params are the request the task runs (e.g. tools/call
	// and its params), kept so that any process can resume it.
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	// Era tells the protocol design the task was created under
	// ("2025-11-25" or "2026-07-28"); the engine reads it back.
	Era string `json:"era,omitempty"`

	// Result is the result object of a completed task; Error the JSON-RPC
	// error object of a failed one.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
	// InputRequests are the requests still waiting for an answer while
	// the task is input_required (a JSON object keyed by request key);
	// InputResponses are answers the client sent that the task has not
	// consumed yet (also an object keyed by request key). State is opaque
	// data the runner keeps between rounds.
	InputRequests  json.RawMessage `json:"inputRequests,omitempty"`
	InputResponses json.RawMessage `json:"inputResponses,omitempty"`
	State          json.RawMessage `json:"state,omitempty"`
}

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.Params = cloneRaw(t.Params)
	c.Result = cloneRaw(t.Result)
	c.Error = cloneRaw(t.Error)
	c.InputRequests = cloneRaw(t.InputRequests)
	c.InputResponses = cloneRaw(t.InputResponses)
	c.State = cloneRaw(t.State)
	return &c
}

func cloneRaw(r json.RawMessage) json.RawMessage {
	if r == nil {
		return nil
	}
	return append(json.RawMessage(nil), r...)
}

// LapsedError is the JSON-RPC error object of a task whose lease passed.
const LapsedError = `{"code":-32603,"message":"the server running this task stopped: its lease passed without renewal"}`

// Lapse turns t, live with a lease that is not after now, into the
// failed task every reader of a shared store sees, and reports whether
// it did.
func (t *Task) Lapse(now time.Time) bool {
	if t.Status.Terminal() || t.LeaseUntil.IsZero() || now.Before(t.LeaseUntil) {
		return false
	}
	t.Status, t.StatusMessage = Failed, "the server running this task stopped (its lease passed without renewal)"
	t.Error = json.RawMessage(LapsedError)
	t.InputRequests, t.InputResponses, t.State = nil, nil, nil
	return true
}

// Errors a Store returns; callers branch on them with errors.Is.
var (
	// ErrNotFound: no such task for this principal (never created,
	// expired, or bound to another principal).
	ErrNotFound = errors.New("tasks: no such task")
	// ErrTooMany: creating the task would exceed a cap (Limits). The
	// error wraps one of ErrTooManyTotal and ErrTooManyForPrincipal.
	ErrTooMany = errors.New("tasks: too many live tasks")
	// ErrTerminal: the update would change a terminal status.
	ErrTerminal = errors.New("tasks: the task already ended")
	// ErrBadCursor: List got a cursor it did not hand out.
	ErrBadCursor = errors.New("tasks: invalid cursor")
	// ErrOverBudget: the update would take the tasks of the principal,
	// or of the store, past a byte budget (Limits). The error's text
	// names the budget.
	ErrOverBudget = errors.New("tasks: over the task byte budget")
)

// ErrBytesTotal and ErrBytesForPrincipal tell which byte budget refused a
// Create; both match ErrTooMany too.
var (
	ErrBytesTotal        = &capError{"tasks: the tasks on this server hold too many bytes"}
	ErrBytesForPrincipal = &capError{"tasks: the tasks of this caller hold too many bytes"}
)

// OverBudget returns the error of an update refused by a byte budget:
// it matches ErrOverBudget and says which budget, and how far.
func OverBudget(perPrincipal bool, size, used, limit int64) error {
	who := "this server"
	if perPrincipal {
		who = "this caller"
	}
	return fmt.Errorf("%w: %d more bytes would take the tasks of %s to %d bytes, over the budget of %d", ErrOverBudget, size, who, used+size, limit)
}

// ErrTooManyTotal and ErrTooManyForPrincipal tell which cap refused a
// Create; both match ErrTooMany too.
var (
	ErrTooManyTotal        = &capError{"tasks: too many live tasks on this server"}
	ErrTooManyForPrincipal = &capError{"tasks: too many live tasks for this caller"}
)

type capError struct{ msg string }

func (e *capError) Error() string        { return e.msg }
func (e *capError) Is(target error) bool { return target == ErrTooMany }

// Limits are the caps a Store enforces on live tasks (working or
// input_required); terminal tasks count against no cap and are dropped
// at their ExpiresAt. Zero means no cap.
//
// MaxBytes and MaxBytesPerPrincipal bound the bytes a store keeps for
// tasks (Size: arguments, results, errors, input requests and answers,
// state), live or ended, until they are dropped: a Create past them
// fails with an error matching ErrTooMany, an Update that would grow a
// task past them with one matching ErrOverBudget (nothing is stored).
type Limits struct {
	MaxLive              int   // in the whole store
	MaxLivePerPrincipal  int   // per principal
	MaxBytes             int64 // in the whole store
	MaxBytesPerPrincipal int64 // per principal
}

// Size is the number of bytes a store charges t against the byte
// budgets: its variable-length members.
func (t *Task) Size() int64 {
	return int64(len(t.Params) + len(t.Result) + len(t.Error) + len(t.InputRequests) +
		len(t.InputResponses) + len(t.State) + len(t.StatusMessage) + len(t.Method) + len(t.Principal))
}

// Check reports whether t, read back from a store kept outside this
// process, is a record a Store could have written for id: a valid
// status, a known era, a positive ttl and consistent times. A shared
// store is not trusted more than a client.
func (t *Task) Check(id string) error {
	switch {
	case t.ID != id:
		return fmt.Errorf("tasks: record of %q names task %q", id, t.ID)
	case !t.Status.Valid():
		return fmt.Errorf("tasks: record of %q has status %q", id, t.Status)
	case t.Era != "" && t.Era != "2025-11-25" && t.Era != "2026-07-28":
		return fmt.Errorf("tasks: record of %q has era %q", id, t.Era)
	case t.TTL <= 0 || t.CreatedAt.IsZero() || !t.ExpiresAt.Equal(t.CreatedAt.Add(t.TTL)) || t.UpdatedAt.Before(t.CreatedAt):
		return fmt.Errorf("tasks: record of %q has inconsistent times", id)
	case t.PollInterval < 0:
		return fmt.Errorf("tasks: record of %q has a negative poll interval", id)
	}
	for _, r := range []json.RawMessage{t.Params, t.Result, t.Error, t.InputRequests, t.InputResponses} {
		if len(r) > 0 && r[0] != '{' {
			return fmt.Errorf("tasks: record of %q has a member that is not an object", id)
		}
	}
	return nil
}

// Store keeps task records. Implementations are safe for concurrent use;
// every method takes a context first (a shared store does I/O) and
// returns copies the caller may keep.
type Store interface {
	// Create stores t as a new task: it assigns t.ID (NewID), sets
	// CreatedAt, UpdatedAt and ExpiresAt (from t.TTL, which must be
	// positive) and returns the stored copy. t.Status must be live
	// (working or input_required). It fails with an error matching
	// ErrTooMany when a cap would be exceeded.
	Create(ctx context.Context, t *Task) (*Task, error)
	// Get returns the task id of principal, or ErrNotFound.
	Get(ctx context.Context, principal, id string) (*Task, error)
	// Update applies fn to a copy of the task and stores the result
	// atomically (fn may be called again if the task changed meanwhile;
	// it must not have side effects). ID, Principal, CreatedAt, TTL and
	// ExpiresAt cannot change; UpdatedAt is set. An error from fn is
	// returned as is and nothing is stored. Changing the status of a
	// terminal task fails with ErrTerminal.
	Update(ctx context.Context, principal, id string, fn func(*Task) error) (*Task, error)
	// Cancel moves a live task to cancelled and returns it; a task that
	// already ended is returned unchanged (no error).
	Cancel(ctx context.Context, principal, id string) (*Task, error)
	// List returns up to limit tasks of principal, oldest first, starting
	// after the opaque cursor ("" for the first page), and the cursor of
	// the next page ("" after the last).
	List(ctx context.Context, principal, cursor string, limit int) ([]*Task, string, error)
	// Delete removes the task id of principal at once (a task the
	// engine created but never announced); ErrNotFound if there is none.
	Delete(ctx context.Context, principal, id string) error
	// Expire drops the tasks whose ExpiresAt is not after now and returns
	// how many it dropped. (Get never returns an expired task either.)
	Expire(ctx context.Context, now time.Time) (int, error)
}

// Change is a status change a Notifier carries.
type Change struct {
	ID        string    `json:"id"`
	Principal string    `json:"principal"`
	Status    Status    `json:"status"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Notifier tells every process sharing a Store that a task changed, so
// that the one running it learns of a cancel or of input responses, and
// the ones serving notification streams can forward the status. NewLocal
// serves one process; a shared store pairs with a pub/sub.
type Notifier interface {
	// Publish announces c to every subscriber (including those of this
	// process). It must not block for long.
	Publish(ctx context.Context, c Change) error
	// Subscribe calls fn for every published change until the returned
	// function is called. fn runs on the notifier's goroutine and must not
	// block.
	Subscribe(fn func(Change)) (unsubscribe func())
}

// NewID returns a new task id: 128 bits from crypto/rand, base64url
// without padding (22 characters).
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("tasks: crypto/rand failed: " + err.Error()) // never happens (Go 1.24+ rand.Read does not fail)
	}
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// Now is the time a Store records: UTC, truncated to milliseconds (the
// protocols carry milliseconds).
func Now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
